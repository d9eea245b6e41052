/* Export "gltf": OUTDIR/<model>_plush.glb, one binary glTF 2.0 file playing the same animation as the bake.
 *
 * The mesh and skin are the baked model's (plush_scene_bake_model: cage materials removed, the model's
 * bones, plush_root and one pseudo-bone per proxy triangle). Each frame the sink records every joint's
 * pose as plush computed it: the model's bones from the scene's bone pipeline (IK, append and physics
 * included: glTF has none of them, so the final transforms are what a runtime must reproduce) and each
 * pseudo-bone from the bake's key of that frame. Those globals become local translations and rotations
 * (parent global^-1 * global) in glTF's convention (sink_gltf_internal.h), one LINEAR key per frame at
 * time frame / fps; joints that never leave their rest pose get no channel. The vertex morphs that are
 * ever non-zero (after group morphs) become morph targets with their effective weights animated. */
#include "core/geom.h"
#include "scene/bake_internal.h"
#include "scene/sink_gltf_internal.h"
#include "scene/sink_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gltf_sink {
    plush_scene_sink base;
    plush_scene_bake *bake;
    const plush_pmx_model *source;
    char *path, *model_file;
    float fps;
    bool stretch;
    size_t bones;                 /* baked bones: source bones + plush_root + pseudo-bones */
    size_t morphs;                /* source (= baked) morph count */
    double (*globals)[12];        /* this frame's bone globals: rotation columns 0..8, translation 9..11 */
    /* recorded keys, key-major (key k of joint j at k * bones + j - 1), grown per frame */
    float (*translations)[3], (*rotations)[4];
    float *morph_weights;         /* key k: morphs entries */
    float *times;
    size_t keys, capacity;
    size_t warnings;              /* UV / material morphs the motion uses (not in glTF) */
} gltf_sink;

/* A bone's global as (rotation, translation) in double, from a cglm column-major mat4. */
static void global_from_mat4(const float m[16], double g[12])
{
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++)
            g[3 * c + r] = m[4 * c + r];
    for (int r = 0; r < 3; r++)
        g[9 + r] = m[12 + r];
}

/* A pseudo-bone's global: its rest centroid moved by the key, rotated by the key (the root at the origin). */
static void global_from_key(const float centroid[3], const float key[7], double g[12])
{
    double x = key[3], y = key[4], z = key[5], w = key[6];
    double n = sqrt(x * x + y * y + z * z + w * w);
    if (n > 0)
        x /= n, y /= n, z /= n, w /= n;
    double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),
                   2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),
                   2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y)};
    memcpy(g, m, sizeof m);
    for (int r = 0; r < 3; r++)
        g[9 + r] = (double)centroid[r] + key[r];
}

static bool grow(gltf_sink *s)
{
    if (s->keys < s->capacity)
        return true;
    size_t cap = s->capacity ? s->capacity * 2 : 64;
    void *t = realloc(s->translations, cap * s->bones * sizeof *s->translations);
    if (t)
        s->translations = t;
    void *r = realloc(s->rotations, cap * s->bones * sizeof *s->rotations);
    if (r)
        s->rotations = r;
    void *w = realloc(s->morph_weights, cap * (s->morphs ? s->morphs : 1) * sizeof *s->morph_weights);
    if (w)
        s->morph_weights = w;
    void *tm = realloc(s->times, cap * sizeof *s->times);
    if (tm)
        s->times = tm;
    if (!t || !r || !w || !tm)
        return false;
    s->capacity = cap;
    return true;
}

/* Joint bone's key: local = parent^-1 * global, mirrored into glTF's frame. */
static void local_key(const gltf_sink *s, const plush_pmx_model *baked_bones_of, size_t bone, float t[3], float q[4],
                      const float prev[4])
{
    const double *g = s->globals[bone];
    int32_t parent = bone < s->source->bone_count ? baked_bones_of->bones[bone].parent
                                                  : (bone == s->source->bone_count ? -1 : (int32_t)s->source->bone_count);
    double r[9], d[3];
    if (parent < 0) {
        memcpy(r, g, sizeof r);
        memcpy(d, g + 9, sizeof d);
    } else {
        const double *p = s->globals[parent];
        /* R_p^T R_b and R_p^T (t_b - t_p); column c of R is g[3c .. 3c+2] */
        for (int c = 0; c < 3; c++)
            for (int row = 0; row < 3; row++)
                r[3 * c + row] = p[3 * row] * g[3 * c] + p[3 * row + 1] * g[3 * c + 1] + p[3 * row + 2] * g[3 * c + 2];
        double dt[3] = {g[9] - p[9], g[10] - p[10], g[11] - p[11]};
        for (int row = 0; row < 3; row++)
            d[row] = p[3 * row] * dt[0] + p[3 * row + 1] * dt[1] + p[3 * row + 2] * dt[2];
    }
    double qd[4];
    plush__mat3_to_quat(r, 3, qd);
    double gq[4] = {-qd[0], -qd[1], qd[2], qd[3]};
    double n = sqrt(gq[0] * gq[0] + gq[1] * gq[1] + gq[2] * gq[2] + gq[3] * gq[3]);
    /* the hemisphere of the previous key, so that interpolation between keys takes the short way */
    double dot = prev ? gq[0] * prev[0] + gq[1] * prev[1] + gq[2] * prev[2] + gq[3] * prev[3] : gq[3];
    double sign = dot < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; k++)
        q[k] = (float)(sign * gq[k] / n);
    t[0] = (float)(d[0] * PLUSH_GLTF_METRES_PER_UNIT);
    t[1] = (float)(d[1] * PLUSH_GLTF_METRES_PER_UNIT);
    t[2] = (float)(-d[2] * PLUSH_GLTF_METRES_PER_UNIT);
}

