/* Meshes rendered by ray casting: one primary ray per pixel through Embree's BVH, shaded with a headlight.
 *
 * Embree is opened on first use through the core loader the binding uses too (core/loader.h: dlopen, never
 * linked, so processes that never render never map it). Each call builds its own device, scene and BVH
 * and releases them before returning: a picture is a one-off, and nothing is kept between calls.
 *
 * Shading is deliberately plain, for comparing shapes rather than for beauty: colour * (ambient + diffuse *
 * max(0, -n . forward)), a headlight shining along the view direction. A directional light rather than a
 * point at the eye keeps a flat face one flat shade, so a change of shade between two pictures means a
 * change of shape. Both sides of a triangle are lit (the normal is turned towards the viewer), because
 * simulated and exported meshes do not always agree on winding; a triangle the mesh marks one-sided (a PMX
 * material without the double-sided flag) is seen from its front only, as MMD culls it, so a cape's inner
 * layer lying on its outer one shows inside only. A texture multiplies the colour; its
 * alpha only cuts holes (below one half, through Embree's intersection filter), since blending would need
 * the hits sorted along each ray and a preview is for judging shapes. */
#include "plush/sys/render.h"
#include "plush/sys/core.h"
#include "core/common.h"

#include "core/loader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RENDER_DEFAULT_FOV = 30 };
static const float render_ambient = 0.3f, render_diffuse = 0.7f;
static const float render_grey[3] = {0.8f, 0.8f, 0.8f};
/* Room around the fitted bounding box, as a factor on the distance that makes it touch the frame. */
static const float render_fit_margin = 1.08f;

static float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static bool normalize3(float v[3])
{
    float len2 = dot3(v, v);
    if (!(len2 > 0) || !isfinite(len2))
        return false;
    float inv = 1.0f / sqrtf(len2);
    for (int k = 0; k < 3; k++)
        v[k] *= inv;
    return true;
}

void plush_render_view_fit_box(const float lo[3], const float hi[3], float aspect, plush_render_view *out)
{
    /* MMD's own default camera, for a box with nothing in it. */
    *out = (plush_render_view){.eye = {0, 10, -45}, .target = {0, 10, 0}, .up = {0, 1, 0},
                               .fov_degrees = RENDER_DEFAULT_FOV};
    if (!lo || !hi || !plush__finite3(lo) || !plush__finite3(hi) || lo[0] > hi[0] || lo[1] > hi[1] || lo[2] > hi[2])
        return;
    if (!(aspect > 0) || !isfinite(aspect))
        aspect = 1;
    float c[3], half[3];
    for (int k = 0; k < 3; k++) {
        c[k] = 0.5f * lo[k] + 0.5f * hi[k];
        half[k] = 0.5f * hi[k] - 0.5f * lo[k];
    }
    /* Seen from in front of the box's near face, every point of the box projects no farther from the
     * axis than the near face's corners do, so fitting that face fits the box. */
    float t = tanf(0.5f * (float)RENDER_DEFAULT_FOV * (float)(M_PI / 180.0));
    float d = fmaxf(half[1] / t, half[0] / (t * aspect)) * render_fit_margin;
    if (!(d > 0))
        d = half[2] > 0 ? half[2] : 1; /* a point or a line along Z: any distance shows it */
    memcpy(out->target, c, sizeof c);
    out->eye[0] = c[0];
    out->eye[1] = c[1];
    out->eye[2] = lo[2] - d;
}

void plush_render_view_fit(const plush_render_mesh *mesh, float aspect, plush_render_view *out)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    if (mesh && mesh->positions && mesh->indices) {
        /* Only what the triangles use: a vertex no face draws does not widen the picture. */
        for (size_t i = 0; i < mesh->index_count; i++) {
            uint32_t v = mesh->indices[i];
            if (v >= mesh->vertex_count || !plush__finite3(mesh->positions[v]))
                continue;
            for (int k = 0; k < 3; k++) {
                lo[k] = fminf(lo[k], mesh->positions[v][k]);
                hi[k] = fmaxf(hi[k], mesh->positions[v][k]);
            }
        }
    }
    plush_render_view_fit_box(lo, hi, aspect, out); /* an empty box (lo > hi) gives the default view */
}

