/* Mesh writers: Wavefront OBJ (text) and PLY (binary little-endian) of positions, normals and triangles,
 * for pose dumps and mesh-sequence exports.
 *
 *   plush_obj_mesh mesh = { .vertex_count = model->vertex_count, .positions = skinned,
 *                           .normals = skinned_normals, .index_count = model->index_count,
 *                           .indices = model->indices, .comment = "plush pose, frame 10" };
 *   if (plush_obj_write_file(&mesh, "pose.obj", &diag) != PLUSH_OK) { ...diag... }
 *   plush_ply_write_file(&mesh, "pose.ply", &diag);
 *
 * Nothing non-finite is ever written: a NaN or infinite coordinate fails the write with the vertex named.
 * Numbers are printed with nine significant digits (a float read back is the same float) and always with
 * a '.' decimal point, whatever the locale. OBJ indices are 1-based; faces are "f a//a b//b c//c" when
 * normals are given, "f a b c" otherwise. PLY vertices carry float x y z (and nx ny nz), faces a
 * "list uchar int vertex_indices". Coordinates are written as given (PMX's left-handed frame).
 */
#ifndef PLUSH_OBJ_H
#define PLUSH_OBJ_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_obj_mesh {
    size_t vertex_count;
    const float (*positions)[3];
    const float (*normals)[3];   /* NULL: no normals */
    size_t index_count;          /* 3 per triangle */
    const uint32_t *indices;     /* each < vertex_count */
    const char *comment;         /* NULL or one line (a line break in it ends the comment) */
} plush_obj_mesh;

/* Append the file's bytes to out. Fail (out unchanged in size) on an index out of range, an index count
 * that is not a multiple of 3, missing arrays or a non-finite number; diag names the face or vertex. */
plush_status plush_obj_write(const plush_obj_mesh *mesh, plush_buf *out, plush_diag *diag);
plush_status plush_ply_write(const plush_obj_mesh *mesh, plush_buf *out, plush_diag *diag);
/* Write atomically to path (diag->file is set to path when empty): never a half-written file. */
plush_status plush_obj_write_file(const plush_obj_mesh *mesh, const char *path, plush_diag *diag);
plush_status plush_ply_write_file(const plush_obj_mesh *mesh, const char *path, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
