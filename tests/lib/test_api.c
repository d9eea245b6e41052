/* The public API a host program sees: the functions the headers in include/plush declare (plush/sys/ is the
 * extension-level rest). Each header's functions carry its name as their prefix (plush_<header>_..., a
 * header named scene_<part>.h the scene's plush_scene_...; core.h, anim.h and obj.h name the few types they
 * also hold), and the whole stays small: at most 150 functions. Read from the headers' text (comments
 * and preprocessor lines dropped, statements split at the top level), from the repository's root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MOST_FUNCTIONS = 150 };

/* The header's text without comments and preprocessor lines; NULL when it cannot be read. */
static char *plain_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *out = NULL;
    size_t n = 0, cap = 0;
    int c, prev = 0;
    bool comment = false, line_start = true, directive = false;
    while ((c = fgetc(f)) != EOF) {
        if (n + 2 >= cap) {
            cap = cap ? 2 * cap : 65536;
            char *grown = realloc(out, cap);
            if (!grown) {
                free(out);
                fclose(f);
                return NULL;
            }
            out = grown;
        }
        if (comment) {
            if (prev == '*' && c == '/')
                comment = false, c = ' ';
            prev = c;
            continue;
        }
        if (prev == '/' && c == '*') {
            comment = true, n--, prev = 0;
            continue;
        }
        if (line_start && c == '#')
            directive = true;
        if (c == '\n') {
            line_start = true;
            if (directive && prev != '\\')
                directive = false;
        } else if (!isspace(c)) {
            line_start = false;
        }
        prev = c;
        if (!directive)
            out[n++] = (char)c;
    }
    fclose(f);
    if (out)
        out[n] = '\0';
    return out;
}

/* Whether fn may be declared in the header called base (without ".h"). */
static bool prefix_fits(const char *base, const char *fn)
{
    static const char *const extra[][4] = {
        {"core", "plush_status_", "plush_diag_", "plush_buf_"},
        {"anim", "plush_motion_", NULL, NULL},
        {"obj", "plush_ply_", NULL, NULL},
    };
    char own[80];
    snprintf(own, sizeof own, "plush_%s", base);
    size_t len = strlen(own);
    if (strncmp(fn, own, len) == 0 && (fn[len] == '_' || fn[len] == '\0'))
        return true;
    if (strncmp(base, "scene_", 6) == 0 && strncmp(fn, "plush_scene_", 12) == 0)
        return true;
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        for (int k = 1; k < 4 && strcmp(base, extra[i][0]) == 0 && extra[i][k]; k++)
            if (strncmp(fn, extra[i][k], strlen(extra[i][k])) == 0)
                return true;
    return false;
}

/* Counts the functions the header declares and those whose prefix does not fit it (printed). */
static void count_header(const char *dir, const char *name, size_t *functions, size_t *misnamed)
{
    char path[512], base[64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(base, sizeof base, "%.*s", (int)(strlen(name) - 2), name);
    char *text = plain_text(path);
    assert_non_null(text);
    /* C++'s guard opens a block around everything: blanked, and its closing brace is let go below */
    for (char *g = strstr(text, "extern \"C\""); g; g = strstr(g, "extern \"C\"")) {
        char *brace = strchr(g, '{');
        if (!brace)
            break;
        memset(g, ' ', (size_t)(brace - g) + 1);
    }
    int depth = 0;
    char *statement = text;
    for (char *p = text; *p; p++) {
        if (*p == '{')
            depth++;
        else if (*p == '}' && depth > 0)
            depth--;
        if (*p != ';' || depth != 0)
            continue;
        *p = '\0';
        const char *s = statement;
        statement = p + 1;
        while (isspace((unsigned char)*s))
            s++;
        if (strncmp(s, "typedef", 7) == 0 || strncmp(s, "extern \"C\"", 10) == 0)
            continue;
        /* a declaration at the top level: the name before its first '(', or, for a function returning a
         * pointer to an array (`const float (*name(args))[3]`), the name right after "(*" */
        if (strchr(s, '{'))
            continue;
        const char *open = strchr(s, '(');
        if (!open)
            continue;
        const char *at, *end;
        if (open[1] == '*') {
            at = end = open + 2;
            while (isalnum((unsigned char)*end) || *end == '_')
                end++;
            if (*end != '(')
                continue;
        } else {
            end = open;
            while (end > s && isspace((unsigned char)end[-1]))
                end--;
            at = end;
            while (at > s && (isalnum((unsigned char)at[-1]) || at[-1] == '_'))
                at--;
        }
        if (strncmp(at, "plush_", 6) != 0)
            continue;
        char fn[128];
        snprintf(fn, sizeof fn, "%.*s", (int)(end - at), at);
        (*functions)++;
        if (!prefix_fits(base, fn)) {
            fprintf(stderr, "%s declares %s, not prefixed plush_%s\n", name, fn, base);
            (*misnamed)++;
        }
    }
    free(text);
}

static void test_public_headers(void **state)
{
    (void)state;
    const char *dir = "include/plush";
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t functions = 0, misnamed = 0, headers = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".h") != 0)
            continue;
        size_t before = functions;
        count_header(dir, e->d_name, &functions, &misnamed);
        headers++;
        fprintf(stderr, "  %-16s %zu functions\n", e->d_name, functions - before);
    }
    closedir(d);
    fprintf(stderr, "test_api: %zu public headers declare %zu functions (at most %d)\n", headers, functions,
            MOST_FUNCTIONS);
    assert_true(headers >= 15);
    assert_true(functions > 100); /* the reader found them: a broken parse would count none */
    assert_true(functions <= MOST_FUNCTIONS);
    assert_int_equal(misnamed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_public_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