/* The camera as per-pixel ray directions are made from it: dir = forward + sx * right + sy * up. */
typedef struct camera {
    float eye[3], forward[3], right[3], up[3];
    float tan_y, tan_x;
} camera;

static plush_status make_camera(const plush_render_view *view, int width, int height, camera *cam,
                                plush_diag *diag)
{
    if (!plush__finite3(view->eye) || !plush__finite3(view->target) || !plush__finite3(view->up))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "view", -1, "eye, target or up is not finite");
    if (!(view->fov_degrees > 0 && view->fov_degrees < 180))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "view", -1, "field of view %g degrees out of range",
                               (double)view->fov_degrees);
    memcpy(cam->eye, view->eye, sizeof cam->eye);
    for (int k = 0; k < 3; k++)
        cam->forward[k] = view->target[k] - view->eye[k];
    if (!normalize3(cam->forward))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "view", -1, "eye and target are the same point");
    /* PMX is left-handed: looking along +Z with +Y up, +X is to the right, which is up x forward. */
    cross3(view->up, cam->forward, cam->right);
    if (!normalize3(cam->right))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "view", -1, "up is parallel to the view direction");
    cross3(cam->forward, cam->right, cam->up);
    cam->tan_y = tanf(0.5f * view->fov_degrees * (float)(M_PI / 180.0));
    cam->tan_x = cam->tan_y * (float)width / (float)height;
    return PLUSH_OK;
}

static bool textured(const plush_render_mesh *mesh)
{
    return mesh->uvs && mesh->face_textures && mesh->textures && mesh->texture_count > 0;
}

/* Triangle t's texture, NULL when it has none. The index is checked again here because a stream's draw
 * does not re-check the faces it was given (it trusts them to be the creation's). */
static const plush_render_texture *face_texture(const plush_render_mesh *mesh, uint32_t t)
{
    if (!textured(mesh))
        return NULL;
    int32_t i = mesh->face_textures[t];
    return i >= 0 && (size_t)i < mesh->texture_count ? &mesh->textures[i] : NULL;
}

static int wrap(float i, int n)
{
    float m = fmodf(i, (float)n);
    int r = (int)(m < 0 ? m + (float)n : m);
    return r >= 0 && r < n ? r : 0;
}

/* Texture tex at the UV that barycentric weights w give on triangle t, bilinear between the four nearest
 * texel centres with the texture repeating (as MMD samples); rgba in 0..1. */
static void sample(const plush_render_mesh *mesh, const plush_render_texture *tex, uint32_t t, const float w[3],
                   float rgba[4])
{
    const uint32_t *f = mesh->indices + 3 * (size_t)t;
    float u = 0, v = 0;
    for (int c = 0; c < 3; c++)
        u += w[c] * mesh->uvs[f[c]][0], v += w[c] * mesh->uvs[f[c]][1];
    float x = u * (float)tex->width - 0.5f, y = v * (float)tex->height - 0.5f;
    if (!isfinite(x) || !isfinite(y)) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 1;
        return;
    }
    float fx = floorf(x), fy = floorf(y), ax = x - fx, ay = y - fy;
    int x0 = wrap(fx, tex->width), y0 = wrap(fy, tex->height);
    int x1 = x0 + 1 < tex->width ? x0 + 1 : 0, y1 = y0 + 1 < tex->height ? y0 + 1 : 0;
    const uint8_t *row0 = tex->rgba + 4 * (size_t)y0 * (size_t)tex->width;
    const uint8_t *row1 = tex->rgba + 4 * (size_t)y1 * (size_t)tex->width;
    for (int k = 0; k < 4; k++) {
        float top = (1 - ax) * row0[4 * x0 + k] + ax * row0[4 * x1 + k];
        float bottom = (1 - ax) * row1[4 * x0 + k] + ax * row1[4 * x1 + k];
        rgba[k] = ((1 - ay) * top + ay * bottom) * (1.0f / 255.0f);
    }
}

