/* Line charts and text drawn straight into a plush_image: axes, numbered ticks, several series, a legend.
 * The rasteriser is deliberately small (pen-width lines, filled rectangles, a 5x7 bitmap font): plots are
 * for reading numbers off, and a font library would be a dependency for a few dozen glyphs. */
#include "plush/sys/render.h"
#include "plush/sys/core.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the font: 5 columns x 7 rows, bit 4 is the left column -------------------------------------- */

typedef struct glyph {
    char c;
    uint8_t rows[7];
} glyph;

static const glyph font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}}, {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}}, {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}}, {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}}, {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}}, {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}}, {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}}, {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}}, {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}}, {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}}, {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}}, {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}}, {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {' ', {0, 0, 0, 0, 0, 0, 0}},                      {'.', {0, 0, 0, 0, 0, 0x0C, 0x0C}},
    {',', {0, 0, 0, 0, 0x0C, 0x04, 0x08}},             {'-', {0, 0, 0, 0x0E, 0, 0, 0}},
    {'+', {0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0}},       {':', {0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0}},
    {'/', {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10}}, {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}}, {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}},
    {'=', {0, 0, 0x1F, 0, 0x1F, 0, 0}},                {'_', {0, 0, 0, 0, 0, 0, 0x1F}},
    {'|', {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}}, {'<', {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}},
    {'>', {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}}, {'\'', {0x04, 0x04, 0x08, 0, 0, 0, 0}},
    {'*', {0, 0x04, 0x15, 0x0E, 0x15, 0x04, 0}},       {'#', {0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A}},
    {'[', {0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E}}, {']', {0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E}},
    {'!', {0x04, 0x04, 0x04, 0x04, 0x04, 0, 0x04}},    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04}},
};

/* An unknown character shows as a hollow box, so a missing glyph is visible rather than silently gone. */
static const uint8_t box_rows[7] = {0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F};

static const uint8_t *glyph_rows(int c)
{
    c = toupper(c);
    for (size_t i = 0; i < sizeof font / sizeof *font; i++)
        if (font[i].c == c)
            return font[i].rows;
    return box_rows;
}

enum { GLYPH_W = 5, GLYPH_H = 7, ADVANCE = 6 };
/* The most decades a log axis spans. */
enum { PLOT_LOG_DECADES = 6 };

void plush_image_rect(plush_image *im, int x, int y, int w, int h, const uint8_t rgb[3])
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > im->width ? im->width : x + w, y1 = y + h > im->height ? im->height : y + h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            memcpy(im->rgb + ((size_t)yy * (size_t)im->width + (size_t)xx) * 3, rgb, 3);
}

/* The next character of UTF-8 text: ASCII as it is, U+00D7 (multiplication sign) as 'x', anything else
 * as 0 (the box). Advances *s past the whole sequence. */
static int next_char(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    if (p[0] < 0x80) {
        (*s)++;
        return p[0];
    }
    size_t n = 1;
    while ((p[n] & 0xC0) == 0x80)
        n++;
    *s += n;
    return n == 2 && p[0] == 0xC3 && p[1] == 0x97 ? 'x' : 0;
}

int plush_image_text_width(const char *text, int scale)
{
    int n = 0;
    for (const char *s = text; *s;) {
        next_char(&s);
        n++;
    }
    return n ? (n * ADVANCE - 1) * scale : 0;
}

int plush_image_text(plush_image *im, int x, int y, const char *text, int scale, const uint8_t rgb[3])
{
    if (scale < 1)
        scale = 1;
    int x0 = x;
    for (const char *s = text; *s;) {
        const uint8_t *rows = glyph_rows(next_char(&s));
        for (int r = 0; r < GLYPH_H; r++)
            for (int col = 0; col < GLYPH_W; col++)
                if (rows[r] & (0x10 >> col))
                    plush_image_rect(im, x + col * scale, y + r * scale, scale, scale, rgb);
        x += ADVANCE * scale;
    }
    return x - x0;
}

