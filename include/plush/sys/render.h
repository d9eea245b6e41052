/* Pictures without a display: RGB images, PNG files, meshes rendered by ray casting (Embree), plots.
 *
 *   plush_image img = {0};
 *   plush_image_create(640, 480, &img, &diag);
 *   plush_render_view view;
 *   plush_render_view_fit(&mesh, 640.0f / 480, &view);   // front view, the whole mesh in frame
 *   plush_render(&mesh, &view, &img, &diag);             // shaded, per-vertex colours optional
 *   plush_image_write_png(&img, "frame.png", &diag);     // atomic
 *   plush_image_free(&img);
 *
 * Coordinates are PMX's (left-handed, Y up; a model faces -Z, so the front view looks along +Z).
 * Extension-level API (as libgit2's sys/): what the preview, the compare's pictures, the glTF textures and
 * the tests draw with; a host program gets pictures through the exports (plush/scene_sink.h).
 */
#ifndef PLUSH_SYS_RENDER_H
#define PLUSH_SYS_RENDER_H

#include "plush/core.h"
#include "plush/sys/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_image {
    int width, height;
    uint8_t *rgb;                 /* width * height * 3 bytes, rows top to bottom */
} plush_image;

/* The largest width or height an image may have (a row of RGB stays far inside an int for the PNG
 * writer, and a picture that size is 3 GB: anything larger is a mistake). */
enum { PLUSH_IMAGE_MAX_SIZE = 32768 };

/* A white image. Fails with PLUSH_E_ARGUMENT for a size outside 1..PLUSH_IMAGE_MAX_SIZE (out is then
 * zeroed, so plush_image_free on it is safe). */
plush_status plush_image_create(int width, int height, plush_image *out, plush_diag *diag);
/* Frees the pixels and zeroes the image; NULL or a zeroed image is a no-op. */
void plush_image_free(plush_image *image);
/* Sets every pixel to rgb. */
void plush_image_fill(plush_image *image, const uint8_t rgb[3]);
/* Copies src into dst at (x, y) (clipped; negative x, y allowed; src may be dst itself). */
void plush_image_blit(plush_image *dst, const plush_image *src, int x, int y);
/* Appends the image as PNG bytes (stb_image_write, zlib level 8, no metadata: the same pixels always give
 * the same bytes). On failure out keeps its old size. */
plush_status plush_image_encode_png(const plush_image *image, plush_buf *out, plush_diag *diag);
/* The same for any pixels: width x height, channels (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA) bytes each, rows
 * top to bottom. */
plush_status plush_image_encode_png_pixels(const uint8_t *pixels, int width, int height, int channels, plush_buf *out,
                                           plush_diag *diag);
/* The most texels a byte of a BMP, TGA, PNG or JPEG file can stand for (see plush_image_texture_info). */
enum { PLUSH_IMAGE_MAX_PACKING = 16384 };
/* What a texture file's header says, read without decoding it: *width and *height, and *jpeg when it is a
 * JPEG (a glTF file embeds that as it is). PLUSH_E_FORMAT when the bytes do not start as a BMP, TGA, PNG or
 * JPEG picture stb_image reads (what MMD models carry), promise no texel, or promise more than
 * PLUSH_IMAGE_MAX_PACKING texels per byte of the file; PLUSH_E_RANGE for a side over PLUSH_IMAGE_MAX_SIZE. */
plush_status plush_image_texture_info(const uint8_t *data, size_t size, int *width, int *height, bool *jpeg,
                                      plush_diag *diag);
/* A texture decoded for drawing: RGBA, 4 bytes a texel, rows top to bottom (texture coordinate v = 0 is the
 * top row, as PMX has it). cutout: some texel has alpha below 128, so plush_render lets rays through there. */
typedef struct plush_render_texture {
    int width, height;
    uint8_t *rgba;
    bool cutout;
} plush_render_texture;