static plush_status check_mesh(const plush_render_mesh *mesh, plush_diag *diag)
{
    if (!mesh)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1, "no mesh to render");
    if ((mesh->vertex_count && !mesh->positions) || (mesh->index_count && !mesh->indices))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1, "missing positions or indices");
    if (mesh->index_count % 3 != 0)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1,
                               "%zu face indices is not a whole number of triangles", mesh->index_count);
    /* Embree numbers vertices and triangles with 32 bits. */
    if (mesh->vertex_count > UINT32_MAX || mesh->index_count / 3 > UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "mesh", -1, "%zu vertices, %zu triangles is too many",
                               mesh->vertex_count, mesh->index_count / 3);
    for (size_t i = 0; i < mesh->index_count; i++)
        if (mesh->indices[i] >= mesh->vertex_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)(i / 3),
                                   "vertex %u out of range (%zu vertices)", mesh->indices[i], mesh->vertex_count);
    if (!textured(mesh))
        return PLUSH_OK;
    for (size_t t = 0; t < mesh->texture_count; t++) {
        const plush_render_texture *tex = &mesh->textures[t];
        if (!tex->rgba || tex->width <= 0 || tex->height <= 0 || tex->width > PLUSH_IMAGE_MAX_SIZE ||
            tex->height > PLUSH_IMAGE_MAX_SIZE)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "texture", (int64_t)t, "no texels or a bad size");
    }
    for (size_t f = 0; f < mesh->index_count / 3; f++)
        if (mesh->face_textures[f] < -1 || mesh->face_textures[f] >= (int64_t)mesh->texture_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)f, "texture %d out of range (%zu textures)",
                                   mesh->face_textures[f], mesh->texture_count);
    return PLUSH_OK;
}

/* What one render holds: the Embree objects, and primID -> triangle for the triangles it could draw. A
 * stream's renderer also keeps its geometry and Embree's vertex buffer, to refit the BVH to new positions. */
typedef struct renderer {
    const plush__embree *rtc;
    RTCDevice device;
    RTCScene scene;
    RTCGeometry geom;             /* kept by a stream only */
    float *vertices;              /* Embree's vertex buffer (3 floats per vertex) */
    uint32_t *triangle;
    size_t count;
    float lo[3], hi[3];           /* bounds of the drawn triangles' corners, for the traced rectangle */
    const plush_render_mesh *mesh;/* the one being drawn, for the hit filter */
} renderer;

static void renderer_release(renderer *r)
{
    if (r->geom)
        r->rtc->rtcReleaseGeometry(r->geom);
    if (r->scene)
        r->rtc->rtcReleaseScene(r->scene);
    if (r->device)
        r->rtc->rtcReleaseDevice(r->device);
    free(r->triangle);
}

/* Copies positions into Embree's buffer (a non-finite one as zero: the buffer holds no NaN) and sets the
 * bounds to the corners of the drawn triangles. */
static void copy_positions(renderer *r, const plush_render_mesh *mesh)
{
    float *v = r->vertices;
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        if (plush__finite3(mesh->positions[i]))
            memcpy(v + 3 * i, mesh->positions[i], 3 * sizeof(float));
        else
            memset(v + 3 * i, 0, 3 * sizeof(float));
    }
    for (int k = 0; k < 3; k++)
        r->lo[k] = INFINITY, r->hi[k] = -INFINITY;
    for (size_t p = 0; p < r->count; p++) {
        const uint32_t *f = mesh->indices + 3 * (size_t)r->triangle[p];
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++) {
                float x = v[3 * (size_t)f[c] + (size_t)k];
                r->lo[k] = x < r->lo[k] ? x : r->lo[k];
                r->hi[k] = x > r->hi[k] ? x : r->hi[k];
            }
    }
}