/* A line of pen width w (a w x w square swept along Bresenham's line), dashed when dash > 0: dash pen steps
 * drawn, dash left out, counted on from *phase (a polyline's segments continue one pattern). */
static void dashed_line(plush_image *im, int x0, int y0, int x1, int y1, int w, const uint8_t rgb[3], int dash,
                        int *phase)
{
    int dx = x1 > x0 ? x1 - x0 : x0 - x1, dy = y1 > y0 ? y0 - y1 : y1 - y0;
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (;;) {
        if (dash <= 0 || (*phase)++ / dash % 2 == 0)
            plush_image_rect(im, x0 - w / 2, y0 - w / 2, w, w, rgb);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy)
            err += dy, x0 += sx;
        if (e2 <= dx)
            err += dx, y0 += sy;
    }
}

static void line(plush_image *im, int x0, int y0, int x1, int y1, int w, const uint8_t rgb[3])
{
    int phase = 0;
    dashed_line(im, x0, y0, x1, y1, w, rgb, 0, &phase);
}

/* ---- charts ------------------------------------------------------------------------------------- */

/* Distinct on white and for the common colour vision deficiencies (Okabe-Ito), black, then three more of
 * other lightness (a dark red, a grey, an olive) for charts of many series. */
static const uint8_t palette[PLUSH_PLOT_COLOURS][3] = {{0, 114, 178},  {213, 94, 0},   {0, 158, 115}, {204, 121, 167},
                                                       {230, 159, 0},  {86, 180, 233}, {0, 0, 0},     {136, 34, 85},
                                                       {128, 128, 128}, {120, 120, 0}};
enum { PALETTE = PLUSH_PLOT_COLOURS };

static const uint8_t *series_colour(const plush_plot *plot, size_t s)
{
    int c = plot->series[s].colour;
    return palette[(c > 0 ? (size_t)(c - 1) : s) % PALETTE];
}

/* Past the palette the colours come again dashed, so that no two of the first 2 x PALETTE series look
 * alike: the dash length in pen steps, 0 for a solid line. */
static int series_dash(const plush_plot *plot, size_t s, int scale)
{
    int c = plot->series[s].colour;
    size_t i = c > 0 ? (size_t)(c - 1) : s;
    return i / PALETTE % 2 ? 6 * scale : 0;
}

