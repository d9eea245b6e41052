/* VPD poses (Shift-JIS text): read.
 *
 *   plush_vpd_pose *pose = NULL;
 *   plush_diag diag = { .file = "pose.vpd" };
 *   if (plush_vpd_read(data, size, &pose, &diag) == PLUSH_OK)
 *       for (size_t i = 0; i < pose->bone_count; i++) use(pose->bones[i].name.s, pose->bones[i].rotation);
 *   plush_vpd_free(pose);
 *
 * The file: "Vocaloid Pose Data file", "<model>.osm;", "<N>;" (the number of bone blocks), then blocks
 * "Bone<k>{<name>" / "x,y,z;" / "x,y,z,w;" / "}" and, in newer files, "Morph<k>{<name>" / "<weight>;" /
 * "}". Comments ("//" to the end of the line), blank lines, spacing and CR/LF may vary. Numbers are read
 * with '.' whatever the C locale says and must be finite. An error's offset is the start of the line at
 * fault (for a block the text ends inside, the block's first line); sections are "header", "bone" and
 * "morph" with the block index. A failed read sets *out = NULL.
 */
#ifndef PLUSH_VPD_H
#define PLUSH_VPD_H

#include "plush/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plush_vpd_bone {
    plush_str name;
    float translation[3];
    float rotation[4];   /* quaternion x y z w */
} plush_vpd_bone;

typedef struct plush_vpd_morph {
    plush_str name;
    float weight;
} plush_vpd_morph;

typedef struct plush_vpd_pose {
    plush_str model_name;      /* the "parent file" line without its ';', e.g. "miku.osm" */
    size_t bone_count;
    plush_vpd_bone *bones;
    size_t morph_count;
    plush_vpd_morph *morphs;
    plush_arena arena;
} plush_vpd_pose;

/* Reads a VPD pose from memory (Shift-JIS text): its bones and morphs; an error says what is wrong and where. */
plush_status plush_vpd_read(const uint8_t *data, size_t size, plush_vpd_pose **out, plush_diag *diag);
/* plush_vpd_read on the file's bytes; sets diag->file to path when it is NULL. */
plush_status plush_vpd_read_file(const char *path, plush_vpd_pose **out, plush_diag *diag);
void plush_vpd_free(plush_vpd_pose *pose);

#ifdef __cplusplus
}
#endif
#endif
