/* Export "gltf": OUTDIR/<model>_plush.glb, one binary glTF 2.0 file playing the same animation as the bake.
 *
 * The mesh and skin are the baked model's (plush_scene_bake_model: cage materials removed, the model's
 * bones, plush_root and the bake's bones: fitted to the motion, or one pseudo-bone per proxy triangle).
 * Each frame the sink records every model bone's pose as plush computed it (IK, append and physics
 * included: glTF has none of them, so the final transforms are what a runtime must reproduce) as its local
 * transform (parent global^-1 * global); the bake records the cage. At the end the bake fits its bones,
 * and every joint keeps only the keys interpolation cannot stand for (bake_keys.c: the bake's bones with
 * the keys' share of the tolerance as the VMD; a model bone with that share divided by the most bones on
 * one chain, since a vertex's miss adds up along its chain), written in glTF's convention
 * (sink_gltf_internal.h) as LINEAR keys at time frame / fps; joints that never leave their rest pose get
 * no channel. The vertex morphs that are ever non-zero (after group morphs) become morph targets with
 * their effective weights animated at every frame. */
#include "core/common.h"
#include "core/geom.h"
#include "export/bake_internal.h"
#include "export/sink_gltf_internal.h"
#include "export/sink_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/anim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gltf_sink {
    plush_scene_sink base;
    plush_scene_bake *bake;
    bool shared_bake;             /* the bake is the scene's (shared with the pmx+vmd export) */
    const plush_pmx_model *source;
    char *path, *model_file;
    float fps;
    bool stretch;
    size_t bones;                 /* recorded joints: the source bones and plush_root */
    size_t morphs;                /* source (= baked) morph count */
    size_t fit_bones;             /* asked for; 0: chosen from the tolerance */
    double (*globals)[12];        /* this frame's bone globals: rotation columns 0..8, translation 9..11 */
    float (*locals)[7];           /* key k of joint b at k * bones + b: local translation (model units), rotation */
    float *morph_weights;         /* key k: morphs entries */
    float *times;
    size_t keys, capacity;
    size_t warnings;              /* UV / material morphs the motion uses (not in glTF) */
    size_t written_keys;          /* joint keys in the file, once written */
    size_t written_bones;         /* the bake's bones in it */
    size_t written_bytes;         /* the file's size, once written; 0: not written */
    double scale;                 /* the tolerances' factor the byte budget asked for (1: none) */
} gltf_sink;

static bool grow(gltf_sink *s)
{
    if (s->keys < s->capacity)
        return true;
    size_t cap = s->capacity ? s->capacity * 2 : 64;
    void *l = realloc(s->locals, cap * s->bones * sizeof *s->locals);
    if (l)
        s->locals = l;
    void *w = realloc(s->morph_weights, cap * (s->morphs ? s->morphs : 1) * sizeof *s->morph_weights);
    if (w)
        s->morph_weights = w;
    void *tm = realloc(s->times, cap * sizeof *s->times);
    if (tm)
        s->times = tm;
    if (!l || !w || !tm)
        return false;
    s->capacity = cap;
    return true;
}

/* Joint bone's local key (plush__bake_local_key) from this frame's globals. */
static void local_key(const gltf_sink *s, size_t bone, float key[7], const float *prev)
{
    int32_t parent = bone < s->source->bone_count ? s->source->bones[bone].parent : -1;
    const double *p = parent < 0 || (size_t)parent >= s->source->bone_count ? NULL : s->globals[parent];
    plush__bake_local_key(s->globals[bone], p, NULL, prev, key);
}

/* A key in glTF's convention: translation (x, y, -z) scaled to metres, rotation (-x, -y, z, w) in the
 * hemisphere of prev (the joint's previous key written; NULL: w >= 0). */
static void gltf_key(const float t[3], const float key_q[4], const float *prev, float out_t[3], float out_q[4])
{
    plush__gltf_point(t, out_t);
    float q[4] = {-key_q[0], -key_q[1], key_q[2], key_q[3]};
    double dot = prev ? (double)q[0] * prev[0] + (double)q[1] * prev[1] + (double)q[2] * prev[2] + (double)q[3] * prev[3]
                      : q[3];
    for (int k = 0; k < 4; k++)
        out_q[k] = dot < 0 ? -q[k] : q[k];
}