/* Decodes a texture file's bytes (BMP, TGA, PNG or JPEG, as plush_image_texture_info reads them) into
 * out (malloc'd texels; free with plush_render_texture_free). A picture wider or taller than max_side is
 * refused before decoding with PLUSH_E_RANGE; bytes stb_image cannot read fail with PLUSH_E_FORMAT. On
 * failure out is zeroed. */
plush_status plush_image_decode_texture(const uint8_t *data, size_t size, int max_side, plush_render_texture *out,
                                        plush_diag *diag);
/* Appends decoded texels as PNG bytes a glTF file can embed: RGBA when some texel is not opaque
 * (*translucent), RGB otherwise. On failure out keeps its old size. */
plush_status plush_image_encode_texture(const plush_render_texture *texture, plush_buf *out, bool *translucent,
                                        plush_diag *diag);
/* Frees the texels and zeroes the texture; NULL or a zeroed one is a no-op. */
void plush_render_texture_free(plush_render_texture *texture);
/* PNG, written atomically (temporary file, then rename). diag->file is set to path when empty. */
plush_status plush_image_write_png(const plush_image *image, const char *path, plush_diag *diag);

/* The colour for t in [0, 1] (clamped) on a blue -> pale yellow -> red ramp (ColorBrewer RdYlBu, 11
 * stops, reversed, interpolated linearly): perceptually even steps, readable with the common colour
 * vision deficiencies, lightness highest in the middle. For error pictures: t = error / scale, blue is
 * small, red is large. NaN gives mid grey. rgb in 0..1. */
void plush_colormap(float t, float rgb[3]);

typedef struct plush_render_mesh {
    size_t vertex_count;
    const float (*positions)[3];
    const float (*normals)[3];    /* NULL: flat shading from the faces */
    size_t index_count;           /* 3 per triangle */
    const uint32_t *indices;
    const float (*colors)[3];     /* per vertex, 0..1; NULL: light grey */
    const float (*face_colors)[3];/* per triangle, 0..1, instead of colors (a material's colour); may be NULL */
    /* Textures, used when uvs, face_textures and textures are all given: a face whose entry is a texture
     * shows that texture's texel at the hit's interpolated UV (bilinear, repeating) times its colour. */
    const float (*uvs)[2];        /* per vertex; (0, 0) is the texture's top left */
    const int32_t *face_textures; /* per triangle: an index into textures, or -1 for none */
    const plush_render_texture *textures;
    size_t texture_count;
    /* Per triangle: nonzero when it is seen from its front only (a PMX material without the double-sided
     * flag, as MMD culls it): the side (b - a) x (c - a) points to, a, b, c its corners in order. NULL:
     * every triangle is seen from both sides. */
    const uint8_t *face_one_sided;
} plush_render_mesh;

typedef struct plush_render_view {
    float eye[3], target[3], up[3];
    float fov_degrees;            /* vertical field of view */
} plush_render_view;

/* A front view (looking along +Z, Y up, 30 degrees vertical field of view) whose frustum holds the bounding
 * box of the vertices the faces use, with an 8% margin, for pictures of width / height = aspect (a bad
 * aspect counts as 1). With no finite vertex to fit it gives MMD's default camera (eye (0, 10, -45)
 * looking at (0, 10, 0)). */
void plush_render_view_fit(const plush_render_mesh *mesh, float aspect, plush_render_view *out);
/* The same for a box [lo, hi]: side-by-side pictures that must share one camera (bones | proxy | direct)
 * fit the box around all of them. */