/* A round step (1, 2 or 5 times a power of ten) giving about `want` intervals over span. */
static double nice_step(double span, int want)
{
    double raw = span / want, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void format_tick(double v, double step, char *buf, size_t size)
{
    if (fabs(v) < step * 1e-6)
        v = 0;
    double a = fabs(v);
    if (a != 0 && (a >= 1e6 || a < 1e-3))
        snprintf(buf, size, "%.2g", v);
    else {
        /* as many decimals as the step needs */
        int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
        snprintf(buf, size, "%.*f", dec > 6 ? 6 : dec, v);
    }
}

typedef struct range {
    double lo, hi;
} range;

/* A point's y as the axis places it (its log on a log axis), NaN where it has no place. */
static double axis_y(const plush_plot *plot, double y)
{
    return plot->y_log ? (y > 0 ? log10(y) : NAN) : y;
}

static bool data_range(const plush_plot *plot, range *x, range *y)
{
    x->lo = y->lo = INFINITY;
    x->hi = y->hi = -INFINITY;
    for (size_t s = 0; s < plot->series_count; s++)
        for (size_t i = 0; i < plot->series[s].count; i++) {
            double px = plot->series[s].x[i], py = axis_y(plot, plot->series[s].y[i]);
            if (!isfinite(px) || !isfinite(py))
                continue;
            x->lo = fmin(x->lo, px), x->hi = fmax(x->hi, px);
            y->lo = fmin(y->lo, py), y->hi = fmax(y->hi, py);
        }
    return isfinite(x->lo);
}

/* Widens a range to whole ticks (and a flat one to something visible). */
static double tick_range(range *r, bool from_zero)
{
    if (from_zero && r->lo > 0)
        r->lo = 0;
    if (r->hi - r->lo <= fabs(r->hi) * 1e-9) {
        double pad = r->hi != 0 ? fabs(r->hi) * 0.5 : 1;
        r->lo = from_zero && r->lo >= 0 ? r->lo : r->lo - pad;
        r->hi += pad;
    }
    double step = nice_step(r->hi - r->lo, 5);
    r->lo = floor(r->lo / step + 1e-9) * step;
    r->hi = ceil(r->hi / step - 1e-9) * step;
    return step;
}

plush_status plush_plot_draw(const plush_plot *plot, plush_image *im, plush_diag *diag)
{
    if (!plot || !im || !im->rgb)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no plot or no image");
    if (im->width < 200 || im->height < 150)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "a %dx%d image is too small for a plot (200x150 at least)",
                               im->width, im->height);
    for (size_t s = 0; s < plot->series_count; s++)
        if (plot->series[s].count && (!plot->series[s].x || !plot->series[s].y))
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, (int64_t)s, "series %zu has no data", s);
    static const uint8_t white[3] = {255, 255, 255}, black[3] = {0, 0, 0}, grid[3] = {225, 225, 225},
                         grey[3] = {90, 90, 90};
    plush_image_rect(im, 0, 0, im->width, im->height, white);
    const int sc = im->width >= 600 ? 2 : 1, ch = GLYPH_H * sc;
    /* plot area: title and y label above, tick numbers left, tick numbers and x label below, the legend's
     * column right (at most two fifths of the width: longer names are cut there) */
    int widest = 0;
    for (size_t s = 0; s < plot->series_count; s++) {
        int w = plush_image_text_width(plot->series[s].name ? plot->series[s].name : "", sc);
        widest = w > widest ? w : widest;
    }
    int legend_w = plot->series_count ? widest + 28 * sc + 12 : 0;
    if (legend_w > 2 * im->width / 5)
        legend_w = 2 * im->width / 5;
    int left = 12 * ADVANCE * sc / 2 + 14, right = im->width - 4 * ADVANCE * sc - 4 - (legend_w ? legend_w + 8 : 0),
        top = 3 * ch + 14, bottom = im->height - 2 * ch - 22;
    if (plot->title)
        plush_image_text(im, (im->width - plush_image_text_width(plot->title, sc)) / 2, 6, plot->title, sc, black);
    if (plot->y_label)
        plush_image_text(im, 8, top - ch - 8, plot->y_label, sc, grey);
    if (plot->x_label)
        plush_image_text(im, left + (right - left - plush_image_text_width(plot->x_label, sc)) / 2,
                         im->height - ch - 6, plot->x_label, sc, grey);
    range xr, yr;
    if (!data_range(plot, &xr, &yr)) {
        const char *none = "no data";
        plush_image_text(im, (left + right - plush_image_text_width(none, sc)) / 2, (top + bottom) / 2, none, sc, grey);
        line(im, left, bottom, right, bottom, 1, black);
        line(im, left, top, left, bottom, 1, black);
        return PLUSH_OK;
    }
    double xs = tick_range(&xr, false), ys;
    if (plot->y_log) {
        /* whole decades, at most PLOT_LOG_DECADES of them below the top: a point further down (a pair of runs
         * that agree to the last digits) leaves a gap rather than squeezing every other line to the top */
        yr.lo = floor(yr.lo + 1e-9), yr.hi = ceil(yr.hi - 1e-9);
        if (yr.hi <= yr.lo)
            yr.hi = yr.lo + 1;
        if (yr.lo < yr.hi - PLOT_LOG_DECADES)
            yr.lo = yr.hi - PLOT_LOG_DECADES;
        ys = 1;
    } else {
        ys = tick_range(&yr, plot->y_from_zero);
    }