static plush_status gltf_frame(plush_scene_sink *sk, const plush_scene *scene, uint32_t frame, plush_diag *diag)
{
    gltf_sink *s = (gltf_sink *)sk;
    plush_diag local = {.file = s->path};
    plush_status st = plush__sink_bake_frame(s->bake, scene, frame, &local);
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
        plush__bake_global(bg[b], s->globals[b]);
    memset(s->globals[nb], 0, sizeof s->globals[nb]);
    s->globals[nb][0] = s->globals[nb][4] = s->globals[nb][8] = 1.0; /* plush_root: the origin */
    size_t k = s->keys;
    for (size_t b = 0; b < s->bones; b++)
        local_key(s, b, s->locals[k * s->bones + b], k ? s->locals[(k - 1) * s->bones + b] : NULL);
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

/* The keys of one joint (node n, its keys[f * stride] in the model's frame about pivot) that interpolation
 * needs, in glTF's convention, node-major into a; whether it ever leaves its rest pose into animated. */
static void joint_channel(gltf_sink *s, const plush_gltf_node *rest, size_t n, const float (*keys)[7], size_t stride,
                          const float pivot[3], double reach, double tolerance, float (*tr)[3], float (*rot)[4],
                          bool *kept, bool *animated)
{
    size_t count = s->keys;
    bool *keep = kept + n * count;
    s->written_keys += plush__bake_reduce_track(keys, stride, s->bake->frames, count, reach, tolerance, keep, NULL);
    const float *prev = NULL;
    for (size_t k = 0; k < count; k++) {
        if (!keep[k])
            continue;
        const float *key = keys[k * stride];
        float t[3] = {key[0] + pivot[0], key[1] + pivot[1], key[2] + pivot[2]};
        gltf_key(t, key + 3, prev, tr[n * count + k], rot[n * count + k]);
        prev = rot[n * count + k];
        /* a key within 1e-7 (m, or of a unit quaternion) of rest moves no vertex by 1e-6 m */
        for (int c = 0; c < 4; c++)
            if ((c < 3 && fabsf(tr[n * count + k][c] - rest->translation[c]) > 1e-7f) ||
                fabsf(fabsf(rot[n * count + k][c]) - rest->rotation[c]) > 1e-7f)
                animated[n] = true;
    }
}

/* The joint keys at the tolerances times scale (the model's bones with reach, the bake's bones as the bake
 * has them), straight segments as glTF's LINEAR keys; keep has s->keys entries. */
static size_t joint_keys(const gltf_sink *s, const double *reach, double bone_tolerance, double scale, bool *keep)
{
    plush__bake_tracks tracks;
    plush__bake_tracks_get(s->bake, &tracks);
    size_t n = 0;
    for (size_t b = 0; b < s->bones; b++)
        n += plush__bake_reduce_track((const float(*)[7])s->locals + b, s->bones, s->bake->frames, s->keys, reach[b],
                                      bone_tolerance * scale, keep, NULL);
    for (size_t i = 0; i < tracks.bones; i++)
        n += plush__bake_reduce_track(tracks.keys + i, tracks.bones, s->bake->frames, s->keys, tracks.reach[i],
                                      tracks.tolerance * scale, keep, NULL);
    return n;
}

/* joint_keys for plush__bake_least_fitting. */
typedef struct joint_ctx {
    const gltf_sink *s;
    const double *reach;
    double bone_tolerance;
    bool *keep;
} joint_ctx;

static size_t joints_at(void *ctx, double scale)
{
    const joint_ctx *c = ctx;
    return joint_keys(c->s, c->reach, c->bone_tolerance, scale, c->keep);
}

/* The factor on the tolerances whose joint keys fit `keys`: doubling until they do, then six halvings of the
 * ratio (within 1%); 0 when none does. */
static double budget_scale(const gltf_sink *s, const double *reach, double bone_tolerance, size_t keys, bool *keep)
{
    joint_ctx c = {.s = s, .reach = reach, .bone_tolerance = bone_tolerance, .keep = keep};
    return plush__bake_least_fitting(joints_at, &c, 1.0, keys, 40, 6);
}

/* Channels for the joints that move (node 0, the common root, never does) with the keys each needs, and
 * the morph targets of the vertex morphs that are ever non-zero. A file over the byte budget (a default
 * tolerance) gets its tolerances raised until its joint keys (32 bytes each: time, translation, rotation)
 * fit what the rest of the file leaves (first_bytes: the size of the file at scale 1, 0 before it). */
static plush_status build_animation(gltf_sink *s, const plush_pmx_model *baked, gltf_model *g, plush_gltf_animation *a,
                                    size_t first_bytes, plush_diag *diag)
{
    size_t nodes = baked->bone_count + 1, keys = s->keys;
    plush__bake_tracks tracks;
    plush__bake_tracks_get(s->bake, &tracks);
    float(*tr)[3] = plush_arena_array(&g->arena, nodes * keys, sizeof *tr);
    float(*rot)[4] = plush_arena_array(&g->arena, nodes * keys, sizeof *rot);
    bool *kept = plush_arena_array(&g->arena, nodes * keys, sizeof *kept);
    bool *animated = plush_arena_array(&g->arena, nodes, sizeof *animated);
    bool *used = plush_arena_array(&g->arena, g->vertex_morphs ? g->vertex_morphs : 1, sizeof *used);
    double *reach = plush_arena_array(&g->arena, s->bones, sizeof *reach);
    if (!tr || !rot || !kept || !animated || !used || !reach)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    /* the model's bones (and plush_root): their share of the tolerance split along the longest chain */
    size_t chain = plush__bake_chain_reach(baked, s->bones, (const float(*)[7])s->locals, keys, reach);
    if (!chain)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    double bone_tolerance = tracks.tolerance < 0 ? tracks.tolerance : tracks.tolerance / (double)chain;
    s->scale = 1;
    if (first_bytes > PLUSH__BAKE_MAX_BYTES && tracks.tolerance > 0) {
        size_t over = first_bytes - PLUSH__BAKE_MAX_BYTES, key_bytes = 32 * s->written_keys;
        size_t room = key_bytes > over ? (key_bytes - over) / 32 : 0;
        double scale = budget_scale(s, reach, bone_tolerance, room, kept);
        s->scale = scale > 0 ? scale : 1;
    }
    static const float origin[3] = {0, 0, 0};
    s->written_keys = 0;
    s->written_bones = tracks.bones;
    for (size_t b = 0; b < s->bones; b++)
        joint_channel(s, &g->desc.nodes[1 + b], 1 + b, (const float(*)[7])s->locals + b, s->bones, origin, reach[b],
                      bone_tolerance * s->scale, tr, rot, kept, animated);
    /* the bake's bones, children of plush_root at the origin: their key moves the pivot and turns about it */
    for (size_t i = 0; i < tracks.bones; i++)
        joint_channel(s, &g->desc.nodes[1 + s->bones + i], 1 + s->bones + i, tracks.keys + i, tracks.bones,
                      tracks.pivot[i], tracks.reach[i], tracks.tolerance * s->scale, tr, rot, kept, animated);
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
                                .kept = kept, .translations = (const float(*)[3])tr,
                                .rotations = (const float(*)[4])rot, .weights = weights};
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
    plush_status st = s->keys ? plush_scene_bake_fit(s->bake, s->fit_bones, &local)
                              : plush_diag_fail(&local, PLUSH_E_ARGUMENT, -1, NULL, -1, "no frame to export");
    if (st == PLUSH_OK)
        st = plush_scene_bake_model(s->bake, &baked, &local);
    if (st == PLUSH_OK)
        st = plush__gltf_model_build(baked, s->source->textures, s->source->texture_count, s->model_file,
                                     plush__scene_textures(scene), &g, &local);
    if (st == PLUSH_OK)
        st = build_animation(s, baked, &g, &anim, 0, &local);
    if (st == PLUSH_OK) {
        g.desc.animation = &anim;
        g.desc.generator = "plush";
        if (s->warnings)
            plush_diag_warn(&local, -1, "morph", -1, "UV and material morphs are not in the glTF file (%zu keys)",
                            s->warnings);
        plush_buf glb = {0};
        st = plush_gltf_write(&g.desc, &glb, &local);
        /* over the byte budget by default: the keys again at the tolerances that fit it */
        if (st == PLUSH_OK && glb.size > PLUSH__BAKE_MAX_BYTES && s->bake->budget_first) {
            size_t first = glb.size;
            plush_buf_free(&glb);
            st = build_animation(s, baked, &g, &anim, first, &local);
            if (st == PLUSH_OK)
                st = plush_gltf_write(&g.desc, &glb, &local);
        }
        if (st == PLUSH_OK)
            st = plush_file_write_atomic(s->path, glb.data, glb.size, &local);
        s->written_bytes = st == PLUSH_OK ? glb.size : 0;
        plush_buf_free(&glb);
    }
    plush__gltf_model_free(&g);
    plush_pmx_free(baked);
    /* warnings (missing textures, SDEF/QDEF) go to the run's diag as well */
    plush__diag_forward(diag, &local, NULL);
    return st == PLUSH_OK ? st : plush__sink_fail(diag, &local);
}

