/* Scene: a PMX model with its proxy. So far: binding the model's detailed vertices to the proxy its
 * TriMesh soft bodies make, and the Influence Map File 2 view of that binding.
 *
 *   plush_scene_binding *b = NULL;
 *   plush_scene_bind_options opt = { .proxy = { .seed = true } };
 *   if (plush_scene_bind(model, &opt, &b, &diag) == PLUSH_OK) {
 *       plush_scene_binding_apply_im2(b, overrides, &im2_diag);      // optional, from a .im2 file
 *       for (size_t i = 0; i < b->vertex_count; i++)
 *           use(b->vertices[i], b->binding->triangles[i], b->binding->weights[i]);
 *   }
 *   plush_scene_binding_free(b);
 *
 * Proxy triangle t is pseudo-bone bone_count + t: in an Influence Map File a bone number below the model's
 * bone count is a model bone, the numbers after it are the proxy's triangles (plush_pmx_proxy order).
 * The pseudo-bones hang from one root of their own that is not numbered, so their parent is -1.
 *
 * Parts are PMX materials by name, matched among the materials that have bound vertices, in material
 * order: the k-th part with a name is the k-th such material with that name (so a model with two
 * materials of the same name exports and imports without confusion). A part's vertex v is the v-th
 * distinct vertex of the material's faces in order of first use; -1 is every vertex of the part.
 */
#ifndef PLUSH_SCENE_H
#define PLUSH_SCENE_H

#include "plush/im2.h"
#include "plush/pmx_mesh.h"
#include "plush/proxy.h"
#include "plush/vmd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero fields mean the defaults. */
typedef struct plush_scene_bind_options {
    plush_proxy_bind_options proxy;   /* seed mode, drop ratio, falloff, maximum distance, search, threads */
    plush_pmx_bound_options bound;    /* only these materials' vertices (default: every non-soft material) */
} plush_scene_bind_options;

/* A model's detailed vertices bound to its soft-body proxy. Row i of binding is PMX vertex vertices[i].
 * The model must outlive the binding. */
typedef struct plush_scene_binding {
    const plush_pmx_model *model;
    plush_pmx_proxy proxy;
    size_t vertex_count;              /* bound vertices */
    uint32_t *vertices;               /* increasing PMX vertex indices */
    plush_proxy_binding *binding;     /* vertex_count rows */
    struct plush_scene_computed *computed; /* private: the rows as plush_proxy_bind made them */
    plush_arena arena;                /* owns everything above but the model and binding */
} plush_scene_binding;

/* Builds the proxy (skipped soft bodies become warnings in diag), picks the bound vertices and binds their
 * rest positions. A model without a usable TriMesh soft body fails with PLUSH_E_UNSUPPORTED. */
plush_status plush_scene_bind(const plush_pmx_model *model, const plush_scene_bind_options *options,
                              plush_scene_binding **out, plush_diag *diag);
void plush_scene_binding_free(plush_scene_binding *binding);

/* The row of a PMX vertex, or -1 when it is not bound. */
int64_t plush_scene_binding_row(const plush_scene_binding *binding, uint32_t vertex);

/* Export: one part per material with bound vertices, one line per bound vertex of it:
 * - on the proxy (proxy_share > 0): child = the pseudo-bone of its strongest triangle, parent -1,
 *   CALC_NOSKIN0 when that triangle is its only influence, CALC_ONESKIN0 otherwise;
 * - left to bone skinning (proxy_share 0): child = its strongest PMX bone, parent = that bone's parent,
 *   CALC_ONESKIN0 (a vertex without any bone is left out, with a warning).
 * Names are the materials' names; writing them needs Shift-JIS (plush_im2_write says which cannot). */
plush_status plush_scene_binding_to_im2(const plush_scene_binding *binding, plush_im2_map **out, plush_diag *diag);