/* The triangles with three finite corners go in (a blown-up vertex hides its faces rather than spoiling
 * the BVH's bounds); vertices no kept triangle uses are copied as zero so the buffer holds no NaN. */
static plush_status fill_geometry(renderer *r, const plush_render_mesh *mesh, RTCGeometry geom,
                                  plush_diag *diag)
{
    float *v = r->rtc->rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                              3 * sizeof(float), mesh->vertex_count);
    uint32_t *idx = r->rtc->rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                   3 * sizeof(uint32_t), r->count);
    if (!v || !idx)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "render", -1, "embree: cannot allocate the mesh: %s",
                               plush__embree_error_text(r->rtc->rtcGetDeviceError(r->device)));
    r->vertices = v;
    for (size_t p = 0; p < r->count; p++)
        memcpy(idx + 3 * p, mesh->indices + 3 * (size_t)r->triangle[p], 3 * sizeof(uint32_t));
    copy_positions(r, mesh);
    return PLUSH_OK;
}

/* Whether a ray along dir meets triangle t from its back (the side its winding's normal turns away from). */
static bool seen_from_back(const renderer *r, uint32_t t, const float dir[3])
{
    const uint32_t *f = r->mesh->indices + 3 * (size_t)t;
    const float *a = r->vertices + 3 * (size_t)f[0], *b = r->vertices + 3 * (size_t)f[1],
                *c = r->vertices + 3 * (size_t)f[2];
    float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]}, n[3];
    cross3(u, v, n);
    return dot3(n, dir) > 0;
}

/* Embree's intersection filter for meshes with cutout textures or one-sided faces: a hit where the texel's
 * alpha is below one half, or on the back of a one-sided face, is refused, and the ray goes on to the next
 * surface. Only geometries with either get it: the filter is called on every candidate hit, and other
 * meshes should not pay for it. */
static void hit_filter(const struct RTCFilterFunctionNArguments *args)
{
    const renderer *r = args->geometryUserPtr;
    const float *hit = (const float *)args->hit, *ray = (const float *)args->ray;
    const unsigned *ids = (const unsigned *)args->hit;
    for (unsigned i = 0; i < args->N; i++) {
        unsigned prim = ids[5 * args->N + i]; /* RTCHitN's layout: Ng x, y, z, u, v, primID, each N wide */
        if (args->valid[i] != -1 || prim >= r->count)
            continue;
        uint32_t t = r->triangle[prim];
        if (r->mesh->face_one_sided && r->mesh->face_one_sided[t]) {
            /* RTCRayN's layout: origin x, y, z, tnear, direction x, y, z, ..., each N wide */
            const float dir[3] = {ray[4 * args->N + i], ray[5 * args->N + i], ray[6 * args->N + i]};
            if (seen_from_back(r, t, dir)) {
                args->valid[i] = 0;
                continue;
            }
        }
        const plush_render_texture *tex = face_texture(r->mesh, t);
        if (!tex || !tex->cutout)
            continue;
        float u = hit[3 * args->N + i], v = hit[4 * args->N + i], w[3] = {1.0f - u - v, u, v}, rgba[4];
        sample(r->mesh, tex, t, w, rgba);
        if (rgba[3] < 0.5f)
            args->valid[i] = 0;
    }
}

static bool needs_filter(const plush_render_mesh *mesh)
{
    for (size_t t = 0; textured(mesh) && t < mesh->texture_count; t++)
        if (mesh->textures[t].cutout)
            return true;
    for (size_t t = 0; mesh->face_one_sided && t < mesh->index_count / 3; t++)
        if (mesh->face_one_sided[t])
            return true;
    return false;
}

