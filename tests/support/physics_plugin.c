/* Every suite finds this build's physics plugin: the suites sit two folders below it (build/tests/<module>/),
 * one deeper than the library looks (beside the program and one folder up), so before main each is told
 * where it is (PLUSH_PHYSICS_LIB, as a host program linking libplush.a from elsewhere is), unless the
 * environment already says. Linked into every suite. */
#include "core/platform.h"
#include "physics/world_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void find_physics_plugin(void)
{
    const char *set = getenv("PLUSH_PHYSICS_LIB");
    if (set && *set)
        return;
    char dir[PLUSH__OS_PATH_MAX];
    if (!plush__os_exe_dir(dir, sizeof dir))
        return;
    for (int up = 0; up < 2; up++) { /* its module folder, tests/ */
        const char *slash = plush__os_last_separator(dir);
        if (!slash)
            return;
        dir[slash - dir] = '\0';
    }
    char path[PLUSH__OS_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" PLUSH_PHYSICS_LIBRARY, dir);
    plush__os_info st;
    if (plush__os_stat(path, true, &st))
        plush__os_setenv("PLUSH_PHYSICS_LIB", path);
}