static int gltf_describe(const plush_scene_sink *sk, char *buf, size_t size)
{
    const gltf_sink *s = (const gltf_sink *)sk;
    char figures[320] = "", raised[120] = "";
    if (s->scale > 1)
        snprintf(raised, sizeof raised, " (tolerances raised %.3g times to keep within %u MB)", s->scale,
                 PLUSH__BAKE_MAX_BYTES / 1000000u);
    if (s->written_bytes)
        snprintf(figures, sizeof figures, "\n%zu baked bones and %zu of the model, %zu joint keys (%zu recorded); %.1f MB%s",
                 s->written_bones, s->bones - 1, s->written_keys, s->keys * (s->bones + s->bake->triangle_count),
                 s->written_bytes / 1e6, raised);
    return snprintf(buf, size, "%s%s%s", s->path, figures,
                    s->stretch ? "\n(stretch-aware frames cannot be joint keys: the glTF uses rigid frames)" : "");
}

static void gltf_destroy(plush_scene_sink *sk)
{
    gltf_sink *s = (gltf_sink *)sk;
    if (!s->shared_bake)
        plush_scene_bake_destroy(s->bake);
    free(s->path);
    free(s->model_file);
    free(s->globals);
    free(s->locals);
    free(s->morph_weights);
    free(s->times);
    free(s);
}