/* Builds the BVH of the triangles with finite corners. A dynamic renderer (a stream) keeps its geometry and
 * asks for a BVH that can be refitted when only the positions change. */
static plush_status renderer_build(renderer *r, const plush_render_mesh *mesh, bool dynamic, plush_diag *diag)
{
    size_t triangles = mesh->index_count / 3;
    r->triangle = malloc((triangles ? triangles : 1) * sizeof *r->triangle);
    if (!r->triangle)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "render", -1, "out of memory");
    for (size_t t = 0; t < triangles; t++) {
        const uint32_t *f = mesh->indices + 3 * t;
        if (plush__finite3(mesh->positions[f[0]]) && plush__finite3(mesh->positions[f[1]]) && plush__finite3(mesh->positions[f[2]]))
            r->triangle[r->count++] = (uint32_t)t;
    }
    if (r->count == 0)
        return PLUSH_OK;
    if ((r->rtc = plush__embree_load(diag)) == NULL)
        return PLUSH_E_LIBRARY;
    if ((r->device = r->rtc->rtcNewDevice("threads=1")) == NULL)
        return plush_diag_fail(diag, PLUSH_E_LIBRARY, -1, "render", -1, "embree: cannot create a device");
    if ((r->scene = r->rtc->rtcNewScene(r->device)) == NULL)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "render", -1, "embree: cannot create a scene");
    RTCGeometry geom = r->rtc->rtcNewGeometry(r->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    if (!geom)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "render", -1, "embree: cannot create a triangle geometry");
    if (dynamic) {
        r->rtc->rtcSetSceneFlags(r->scene, RTC_SCENE_FLAG_DYNAMIC);
        r->rtc->rtcSetSceneBuildQuality(r->scene, RTC_BUILD_QUALITY_LOW);
        r->rtc->rtcSetGeometryBuildQuality(geom, RTC_BUILD_QUALITY_REFIT);
    }
    if (needs_filter(mesh)) {
        r->rtc->rtcSetGeometryUserData(geom, r);
        r->rtc->rtcSetGeometryIntersectFilterFunction(geom, hit_filter);
    }
    plush_status st = fill_geometry(r, mesh, geom, diag);
    if (st == PLUSH_OK) {
        r->rtc->rtcCommitGeometry(geom);
        r->rtc->rtcAttachGeometry(r->scene, geom);
    }
    if (dynamic && st == PLUSH_OK)
        r->geom = geom;
    else
        r->rtc->rtcReleaseGeometry(geom);
    if (st != PLUSH_OK)
        return st;
    r->rtc->rtcCommitScene(r->scene);
    enum RTCError e = r->rtc->rtcGetDeviceError(r->device);
    if (e != RTC_ERROR_NONE)
        return plush_diag_fail(diag, e == RTC_ERROR_OUT_OF_MEMORY ? PLUSH_E_NOMEM : PLUSH_E_LIBRARY, -1,
                               "render", -1, "embree: cannot build the BVH: %s", plush__embree_error_text(e));
    return PLUSH_OK;
}

static uint8_t to_byte(float c)
{
    c = c > 0 ? (c < 1 ? c : 1) : 0; /* NaN becomes 0 too */
    return (uint8_t)(c * 255.0f + 0.5f);
}

/* The lit colour of a hit on triangle t at barycentrics (u, v) for a ray along dir, lit along the unit
 * vector light. */