static plush_status gltf_frame(plush_scene_sink *sk, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    gltf_sink *s = (gltf_sink *)sk;
    plush_diag local = {.file = s->path};
    plush_status st = plush_scene_bake_add_frame(s->bake, frame, plush_scene_proxy_nodes(scene), &local);
    if (st != PLUSH_OK)
        return plush__sink_fail(diag, &local);
    if (!grow(s)) {
        plush_diag_fail(&local, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        return plush__sink_fail(diag, &local);
    }
    const plush_anim *anim = plush_scene_get_anim(scene);
    const float(*bg)[16] = plush_anim_bone_globals(anim);
    size_t nb = s->source->bone_count;
    for (size_t b = 0; b < nb; b++)
        global_from_mat4(bg[b], s->globals[b]);
    memset(s->globals[nb], 0, sizeof s->globals[nb]);
    s->globals[nb][0] = s->globals[nb][4] = s->globals[nb][8] = 1.0; /* plush_root: the origin */
    for (size_t t = 0; t < s->bake->triangle_count; t++)
        global_from_key(s->bake->centroids[t], s->bake->last[t], s->globals[nb + 1 + t]);
    size_t k = s->keys;
    for (size_t b = 0; b < s->bones; b++)
        local_key(s, s->source, b, s->translations[k * s->bones + b], s->rotations[k * s->bones + b],
                  k ? s->rotations[(k - 1) * s->bones + b] : NULL);
    const float *w = plush_anim_morph_weights(anim);
    for (size_t m = 0; m < s->morphs; m++) {
        s->morph_weights[k * s->morphs + m] = w[m];
        uint8_t kind = s->source->morphs[m].kind;
        if (w[m] != 0 && (kind == PLUSH_PMX_MORPH_MATERIAL || (kind >= PLUSH_PMX_MORPH_UV && kind <= PLUSH_PMX_MORPH_UV4)))
            s->warnings++;
    }
    s->times[k] = (float)((double)frame / s->fps);
    s->keys++;
    return PLUSH_OK;
}

/* Node-major channels for the joints that move (joint 0, the common root, never does), and the morph
 * targets of the vertex morphs that are ever non-zero. */
static plush_status build_animation(gltf_sink *s, const plush_pmx_model *baked, gltf_model *g, plush_gltf_animation *a,
                                    plush_diag *diag)
{
    size_t nodes = s->bones + 1, keys = s->keys;
    float(*tr)[3] = plush_arena_array(&g->arena, nodes * keys, sizeof *tr);
    float(*rot)[4] = plush_arena_array(&g->arena, nodes * keys, sizeof *rot);
    bool *animated = plush_arena_array(&g->arena, nodes, sizeof *animated);
    bool *used = plush_arena_array(&g->arena, g->vertex_morphs ? g->vertex_morphs : 1, sizeof *used);
    if (!tr || !rot || !animated || !used)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t j = 1; j < nodes; j++) {
        const plush_gltf_node *rest = &g->desc.nodes[j];
        for (size_t k = 0; k < keys; k++) {
            const float *t = s->translations[k * s->bones + j - 1], *q = s->rotations[k * s->bones + j - 1];
            memcpy(tr[j * keys + k], t, sizeof *tr);
            memcpy(rot[j * keys + k], q, sizeof *rot);
            /* a key within 1e-7 (m, or of a unit quaternion) of rest moves no vertex by 1e-6 m */
            for (int c = 0; c < 4; c++)
                if ((c < 3 && fabsf(t[c] - rest->translation[c]) > 1e-7f) ||
                    fabsf(fabsf(q[c]) - rest->rotation[c]) > 1e-7f)
                    animated[j] = true;
        }
    }
    size_t targets = 0;
    for (size_t i = 0; i < g->vertex_morphs; i++) {
        for (size_t k = 0; k < keys && !used[i]; k++)
            used[i] = s->morph_weights[k * s->morphs + (size_t)g->vertex_morph[i]] != 0;
        targets += used[i];
    }
    float *weights = NULL;
    if (targets) {
        weights = plush_arena_array(&g->arena, keys * targets, sizeof *weights);
        if (!weights)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        for (size_t k = 0; k < keys; k++)
            for (size_t i = 0, t = 0; i < g->vertex_morphs; i++)
                if (used[i])
                    weights[k * targets + t++] = s->morph_weights[k * s->morphs + (size_t)g->vertex_morph[i]];
    }
    *a = (plush_gltf_animation){.name = "plush", .key_count = keys, .times = s->times, .animated = animated,
                                .translations = (const float(*)[3])tr, .rotations = (const float(*)[4])rot,
                                .weights = weights};
    return plush__gltf_model_targets(baked, used, g, diag);
}

