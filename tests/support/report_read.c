#include "report_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Static, so that a suite with its own copy of stb_image links too. */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#include "render/stb_quiet.h"
PLUSH_STB_QUIET_BEGIN
#include <stb/stb_image.h>
PLUSH_STB_QUIET_END
#if defined(__GNUC__)
/* stb_image declares functions static that this file never defines or uses; the compiler says so at the
 * end of the file, outside the push/pop above (as in src/render/texture.c) */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

size_t report_csv_rows(const char *text, const char *pair, csv_row *rows, size_t cap)
{
    size_t n = 0, plen = strlen(pair);
    for (const char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *p = line + 1, *comma = strchr(p, ',');
        if (!comma || strncmp(comma + 1, pair, plen) != 0 || comma[1 + plen] != ',')
            continue;
        assert_true(n < cap);
        rows[n].frame = (unsigned)strtoul(p, NULL, 10);
        const char *f = comma + 1 + plen;
        for (int k = 0; k < 11; k++) {
            assert_int_equal(*f, ',');
            f++;
            char *end;
            rows[n].v[k] = (*f == ',' || *f == '\n') ? NAN : strtod(f, &end);
            if (!isnan(rows[n].v[k]))
                f = end;
        }
        n++;
    }
    return n;
}

double report_csv_field(const char *line, int k)
{
    for (int i = 0; i < k; i++) {
        line += strcspn(line, ",\n");
        assert_int_equal(*line, ',');
        line++;
    }
    return *line == ',' || *line == '\n' ? NAN : strtod(line, NULL);
}

double report_number_after(const char *text, const char *label)
{
    const char *at = text ? strstr(text, label) : NULL;
    return at ? strtod(at + strlen(label), NULL) : NAN;
}

panel_content report_panel(const uint8_t *px, int w, int x0, int x1, int y0, int y1)
{
    size_t model = 0, coloured = 0, all = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++, all++) {
            const uint8_t *p = px + ((size_t)y * (size_t)w + (size_t)x) * 3;
            if (p[0] == 255 && p[1] == 255 && p[2] == 255)
                continue;
            model++;
            int lo = p[0] < p[1] ? p[0] : p[1], hi = p[0] > p[1] ? p[0] : p[1];
            lo = p[2] < lo ? p[2] : lo, hi = p[2] > hi ? p[2] : hi;
            coloured += hi - lo > 40;
        }
    return (panel_content){(double)model / (double)all, (double)coloured / (double)all};
}

uint8_t *report_load_png(const char *path, int *w, int *h)
{
    size_t len = 0;
    char *data = cli_read_all(path, &len);
    assert_non_null(data);
    int comp = 0;
    uint8_t *px = stbi_load_from_memory((const uint8_t *)data, (int)len, w, h, &comp, 3);
    free(data);
    assert_non_null(px);
    return px;
}

void report_png_free(uint8_t *px)
{
    stbi_image_free(px);
}

void report_check_plot(const char *path)
{
    int w = 0, h = 0;
    uint8_t *px = report_load_png(path, &w, &h);
    assert_int_equal(w, 900);
    assert_int_equal(h, 520);
    panel_content c = report_panel(px, w, 0, w, 0, h);
    assert_true(c.model > 0.01 && c.model < 0.5); /* axes, grid, text and lines on white */
    assert_true(c.coloured > 0.001);              /* the series' colours */
    report_png_free(px);
}
