/* plush scene internals: the proxy a model's soft bodies make, the vertices bound to it, the welded skin a
 * cage is made from. Extension-level API (as libgit2's sys/): what plush's own modules, its command-line
 * tool and its tests use beside the public plush/scene_proxy.h and plush/scene.h; a host program needs
 * none of it. */
#ifndef PLUSH_SYS_SCENE_H
#define PLUSH_SYS_SCENE_H

#include "plush/anim.h"
#include "plush/scene.h"
#include "plush/scene_sink.h"
#include "plush/scene_proxy.h"
#include "plush/quality.h"
#include "plush/sys/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frame f's figures (as plush_scene_soft gives them after stepping to f), when they are the last or the one but
 * last frame's measured: true and *out filled, else false. The measure of the last frame stepped runs beside
 * the next step's motion and physics; asking for it here waits for it, asking for the one before does not (a
 * sink that takes a frame's figures once the next frame is stepped lets the two overlap). */
bool plush_scene_soft_at(const plush_scene *scene, double frame, plush_scene_soft_figures *out);
/* Proxy mode: leaves out of cage (a measure of the proxy, plush_quality_create over binding->proxy's nodes and
 * triangles) the folds between faces pinned at every corner (plush_quality_hold_folds): they go where their bones
 * put them. Other modes: nothing. false when out of memory. */
bool plush_scene_hold_cage_folds(const plush_scene *scene, plush_quality *cage);
/* What binding the scene's motion found (plush_motion_stats_get); all zero without a motion. */
void plush_scene_motion_stats(const plush_scene *scene, plush_motion_stats *out);
/* Whether the author's part is whole at the frame of f: its surface, where measured, within the surface bar's
 * strain figures (plush/scene.h: the swing bar is judged over such frames). */
bool plush_scene_soft_author_whole(const plush_scene_soft_figures *f);
/* The linear solves of the soft bodies stepped as cloth (plush_world_cloth; direct mode's reference), and
 * how many of them the iteration cap stopped short of their tolerance; 0 without cloth. */
uint64_t plush_scene_cloth_solves(const plush_scene *scene, uint64_t *unfinished);

/* The paths the sink will write directly inside plush_scene_output.dir, known before the run begins (a
 * caller checks that none would replace a file of the user's): up to max stored, the count returned. */
size_t plush_scene_sink_outputs(const plush_scene_sink *sink, const char **paths, size_t max);

/* Builds the proxy. A TriMesh soft body whose material is -1, or whose mesh is empty or degenerate, is
 * skipped with a warning in diag (section "soft body", its index). A model with no usable soft body
 * gives PLUSH_OK and an empty proxy: the caller decides whether that is an error. */
plush_status plush_scene_proxy_build(const plush_pmx_model *model, plush_arena *arena, plush_scene_proxy *out,
                                   plush_diag *diag);
/* The vertices to skin with the proxy: those used by the faces of the chosen materials, in increasing
 * order. With materials named, the vertices of the other materials (not a soft body's) that share their
 * rest position with a chosen vertex (within a millionth of the chosen vertices' extent) are bound too:
 * layers -- an inner and an outer shell, back faces, an outline -- move as one. Naming a material that
 * does not exist, or one a soft body owns, fails (PLUSH_E_ARGUMENT); an ambiguous English name or number
 * fails as plush_pmx_material_choose does (PLUSH_E_AMBIGUOUS). */
plush_status plush_scene_bound_vertices(const plush_pmx_model *model, const plush_scene_proxy *proxy,
                                      const plush_scene_bound_options *options, plush_arena *arena, uint32_t **out,
                                      size_t *out_count, plush_diag *diag);
/* The faces of the named materials (NULL or count 0: every material; each a name, English name or number,
 * as plush_pmx_material_choose takes them: every material of the name counts), in material order, over
 * vertices welded by exact position across all of them (+0 and -0 are equal). Vertices are numbered in
 * order of first use; faces that name one vertex twice after welding are dropped. Fails as
 * plush_pmx_material_choose does on text that names no material or is ambiguous, with PLUSH_E_RANGE on
 * face counts or indices out of range. */
plush_status plush_scene_cage_weld(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                             plush_arena *arena, plush_cage_mesh *out, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