static void shade(const plush_render_mesh *mesh, uint32_t t, float u, float v, const float dir[3],
                  const float light_dir[3], uint8_t out[3])
{
    const uint32_t *f = mesh->indices + 3 * (size_t)t;
    const float *p0 = mesh->positions[f[0]], *p1 = mesh->positions[f[1]], *p2 = mesh->positions[f[2]];
    float w[3] = {1.0f - u - v, u, v};
    float e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    float e2[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
    float ng[3], n[3] = {0, 0, 0};
    cross3(e1, e2, ng);
    bool smooth = false;
    if (mesh->normals) {
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++)
                n[k] += w[c] * mesh->normals[f[c]][k];
        smooth = normalize3(n);
    }
    if (!smooth) {
        memcpy(n, ng, sizeof n);
        if (!normalize3(n))
            n[0] = -light_dir[0], n[1] = -light_dir[1], n[2] = -light_dir[2]; /* a sliver: lit head-on */
    }
    /* The side the ray sees decides which way the normal faces: turn the geometric normal towards the ray's
     * origin, then the shading normal to the same side as it (a mesh wound inside out still lights). */
    float side = dot3(ng, dir) > 0 ? -1.0f : 1.0f;
    if (side * dot3(n, ng) < 0)
        n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
    float lambert = -dot3(n, light_dir);
    float light = render_ambient + render_diffuse * (lambert > 0 ? lambert : 0);
    float colour[3];
    const plush_render_texture *tex = face_texture(mesh, t);
    if (mesh->face_colors) {
        memcpy(colour, mesh->face_colors[t], sizeof colour);
    } else if (mesh->colors) {
        for (int k = 0; k < 3; k++)
            colour[k] = w[0] * mesh->colors[f[0]][k] + w[1] * mesh->colors[f[1]][k] + w[2] * mesh->colors[f[2]][k];
    } else {
        memcpy(colour, render_grey, sizeof colour);
    }
    if (tex) {
        float rgba[4];
        sample(mesh, tex, t, w, rgba);
        for (int k = 0; k < 3; k++)
            colour[k] *= rgba[k];
    }
    for (int k = 0; k < 3; k++)
        out[k] = to_byte(colour[k] * light);
}

/* The pixels a ray through the bounds [lo, hi] can pass: the rectangle around the projections of the box's
 * corners, widened by two pixels against rounding; the whole image when a corner is not in front of the
 * eye. Pixels outside it see nothing, so tracing only inside it gives the same picture. */
typedef struct pixel_rect {
    int x0, y0, x1, y1;           /* x0 <= x < x1, y0 <= y < y1 */
} pixel_rect;

static pixel_rect screen_rect(const camera *cam, const float lo[3], const float hi[3], int width, int height)
{
    pixel_rect all = {0, 0, width, height};
    if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]))
        return (pixel_rect){0, 0, 0, 0}; /* no drawn corner */
    float px0 = INFINITY, py0 = INFINITY, px1 = -INFINITY, py1 = -INFINITY;
    for (int c = 0; c < 8; c++) {
        float p[3] = {c & 1 ? hi[0] : lo[0], c & 2 ? hi[1] : lo[1], c & 4 ? hi[2] : lo[2]};
        float d[3] = {p[0] - cam->eye[0], p[1] - cam->eye[1], p[2] - cam->eye[2]};
        float z = dot3(d, cam->forward);
        if (!(z > 1e-6f))
            return all;
        float sx = dot3(d, cam->right) / (z * cam->tan_x), sy = dot3(d, cam->up) / (z * cam->tan_y);
        float x = 0.5f * (sx + 1.0f) * (float)width, y = 0.5f * (1.0f - sy) * (float)height;
        px0 = fminf(px0, x), px1 = fmaxf(px1, x), py0 = fminf(py0, y), py1 = fmaxf(py1, y);
    }
    if (!(isfinite(px0) && isfinite(px1) && isfinite(py0) && isfinite(py1)))
        return all;
    pixel_rect r = {(int)fmaxf(floorf(px0) - 2, 0), (int)fmaxf(floorf(py0) - 2, 0),
                    (int)fminf(ceilf(px1) + 2, (float)width), (int)fminf(ceilf(py1) + 2, (float)height)};
    if (r.x1 < r.x0 || r.y1 < r.y0)
        return (pixel_rect){0, 0, 0, 0};
    return r;
}