#define PX(v) (left + (int)lround(((v) - xr.lo) / (xr.hi - xr.lo) * (right - left)))
#define PY(v) (bottom - (int)lround(((v) - yr.lo) / (yr.hi - yr.lo) * (bottom - top)))
    char buf[32];
    for (int k = 0;; k++) {
        double v = yr.lo + k * ys;
        if (v > yr.hi + ys * 1e-6)
            break;
        int py = PY(v);
        line(im, left, py, right, py, 1, grid);
        line(im, left - 5, py, left, py, 1, black);
        if (plot->y_log)
            snprintf(buf, sizeof buf, "%g", pow(10, v));
        else
            format_tick(v, ys, buf, sizeof buf);
        plush_image_text(im, left - 8 - plush_image_text_width(buf, sc), py - ch / 2, buf, sc, black);
    }
    for (int k = 0;; k++) {
        double v = xr.lo + k * xs;
        if (v > xr.hi + xs * 1e-6)
            break;
        int px = PX(v);
        line(im, px, top, px, bottom, 1, grid);
        line(im, px, bottom, px, bottom + 5, 1, black);
        format_tick(v, xs, buf, sizeof buf);
        plush_image_text(im, px - plush_image_text_width(buf, sc) / 2, bottom + 9, buf, sc, black);
    }
    line(im, left, bottom, right, bottom, 1, black);
    line(im, left, top, left, bottom, 1, black);
    for (size_t s = 0; s < plot->series_count; s++) {
        const plush_plot_series *se = &plot->series[s];
        const uint8_t *c = series_colour(plot, s);
        int dash = series_dash(plot, s, sc), phase = 0;
        bool have = false;
        int lx = 0, ly = 0;
        for (size_t i = 0; i < se->count; i++) {
            double ay = axis_y(plot, se->y[i]);
            if (!isfinite(se->x[i]) || !isfinite(ay) || ay < yr.lo - 1e-9) {
                have = false; /* a gap */
                continue;
            }
            int px = PX(se->x[i]), py = PY(ay);
            if (have)
                dashed_line(im, lx, ly, px, py, sc, c, dash, &phase);
            if (plot->markers)
                plush_image_rect(im, px - 2 * sc, py - 2 * sc, 4 * sc + 1, 4 * sc + 1, c);
            lx = px, ly = py, have = true;
        }
    }
#undef PX
#undef PY
    /* legend: its own column right of the plot area, so it covers no line; a name too long for the column
     * is cut at a whole character */
    if (plot->series_count) {
        int row = ch + 6, bw = legend_w, bh = (int)plot->series_count * row + 8;
        int bx = im->width - bw - 4, by = top;
        plush_image_rect(im, bx, by, bw, bh, grey);
        plush_image_rect(im, bx + 1, by + 1, bw - 2, bh - 2, white);
        int room = bw - 18 - 20 * sc;
        for (size_t s = 0; s < plot->series_count; s++) {
            int y = by + 5 + (int)s * row;
            int dash = series_dash(plot, s, sc);
            int piece = dash ? dash : 20 * sc; /* the swatch dashed as its line: dash pixels on, dash off */
            for (int k = 0; k < 20 * sc; k += 2 * piece)
                plush_image_rect(im, bx + 6 + k, y + ch / 2 - sc, piece < 20 * sc - k ? piece : 20 * sc - k, 2 * sc,
                                 series_colour(plot, s));
            char name[96];
            snprintf(name, sizeof name, "%s", plot->series[s].name ? plot->series[s].name : "");
            while (name[0] && plush_image_text_width(name, sc) > room) {
                size_t n = strlen(name);
                do
                    n--;
                while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80);
                name[n] = '\0';
            }
            plush_image_text(im, bx + 12 + 20 * sc, y, name, sc, black);
        }
    }
    return PLUSH_OK;
}