void plush_render_view_fit_box(const float lo[3], const float hi[3], float aspect, plush_render_view *out);
/* ---- a camera that follows (previews) -------------------------------------------------------------------
 *
 *   plush_render_follow follow = {0};
 *   each picture: box of what to show [lo, hi] this frame;
 *                 plush_render_follow_update(&follow, lo, hi, seconds_since_the_last, aspect, &view);
 *
 * A front view of a smoothed box, so that a moving character stays in the picture, large, without the
 * picture shaking with every swing of an arm. The smoothed box eases towards the current box grown by
 * PLUSH_RENDER_FOLLOW_SLACK of its largest side (half on each side), with the time constant
 * PLUSH_RENDER_FOLLOW_SECONDS, in size and centre; but it grows at once as far as it must to hold the
 * current box, and is pushed along when the current box reaches its edge. So the current
 * box is always in the picture, a box that stands still comes to rest framed, a box that moves at constant
 * speed is followed at that speed, and a box that only jitters inside the slack moves the camera by a small
 * share of the jitter. The smoothed box's height (or width, for a wide box) fills PLUSH_RENDER_FOLLOW_FILL
 * of the picture's at its centre's depth (its near face never more than the whole picture). */
#define PLUSH_RENDER_FOLLOW_SECONDS 0.5f  /* time constant of the smoothing */
#define PLUSH_RENDER_FOLLOW_SLACK 0.08f   /* room around the current box, a share of its largest side */
#define PLUSH_RENDER_FOLLOW_FILL 0.92f    /* share of the picture the smoothed box fills */

typedef struct plush_render_follow {
    float center[3], half[3];     /* the smoothed box */
    bool started;                 /* false: the next update frames its box alone */
} plush_render_follow;

/* Moves the smoothed box seconds (>= 0; anything else counts as 0) towards the box [lo, hi] and writes the
 * view that frames it for pictures of width / height = aspect (a bad aspect counts as 1), as above. The
 * first update (started false) frames [lo, hi] with its slack at once. An empty or non-finite box leaves the
 * smoothed box as it is (before the first one: MMD's default camera, as plush_render_view_fit_box gives). */
void plush_render_follow_update(plush_render_follow *follow, const float lo[3], const float hi[3], float seconds,
                                float aspect, plush_render_view *out);
/* Ray casts one ray per pixel centre (Embree, loaded on first use like the binding's BVH; a brute-force
 * fallback is not offered: fails with PLUSH_E_LIBRARY when Embree cannot be loaded). Background
 * stays as it is in image; hit pixels get colour * (0.3 + 0.7 * max(0, -n . view direction)): a headlight
 * shining along the view direction, both sides of every face lit, n the vertex normals interpolated with
 * the hit's barycentrics (the face normal where normals is NULL or they cancel out), colour likewise
 * interpolated from colors, times the texel where the face has a texture. A texel with alpha below 0.5 of
 * a cutout texture lets the ray through to what lies behind (Embree's intersection filter; hair strands,
 * lashes); other alpha is ignored: nothing is blended. Faces with a non-finite corner are left out. Single-threaded and
 * deterministic: the same input gives the same bytes. Fails (image untouched) with PLUSH_E_ARGUMENT for a
 * NULL mesh, view or image, an index count that is not a multiple of 3, or a view with the eye on the
 * target, up along the view direction, a non-finite vector or a field of view outside (0, 180) degrees;
 * with PLUSH_E_RANGE (section "face", its index) for a vertex or texture index out of range, with
 * PLUSH_E_ARGUMENT for a texture without texels or of a size outside 1..PLUSH_IMAGE_MAX_SIZE. A mesh with no face
 * draws nothing and succeeds. */
plush_status plush_render(const plush_render_mesh *mesh, const plush_render_view *view, plush_image *image,
                          plush_diag *diag);
/* ---- a stream: one mesh drawn frame after frame (previews) ----------------------------------------------
 *
 *   plush_render_stream *rs = NULL;
 *   plush_render_stream_create(&mesh, &rs, &diag);       // the faces are fixed from here on
 *   each frame: mesh.positions = this frame's;
 *               plush_image_fill(&img, background); plush_render_stream_draw(rs, &mesh, &view, &img, &diag);
 *   plush_render_stream_destroy(rs);
 *
 * The same shading as plush_render, cheaper per picture: the BVH is built once and refitted to each frame's
 * positions (rebuilt only when a corner becomes or stops being non-finite), and Embree's buffers are reused.
 * A picture can differ from plush_render's only where two faces tie at a pixel. Both trace only the pixels
 * inside the projection of the drawn triangles' bounds. */