static plush_status gltf_end(plush_scene_sink *sk, const plush_scene *scene, plush_diag *diag)
{
    gltf_sink *s = (gltf_sink *)sk;
    plush_diag local = {.file = s->path};
    plush_pmx_model *baked = NULL;
    gltf_model g;
    memset(&g, 0, sizeof g);
    plush_gltf_animation anim;
    plush_status st = s->keys ? plush_scene_bake_model(s->bake, &baked, &local)
                              : plush_diag_fail(&local, PLUSH_E_ARGUMENT, -1, NULL, -1, "no frame to export");
    if (st == PLUSH_OK)
        st = plush__gltf_model_build(baked, s->source->textures, s->source->texture_count, s->model_file,
                                     plush__scene_textures(scene), &g, &local);
    if (st == PLUSH_OK)
        st = build_animation(s, baked, &g, &anim, &local);
    if (st == PLUSH_OK) {
        g.desc.animation = &anim;
        g.desc.generator = "plush";
        if (s->warnings)
            plush_diag_warn(&local, -1, "morph", -1, "UV and material morphs are not in the glTF file (%zu keys)",
                            s->warnings);
        st = plush_gltf_write_file(&g.desc, s->path, &local);
    }
    plush__gltf_model_free(&g);
    plush_pmx_free(baked);
    /* warnings (missing textures, SDEF/QDEF) go to the run's diag as well */
    for (uint32_t i = 0; diag && i < local.warning_count && i < PLUSH_DIAG_KEPT_WARNINGS; i++)
        plush_diag_warn(diag, -1, NULL, -1, "%s", local.warnings[i]);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static int gltf_describe(const plush_scene_sink *sk, char *buf, size_t size)
{
    const gltf_sink *s = (const gltf_sink *)sk;
    return snprintf(buf, size, "%s%s", s->path,
                    s->stretch ? "\n(stretch-aware frames cannot be joint keys: the glTF uses rigid frames)" : "");
}

static void gltf_destroy(plush_scene_sink *sk)
{
    gltf_sink *s = (gltf_sink *)sk;
    plush_scene_bake_destroy(s->bake);
    free(s->path);
    free(s->model_file);
    free(s->globals);
    free(s->translations);
    free(s->rotations);
    free(s->morph_weights);
    free(s->times);
    free(s);
}

/* Per frame a translation and a rotation per joint and the morph weights, held until the end, where the
 * GLB (about as large again) is built in memory and written; the bake inside keeps its own keys. */
static void gltf_estimate(const plush_scene_sink *s, uint32_t frames, double *memory, double *disk)
{
    const gltf_sink *g = (const gltf_sink *)s;
    double per = (double)g->bones * 28.0 + (double)g->morphs * 4.0 + 4.0;
    *memory = (double)frames * (2.0 * per + (double)g->bake->triangle_count * 28.0);
    *disk = (double)frames * per;
}

static const plush_scene_sink_ops gltf_ops = {.frame = gltf_frame,
                                              .end = gltf_end,
                                              .describe = gltf_describe,
                                              .destroy = gltf_destroy,
                                              .estimate = gltf_estimate};

static plush_status gltf_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                plush_diag *diag)
{
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    const plush_scene_binding *binding = plush_scene_get_binding(scene);
    gltf_sink *s = calloc(1, sizeof *s);
    if (s) {
        s->base.ops = &gltf_ops;
        s->source = desc.model;
        s->fps = desc.fps > 0 ? desc.fps : 30.0f;
        s->stretch = desc.skin.stretch;
        s->morphs = desc.model->morph_count;
        s->bones = desc.model->bone_count + 1 + (binding ? binding->proxy.triangle_count : 0);
        s->path = plush__sink_path(out, PLUSH__OUT_SUFFIX ".glb");
        s->model_file = out->model_file ? strdup(out->model_file) : NULL;
        s->globals = calloc(s->bones, sizeof *s->globals);
    }
    if (!s || !s->path || !s->globals || (out->model_file && !s->model_file)) {
        if (s)
            gltf_destroy(&s->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_status st = plush_scene_bake_create(binding, desc.motion, plush_scene_patch(&desc), &s->bake, diag);
    if (st != PLUSH_OK) {
        gltf_destroy(&s->base);
        return st;
    }
    plush_scene_bake_share_patch(s->bake, plush_scene_get_patch(scene));   /* the skin's fit, not a second one */
    *sink = &s->base;
    return PLUSH_OK;
}

const plush_scene_export plush__export_gltf = {
    .name = "gltf",
    .label = "glTF",
    .help = "OUTDIR/<model>_plush.glb: glTF 2.0 binary, the bake's skin and animation (engines, Blender; proxy mode)",
    .modes = PLUSH_SCENE_MODE_BIT(PLUSH_SCENE_PROXY),
    .create = gltf_create,
};
