/* Reading what plush compare writes: metrics.csv rows, numbers in report.md, and the PNG pictures and
 * plots (what a panel holds: background, grey model, coloured error).
 *
 *   csv_row rows[200];
 *   size_t n = report_csv_rows(csv, "proxy,bones", rows, 200);   // rows[i].v[0] is the pair's rms
 *   report_check_plot("out/error.png");
 *
 * Needs cmocka (helpers fail the running test on a malformed file). */
#ifndef PLUSH_TESTS_REPORT_READ_H
#define PLUSH_TESTS_REPORT_READ_H

#include <stddef.h>
#include <stdint.h>

/* A row of metrics.csv for one pair: its frame and the 11 fields after "run_a,run_b" (empty: NaN). */
typedef struct csv_row {
    unsigned frame;
    double v[11];
} csv_row;

/* Rows of the CSV text for the pair "a,b", in order; fails the test past cap. */
size_t report_csv_rows(const char *text, const char *pair, csv_row *rows, size_t cap);
/* Field k of a CSV line (NaN when empty). */
double report_csv_field(const char *line, int k);
/* The number after label in text (NaN when the label is not there). */
double report_number_after(const char *text, const char *label);

/* What a picture panel holds: pixels that are not background, and of those the coloured ones (not grey). */
typedef struct panel_content {
    double model, coloured; /* shares of the panel's pixels */
} panel_content;

/* An RGB PNG (3 bytes a pixel); fails the test when it cannot be read. Free with report_png_free. */
uint8_t *report_load_png(const char *path, int *w, int *h);
void report_png_free(uint8_t *px);
/* The content of the panel x0..x1, y0..y1 of an image w pixels wide. */
panel_content report_panel(const uint8_t *px, int w, int x0, int x1, int y0, int y1);
/* A plot as plush draws them: 900 x 520, axes, grid, text and coloured lines on white. */
void report_check_plot(const char *path);

#endif
