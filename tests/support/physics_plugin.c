/* Every suite finds this build's physics plugin: the suites sit two folders below it (build/tests/<module>/),
 * one deeper than the library looks (beside the program and one folder up), so before main each is told
 * where it is (PLUSH_PHYSICS_LIB, as a host program linking libplush.a from elsewhere is), unless the
 * environment already says. Linked into every suite. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void find_physics_plugin(void)
{
    const char *set = getenv("PLUSH_PHYSICS_LIB");
    if (set && *set)
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) { /* the suite's name, its module folder, tests/ */
        char *slash = strrchr(exe, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/libplush_physics.so", exe);
    if (access(path, R_OK) == 0)
        setenv("PLUSH_PHYSICS_LIB", path, 0);
}