/* Per frame a translation and a rotation per joint and the morph weights, held until the end, where the
 * GLB (about as large again) is built in memory and written; the bake inside keeps its own keys. */
static void gltf_estimate(const plush_scene_sink *s, uint32_t frames, double *memory, double *disk)
{
    const gltf_sink *g = (const gltf_sink *)s;
    double joints = (double)g->bones + (double)g->bake->triangle_count;
    double per = joints * 28.0 + (double)g->morphs * 4.0 + 4.0;
    *memory = (double)frames * (2.0 * per + (double)g->bake->triangle_count * 28.0);
    *disk = (double)frames * per;   /* at most: a key every frame */
}

static size_t gltf_outputs(const plush_scene_sink *sink, const char **paths, size_t max)
{
    const gltf_sink *s = (const gltf_sink *)sink;
    if (max && s->path)
        paths[0] = s->path;
    return s->path ? 1 : 0;
}

static const plush_scene_sink_ops gltf_ops = {.frame = gltf_frame,
                                              .end = gltf_end,
                                              .describe = gltf_describe,
                                              .destroy = gltf_destroy,
                                              .estimate = gltf_estimate,
                                              .outputs = gltf_outputs};

static plush_status gltf_create(const plush_scene *scene, const plush_scene_output *out, plush_scene_sink **sink,
                                plush_diag *diag)
{
    plush_scene_desc desc;
    plush_scene_get_desc(scene, &desc);
    gltf_sink *s = calloc(1, sizeof *s);
    if (s) {
        s->base.ops = &gltf_ops;
        s->source = desc.model;
        s->fps = desc.fps; /* resolved: plush_scene_get_desc gives the defaults */
        s->stretch = desc.skin.stretch;
        s->morphs = desc.model->morph_count;
        s->bones = desc.model->bone_count + 1;
        s->fit_bones = out->bake_bones;
        s->path = plush__sink_path(out, PLUSH__OUT_SUFFIX ".glb");
        s->model_file = out->model_file ? strdup(out->model_file) : NULL;
        s->globals = calloc(s->bones, sizeof *s->globals);
    }
    if (!s || !s->path || !s->globals || (out->model_file && !s->model_file)) {
        if (s)
            gltf_destroy(&s->base);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    plush_status st = plush__sink_bake_get(scene, out, &s->bake, &s->shared_bake, diag);
    if (st != PLUSH_OK) {
        gltf_destroy(&s->base);
        return st;
    }
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