typedef struct plush_render_stream plush_render_stream;

/* Checks the mesh as plush_render does and builds its BVH (PLUSH_E_LIBRARY without Embree). */
plush_status plush_render_stream_create(const plush_render_mesh *mesh, plush_render_stream **out, plush_diag *diag);
/* Draws mesh (the same vertex and face counts, faces and textures as at creation; positions, normals and
 * colours may change) into image. Fails with PLUSH_E_ARGUMENT for other counts or a bad view or image (image untouched). */
plush_status plush_render_stream_draw(plush_render_stream *stream, const plush_render_mesh *mesh,
                                      const plush_render_view *view, plush_image *image, plush_diag *diag);
/* NULL is a no-op. */
void plush_render_stream_destroy(plush_render_stream *stream);

/* True when Embree can be loaded for plush_render (it is, on the first call, once per process); false with
 * PLUSH_E_LIBRARY in diag (may be NULL). Callers can ask before starting a long run. */
bool plush_render_available(plush_diag *diag);

/* ---- drawing and line charts (src/render/plot.c) ------------------------------------------------------
 *
 *   plush_plot_series s[] = {{.name = "proxy", .x = frames, .y = rms, .count = n}};
 *   plush_plot plot = {.title = "error over time", .x_label = "frame", .y_label = "RMS distance",
 *                      .series = s, .series_count = 1, .y_from_zero = true};
 *   plush_plot_draw(&plot, &img, &diag);                    // img from plush_image_create, 800x500 say
 *
 * Text uses a built-in 5x7 bitmap font: digits, letters (lowercase shows as capitals), space and
 * . , - + : / ( ) % = _ | < > ' * # [ ] ! ?, and U+00D7 (x); anything else shows as a hollow box. */

/* A filled rectangle (clipped). */
void plush_image_rect(plush_image *image, int x, int y, int w, int h, const uint8_t rgb[3]);
/* Draws UTF-8 text with its top left at (x, y), each font pixel scale x scale (clipped); returns the
 * width it advanced. */
int plush_image_text(plush_image *image, int x, int y, const char *text, int scale, const uint8_t rgb[3]);
/* The width plush_image_text would draw. */
int plush_image_text_width(const char *text, int scale);

typedef struct plush_plot_series {
    const char *name;             /* legend text */
    const double *x, *y;          /* count points; a point with a non-finite coordinate leaves a gap */
    size_t count;
    int colour;                   /* 1 + its index in the palette (PLUSH_PLOT_COLOURS); 0: the series' order.
                                   * Past the palette its colours come again dashed (PLUSH_PLOT_COLOURS + 1:
                                   * the first colour, dashed), then solid again */
} plush_plot_series;

/* Distinct colours a plot has (past them, the same colours dashed). */
#define PLUSH_PLOT_COLOURS 10

typedef struct plush_plot {
    const char *title, *x_label, *y_label;  /* each may be NULL */
    const plush_plot_series *series;
    size_t series_count;
    bool markers;                 /* a dot on every point (for charts of a few points) */
    bool y_from_zero;             /* the y axis starts at 0 (or below, for negative data) */
    bool y_log;                   /* a logarithmic y axis (ticks at powers of ten, at most six decades below the
                                     highest; points <= 0 or below the lowest leave gaps) */
} plush_plot;

/* A line chart filling the whole image: white background, axes with round ticks (1, 2 or 5 times a power of
 * ten, or powers of ten on a log axis) and their numbers, light grid lines, each series a line in its own
 * colour (Okabe-Ito's palette and three more; a series may name its own, so that one thing keeps one colour
 * over several charts), and the legend in a column right of the plot area, where it covers no line. A chart
 * with no finite point says "no data". Fails with PLUSH_E_ARGUMENT for an image smaller than 200x150 or a
 * series with points but no arrays. */
plush_status plush_plot_draw(const plush_plot *plot, plush_image *image, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