/* Rays go to Embree a run of pixels at a time (rtcIntersect1M): adjacent primary rays are coherent, and
 * Embree traces such a stream as packets, which costs less per ray than one rtcIntersect1 each. */
enum { TRACE_RUN = 64 };

static void trace_rows(const renderer *r, const plush_render_mesh *mesh, const camera *cam, plush_image *image,
                       pixel_rect rect)
{
    struct RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    context.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
    float inv_w = 2.0f / (float)image->width, inv_h = 2.0f / (float)image->height;
    struct RTCRayHit run[TRACE_RUN];
    for (int y = rect.y0; y < rect.y1; y++) {
        float sy = (1.0f - ((float)y + 0.5f) * inv_h) * cam->tan_y;
        uint8_t *row = image->rgb + (size_t)y * (size_t)image->width * 3;
        for (int x0 = rect.x0; x0 < rect.x1; x0 += TRACE_RUN) {
            int n = rect.x1 - x0 < TRACE_RUN ? rect.x1 - x0 : TRACE_RUN;
            for (int i = 0; i < n; i++) {
                float sx = (((float)(x0 + i) + 0.5f) * inv_w - 1.0f) * cam->tan_x;
                float dir[3];
                for (int k = 0; k < 3; k++)
                    dir[k] = cam->forward[k] + sx * cam->right[k] + sy * cam->up[k];
                normalize3(dir);
                struct RTCRayHit *rh = &run[i];
                rh->ray.org_x = cam->eye[0];
                rh->ray.org_y = cam->eye[1];
                rh->ray.org_z = cam->eye[2];
                rh->ray.dir_x = dir[0];
                rh->ray.dir_y = dir[1];
                rh->ray.dir_z = dir[2];
                rh->ray.tnear = 0;
                rh->ray.tfar = INFINITY;
                rh->ray.time = 0;
                rh->ray.mask = UINT32_MAX;
                rh->ray.id = 0;
                rh->ray.flags = 0;
                rh->hit.geomID = RTC_INVALID_GEOMETRY_ID;
                rh->hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
            }
            r->rtc->rtcIntersect1M(r->scene, &context, run, (unsigned)n, sizeof run[0]);
            for (int i = 0; i < n; i++) {
                const struct RTCRayHit *rh = &run[i];
                if (rh->hit.geomID == RTC_INVALID_GEOMETRY_ID || rh->hit.primID >= r->count)
                    continue;
                const float dir[3] = {rh->ray.dir_x, rh->ray.dir_y, rh->ray.dir_z};
                shade(mesh, r->triangle[rh->hit.primID], rh->hit.u, rh->hit.v, dir, cam->forward,
                      row + 3 * (size_t)(x0 + i));
            }
        }
    }
}

plush_status plush_render(const plush_render_mesh *mesh, const plush_render_view *view, plush_image *image,
                          plush_diag *diag)
{
    plush_status st = check_mesh(mesh, diag);
    if (st != PLUSH_OK)
        return st;
    if (!view)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "view", -1, "no view to render from");
    if (!image || !image->rgb || image->width <= 0 || image->height <= 0 || image->width > PLUSH_IMAGE_MAX_SIZE ||
        image->height > PLUSH_IMAGE_MAX_SIZE)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no image to render into");
    camera cam;
    st = make_camera(view, image->width, image->height, &cam, diag);
    if (st != PLUSH_OK)
        return st;
    renderer r = {.mesh = mesh};
    st = renderer_build(&r, mesh, false, diag);
    if (st == PLUSH_OK && r.count > 0)
        trace_rows(&r, mesh, &cam, image, screen_rect(&cam, r.lo, r.hi, image->width, image->height));
    renderer_release(&r);
    return st;
}

bool plush_render_available(plush_diag *diag)
{
    return plush__embree_load(diag) != NULL;
}

/* ---- a stream: one mesh, many pictures ------------------------------------------------------------ */

