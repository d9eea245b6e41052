/* plush PMX helpers: materials' faces, vertices and bones, welding, index sizes, value checks.
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/pmx.h; a host program needs none of it. */
#ifndef PLUSH_SYS_PMX_H
#define PLUSH_SYS_PMX_H

#include "plush/pmx.h"
#include "plush/sys/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PLUSH_OK for a model that holds its geometry and whose vertices and bones can be used; for a
 * summary-only model PLUSH_E_NO_GEOMETRY; for a read model with a vertex or bone value issue (a
 * non-finite position, normal, UV or weight, a weight outside 0..1, a non-finite bone value, a bone parent
 * cycle) PLUSH_E_RANGE naming the first such item and its byte, as the reader's warning did. Every
 * function that reads vertices or faces starts with it (writing a model does not: it keeps the values). */
plush_status plush_pmx_require_geometry(const plush_pmx_model *model, plush_diag *diag);
/* The first kept value issue of item index of section (a PMX section name, "rigid body"), or NULL. */
const plush_pmx_value_issue *plush_pmx_value_issue_find(const plush_pmx_model *model, const char *section,
                                                        int64_t index);
/* Smallest index size for count items of kind (vertex indices are unsigned at 1 and 2 bytes). */
uint8_t plush_pmx_min_index_size(int kind, size_t count);
/* The faces a material draws: model->indices[*out_first .. *out_first + *out_count), *out_count a
 * multiple of 3, in file order. Fails when the material does not exist or the materials' face counts
 * run past the face list. */
plush_status plush_pmx_material_faces(const plush_pmx_model *model, size_t material, size_t *out_first,
                                      size_t *out_count, plush_diag *diag);
/* The same faces as a pointer into model->indices, each index checked against the vertex count
 * (PLUSH_E_RANGE naming the material and the face index otherwise). */
plush_status plush_pmx_material_faces_checked(const plush_pmx_model *model, size_t material, const uint32_t **out,
                                              size_t *count, plush_diag *diag);
/* The distinct vertices a material's faces use, in order of first use (the numbering Influence Map
 * files use for a part's vertices). *out is arena memory (NULL when the count is 0). */
plush_status plush_pmx_material_vertices(const plush_pmx_model *model, size_t material, plush_arena *arena,
                                         uint32_t **out, size_t *out_count, plush_diag *diag);
/* Welds a material's vertices by position into out (arrays in arena). */
plush_status plush_pmx_weld(const plush_pmx_model *model, size_t material, plush_arena *arena,
                            plush_pmx_welded_mesh *out, plush_diag *diag);
/* True when the mesh can carry a soft body: at least one triangle of nonzero area, and every node
 * finite. */
bool plush_pmx_welded_mesh_usable(const plush_pmx_welded_mesh *mesh);
/* The share of vertex v's weight on the bones marked (bone_count flags): its weights on them, summed (bone
 * indices out of range count nothing). */
double plush_pmx_vertex_bone_share(const plush_pmx_vertex *v, const bool *marked, size_t bone_count);
/* The first material named name (UTF-8, compared exactly), or -1. */
int32_t plush_pmx_material_find(const plush_pmx_model *model, const char *name);
/* A material's English name when it is worth showing beside its name (plush info, the nearest names):
 * NULL when it is blank or the same as the name. */
const plush_str *plush_pmx_material_english(const plush_pmx_model *model, size_t material);
/* Up to max materials whose names or English names come nearest to name, nearest first, one per distinct
 * pair of name and English name: names that hold name (ASCII letters without case) before the others,
 * then by edit distance over characters, then by the longer shared beginning, then by index; a material
 * counts by the nearer of its name and its English name. Writes material indices into out; returns how
 * many. */
size_t plush_pmx_material_nearest(const plush_pmx_model *model, const char *name, size_t *out, size_t max);
/* The material a user's text (UTF-8, compared exactly) means, as --cage and --materials take it: a
 * material named text (the first of several of that name); else the material whose English name is text
 * (not blank); else, when text is a decimal number (digits only) below the material count, the material
 * of that index, as plush info lists them. Callers choose materials by name (every material of a name
 * counts), so an English name or number must mean every material of its material's name: several
 * materials of different names carrying that English name, or a number or English name whose material
 * shares its name with others, give PLUSH_E_AMBIGUOUS with a message naming the materials (index and
 * name). Unknown text gives PLUSH_E_ARGUMENT with 'no material named "TEXT"; nearest: "A" (a), "B", ...'
 * (up to five with their English names, as many as fit the message; a number past the last material
 * says which numbers there are). *out is written on success only. */
plush_status plush_pmx_material_lookup(const plush_pmx_model *model, const char *text, size_t *out,
                                       plush_diag *diag);
/* Sets chosen[m] (model->material_count entries) for every material text means: those named as the
 * material plush_pmx_material_lookup finds. Fails as it does, changing nothing. The one way the library
 * turns a user's material text into materials (plush_scene_cage_weld, the bound set, plush_attach). */
plush_status plush_pmx_material_choose(const plush_pmx_model *model, const char *text, bool *chosen,
                                       plush_diag *diag);
/* PLUSH_OK when text means materials, as plush_pmx_material_lookup fails otherwise. */
plush_status plush_pmx_material_check(const plush_pmx_model *model, const char *name, plush_diag *diag);
/* The first soft body whose material is this one (TriMesh or Rope, whether it can run or not), or -1. */
int32_t plush_pmx_material_soft_body(const plush_pmx_model *model, size_t material);
/* The bones that carry a material, heaviest first: every distinct vertex its faces draw gives weight 1,
 * spread over its bones by its weights (BDEF4 and QDEF as stored, scaled to sum 1; non-finite and
 * negative weights and bone indices out of range give nothing). Writes up to max entries (equal shares in
 * bone order) and their count. Fails as plush_pmx_material_faces_checked does. */
plush_status plush_pmx_material_bones(const plush_pmx_model *model, size_t material, plush_pmx_bone_share *out,
                                      size_t max, size_t *out_count, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