/* Import: applies each line in file order, a later line overriding an earlier one for the same vertex.
 * - child a pseudo-bone, CALC_NOSKIN0: the vertex follows that triangle alone (weight 1), on the proxy;
 * - child a pseudo-bone, CALC_ONESKIN0: the vertex keeps (or gets back) the blend plush_proxy_bind computed;
 * - child a model bone (either method): the vertex leaves the proxy (proxy_share 0) for its own PMX bone
 *   weights; the bone number is checked, not used to rewrite the weights.
 * The parent is checked for range and otherwise not used. Errors name the line (diag section "line", the
 * line number, its byte offset; set diag->file to the im2 file): a part that names no material with bound
 * vertices, a vertex out of the part's range or not bound, a child of -1, a bone number out of range.
 * On failure the binding is left as it was. */
plush_status plush_scene_binding_apply_im2(plush_scene_binding *binding, const plush_im2_map *map,
                                           plush_diag *diag);

/* ---- bake: the proxy animation as plain bones + a VMD any MMD player can play ----------------------
 *
 *   plush_scene_bake *bake = NULL;
 *   plush_scene_bake_create(binding, motion, &bake, &diag);     // motion may be NULL
 *   each frame f: plush_scene_bake_add_frame(bake, f, simulated_proxy_nodes);
 *   plush_scene_bake_write(bake, "out/bear_plush.pmx", "out/bear_plush.vmd", &diag);
 *   plush_scene_bake_destroy(bake);
 *
 * The model: PMX 2.0 (MMD reads no 2.1) without soft bodies and without the materials soft bodies own
 * (their faces, and vertices no other material uses, are removed; morph offsets on removed vertices or
 * materials go with them), 2.1-only elements dropped with a warning each; plus one root bone
 * "plush_root" at the origin and one pseudo-bone per proxy triangle ("pb0001", ... short ASCII names that
 * fit VMD's 15 bytes) at the triangle's rest centroid, parented to the root, listed in a display frame
 * "plush". Bound vertices are re-weighted to the pseudo-bones of their triangles: BDEF1/2/4 by the number
 * of influences; a vertex in the hand-over band (0 < proxy share < 1) keeps the four largest of its
 * pseudo-bone and PMX-bone weights (scaled by share and 1 - share), renormalised.
 * The motion: the input motion's keys, plus a key per frame for every pseudo-bone: translation
 * c(t) - c(0) and rotation R(t) R(0)^-1 of the triangle's rigid frame F(t) F(0)^-1, linear interpolation.
 * Stretch-aware frames cannot be expressed as bone keys: the bake always uses rigid frames. A triangle
 * degenerate at some frame keeps its last key (identity until it has one). */
typedef struct plush_scene_bake plush_scene_bake;

/* The binding and motion must outlive the bake. */
plush_status plush_scene_bake_create(const plush_scene_binding *binding, const plush_vmd_motion *motion,
                                     plush_scene_bake **out, plush_diag *diag);
/* Records one frame (frame numbers increasing) from the proxy's node positions (binding->proxy order). */
plush_status plush_scene_bake_add_frame(plush_scene_bake *bake, uint32_t frame, const float (*nodes)[3],
                                        plush_diag *diag);
/* The baked model alone (owned by the caller, plush_pmx_free); it points into the source model's arrays
 * where they are unchanged, so the source model must outlive it. */
plush_status plush_scene_bake_model(const plush_scene_bake *bake, plush_pmx_model **out, plush_diag *diag);
/* The baked motion alone (owned by the caller, plush_vmd_free). */
plush_status plush_scene_bake_motion(const plush_scene_bake *bake, plush_vmd_motion **out, plush_diag *diag);
/* Both files, each written atomically; on failure neither is left half-written. */
plush_status plush_scene_bake_write(const plush_scene_bake *bake, const char *pmx_path, const char *vmd_path,
                                    plush_diag *diag);
void plush_scene_bake_destroy(plush_scene_bake *bake);

#ifdef __cplusplus
}
#endif
#endif
