/* Wavefront OBJ and PLY meshes (src/format/obj.c, obj_read.c).
 *
 * Mesh writers: Wavefront OBJ (text) and PLY (binary little-endian) of positions, normals and triangles,
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
 *
 * Reading Wavefront OBJ meshes: positions and faces (a cage edited in any 3D tool).
 *
 *   plush_diag diag = { .file = "cage.obj" };
 *   plush_obj_model *obj = NULL;
 *   if (plush_obj_read_file("cage.obj", &obj, &diag) != PLUSH_OK) { ...diag: "line 12: ... (at byte 230)" }
 *   use(obj->positions, obj->vertex_count, obj->triangles, obj->triangle_count);
 *   plush_obj_model_free(obj);
 *
 * What is read: "v x y z" (a fourth number, the weight, or three colour numbers after the position are
 * accepted and ignored), "vt" and "vn" (counted, so their indices can be checked), and "f" with three or
 * more corners in any of the forms v, v/vt, v//vn, v/vt/vn; an n-gon becomes a fan of triangles around its
 * first corner. Indices are 1-based; negative ones count back from the last element defined so far.
 * Every other statement (o, g, s, usemtl, mtllib, l, p, curves) is skipped; l and p give one warning.
 * '#' starts a comment; lines end with LF, CRLF or CR; a backslash at the end of a line continues it.
 * Numbers are read without the C library's locale. Errors name the line and its byte offset (diag
 * section "line", index = line number): a malformed or non-finite number, a position with fewer than
 * three numbers, a face with fewer than three corners, an index of 0 or out of range.
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

/* ---- reading (src/format/obj_read.c) ---- */

typedef struct plush_obj_model {
    size_t vertex_count;
    float (*positions)[3];
    size_t triangle_count;
    uint32_t (*triangles)[3];     /* 0-based position indices, in file order (fans in corner order) */
    size_t face_count;            /* "f" statements */
    size_t texcoord_count, normal_count;
    plush_arena arena;            /* owns everything above */
} plush_obj_model;

/* Parses size bytes. On failure *out is NULL and diag names the line and byte offset. */
plush_status plush_obj_read(const uint8_t *data, size_t size, plush_obj_model **out, plush_diag *diag);
/* Reads a file (diag->file is set to path when empty). */
plush_status plush_obj_read_file(const char *path, plush_obj_model **out, plush_diag *diag);
void plush_obj_model_free(plush_obj_model *obj);

#ifdef __cplusplus
}
#endif
#endif