struct plush_render_stream {
    renderer r;
    size_t vertex_count, index_count;
    bool all;                     /* every triangle is in the BVH (no corner was non-finite at the build) */
};

plush_status plush_render_stream_create(const plush_render_mesh *mesh, plush_render_stream **out, plush_diag *diag)
{
    if (!out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "stream", -1, "no stream to create");
    *out = NULL;
    plush_status st = check_mesh(mesh, diag);
    if (st != PLUSH_OK)
        return st;
    plush_render_stream *s = calloc(1, sizeof *s);
    if (!s)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "render", -1, "out of memory");
    s->vertex_count = mesh->vertex_count;
    s->index_count = mesh->index_count;
    st = renderer_build(&s->r, mesh, true, diag);
    if (st != PLUSH_OK) {
        plush_render_stream_destroy(s);
        return st;
    }
    s->all = s->r.count == mesh->index_count / 3;
    *out = s;
    return PLUSH_OK;
}

static bool all_finite(const plush_render_mesh *mesh)
{
    for (size_t i = 0; i < mesh->vertex_count; i++)
        if (!plush__finite3(mesh->positions[i]))
            return false;
    return true;
}

/* New positions: refit the BVH when every triangle stays in it, rebuild it when the set of drawable
 * triangles changes (a corner became or stopped being non-finite). */
static plush_status stream_update(plush_render_stream *s, const plush_render_mesh *mesh, plush_diag *diag)
{
    renderer *r = &s->r;
    if (s->all && r->geom && all_finite(mesh)) {
        copy_positions(r, mesh);
        r->rtc->rtcUpdateGeometryBuffer(r->geom, RTC_BUFFER_TYPE_VERTEX, 0);
        r->rtc->rtcCommitGeometry(r->geom);
        r->rtc->rtcCommitScene(r->scene);
        enum RTCError e = r->rtc->rtcGetDeviceError(r->device);
        if (e != RTC_ERROR_NONE)
            return plush_diag_fail(diag, e == RTC_ERROR_OUT_OF_MEMORY ? PLUSH_E_NOMEM : PLUSH_E_LIBRARY, -1,
                                   "render", -1, "embree: cannot refit the BVH: %s", plush__embree_error_text(e));
        return PLUSH_OK;
    }
    renderer_release(r);
    memset(r, 0, sizeof *r);
    plush_status st = renderer_build(r, mesh, true, diag);
    s->all = st == PLUSH_OK && r->count == mesh->index_count / 3;
    return st;
}

plush_status plush_render_stream_draw(plush_render_stream *s, const plush_render_mesh *mesh,
                                      const plush_render_view *view, plush_image *image, plush_diag *diag)
{
    if (!s || !mesh || !view)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "stream", -1, "no stream, mesh or view");
    if (mesh->vertex_count != s->vertex_count || mesh->index_count != s->index_count ||
        (mesh->vertex_count && !mesh->positions) || (mesh->index_count && !mesh->indices))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1,
                               "%zu vertices and %zu face indices, the stream was made for %zu and %zu",
                               mesh->vertex_count, mesh->index_count, s->vertex_count, s->index_count);
    if (!image || !image->rgb || image->width <= 0 || image->height <= 0 || image->width > PLUSH_IMAGE_MAX_SIZE ||
        image->height > PLUSH_IMAGE_MAX_SIZE)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", -1, "no image to render into");
    camera cam;
    plush_status st = make_camera(view, image->width, image->height, &cam, diag);
    if (st == PLUSH_OK)
        st = stream_update(s, mesh, diag);
    s->r.mesh = mesh;
    if (st == PLUSH_OK && s->r.count > 0)
        trace_rows(&s->r, mesh, &cam, image, screen_rect(&cam, s->r.lo, s->r.hi, image->width, image->height));
    return st;
}

void plush_render_stream_destroy(plush_render_stream *s)
{
    if (!s)
        return;
    renderer_release(&s->r);
    free(s);
}
