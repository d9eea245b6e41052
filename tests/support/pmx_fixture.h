/* PMX fixtures for tests: models built in code, a field-by-field comparison, and an independent
 * reference encoder that writes any model (valid or not) as the PMX bytes the format defines.
 *
 *   plush_pmx_model *m = pmx_fx_rich(2.1f, PLUSH_ENC_UTF16LE, 4);   // every feature of the format
 *   plush_buf bytes = {0};
 *   pmx_fx_raw_write(m, NULL, &bytes, &layout);                     // bytes as the spec lays them out
 *   plush_pmx_model *back = pmx_fx_read_ok(bytes.data, bytes.size, NULL);
 *   pmx_fx_assert_same(m, back, 0);                                  // fails the cmocka test, names the field
 *
 * Built models hold elements in the canonical form a reader produces: unused weight slots are bone -1 /
 * weight 0, BDEF2/SDEF weights[1] = 1 - weights[0], fields whose bone flag is clear are zero (indices -1),
 * sdefs are numbered in vertex order. So "read(write(m)) equals m" can compare every field.
 *
 * Needs cmocka (the helpers fail the running test on misuse or out-of-memory).
 */
#ifndef PLUSH_TESTS_PMX_FIXTURE_H
#define PLUSH_TESTS_PMX_FIXTURE_H

#include "plush/pmx.h"
#include "plush/vmd.h"
#include "plush/sys/core.h"

/* ---- building ---------------------------------------------------------------------------------- */

/* Text copied into the model's arena (NULL gives the empty string). */
plush_str pmx_fx_str(plush_pmx_model *m, const char *utf8);
/* A text that points at static memory (no copy): for big fixtures. */
plush_str pmx_fx_lit(const char *utf8);
/* A VMD bone key's curve block with four straight curves ((20,20)-(107,107)) as MMD writes it: for the
 * motions tests build beside their models. */
void pmx_fx_linear_curves(uint8_t block[64]);
/* Zeroed arena array of count * size bytes; fails the test when out of memory. */
void *pmx_fx_alloc(plush_pmx_model *m, size_t count, size_t size);

/* Each sets model->x / x_count to n elements in a neutral canonical state:
 *   vertex: BDEF1 on bone 0, distinct position/normal/uv, edge scale 1, sdef -1
 *   material: white, no textures (-1), own toon -1, index_count 0
 *   bone: parent -1, rotatable|visible|enabled, tail offset (0,1,0), other indices -1
 *   morph: vertex morph with no offsets, panel 4
 *   display frame: no elements; rigid body: sphere on no bone (-1), mass 1
 *   joint: spring 6DOF between bodies 0 and 0 (caller provides bodies); soft body: material -1
 * Names are empty; texture paths are "t". Cheap enough for 65537 items. */
plush_pmx_vertex *pmx_fx_vertices(plush_pmx_model *m, size_t n);
plush_str *pmx_fx_textures(plush_pmx_model *m, size_t n);
plush_pmx_material *pmx_fx_materials(plush_pmx_model *m, size_t n);
plush_pmx_bone *pmx_fx_bones(plush_pmx_model *m, size_t n);
plush_pmx_morph *pmx_fx_morphs(plush_pmx_model *m, size_t n);
plush_pmx_display_frame *pmx_fx_frames(plush_pmx_model *m, size_t n);
plush_pmx_rigid_body *pmx_fx_rigid_bodies(plush_pmx_model *m, size_t n);
plush_pmx_joint *pmx_fx_joints(plush_pmx_model *m, size_t n);
plush_pmx_soft_body *pmx_fx_soft_bodies(plush_pmx_model *m, size_t n);
uint32_t *pmx_fx_faces(plush_pmx_model *m, size_t index_count);
/* Sets model->additional_uv and fills additional_uvs with distinct values (n = 0 clears). */
void pmx_fx_additional_uvs(plush_pmx_model *m, uint8_t n);
/* Offsets of a morph (sets kind, count and the union pointer, zeroed). */
void *pmx_fx_morph_offsets(plush_pmx_model *m, plush_pmx_morph *morph, uint8_t kind, uint32_t count);

/* A small valid model: 3 vertices on bone 0, one triangle, one material (texture 0), one texture,
 * one bone, one morph (vertex), one display frame, one rigid body. version 2.0f or 2.1f. */
plush_pmx_model *pmx_fx_minimal(float version);

/* Every feature: all weight types (QDEF only in 2.1), SDEF, additional UVs (0..4), point and line faces
 * and their material flags (2.1), every sphere mode, shared and own toons, bones with every flag that
 * adds data, all morph kinds (flip and impulse only in 2.1), display frames, every rigid shape and mode,
 * joints of every type (only spring 6DOF in 2.0), a soft body with anchors and pins (2.1), Japanese
 * names, an empty name and one outside the BMP. */
plush_pmx_model *pmx_fx_rich(float version, uint8_t encoding, uint8_t additional_uv);

/* ---- comparing ---------------------------------------------------------------------------------- */

enum {
    PMX_FX_CMP_VERSION = 1,     /* also compare version */
    PMX_FX_CMP_ENCODING = 2,    /* also compare encoding */
    PMX_FX_CMP_INDEX_SIZES = 4, /* also compare index_sizes */
    PMX_FX_CMP_ALL = 7
};

/* True when the models hold the same data (floats compared bit for bit; text by bytes, raw included).
 * Otherwise why gets the first difference ("bone 3 (\"左ひざ\"): append_ratio 0.5 != 0.25"). */
bool pmx_fx_same(const plush_pmx_model *want, const plush_pmx_model *got, unsigned what, char *why, size_t cap);
void pmx_fx_assert_same_at(const plush_pmx_model *want, const plush_pmx_model *got, unsigned what,
                           const char *file, int line);
#define pmx_fx_assert_same(want, got, what) pmx_fx_assert_same_at((want), (got), (what), __FILE__, __LINE__)

/* ---- library calls that must succeed ----------------------------------------------------------- */

/* Fails the running test with the formatted diagnostic unless st is PLUSH_OK. */
void pmx_fx_ok(plush_status st, const plush_diag *d);

/* plush_pmx_write into a fresh buffer; fails the test (with the diagnostic) unless PLUSH_OK. */
plush_buf pmx_fx_write_ok(const plush_pmx_model *m, const plush_pmx_write_options *options, plush_diag *diag_out);
/* plush_pmx_read; fails the test unless PLUSH_OK. diag_out may be NULL. */
plush_pmx_model *pmx_fx_read_ok(const uint8_t *data, size_t size, plush_diag *diag_out);
/* write(m, options) -> read -> compare with m (header fields per options) -> write(read, keep) gives the
 * same bytes. Returns the model read back; *bytes gets the first write when not NULL. */
plush_pmx_model *pmx_fx_roundtrip(const plush_pmx_model *m, const plush_pmx_write_options *options,
                                  plush_buf *bytes);

/* ---- reference encoder (independent of the library, no validation) ---------------------------- */

enum {
    PMX_FX_SEC_HEADER, PMX_FX_SEC_INFO, PMX_FX_SEC_VERTEX, PMX_FX_SEC_FACE, PMX_FX_SEC_TEXTURE,
    PMX_FX_SEC_MATERIAL, PMX_FX_SEC_BONE, PMX_FX_SEC_MORPH, PMX_FX_SEC_FRAME, PMX_FX_SEC_RIGID,
    PMX_FX_SEC_JOINT, PMX_FX_SEC_SOFT, PMX_FX_SEC_END, PMX_FX_SECTIONS
};

/* Where things landed in the reference bytes (0 when absent). */
typedef struct pmx_fx_layout {
    size_t section[PMX_FX_SECTIONS]; /* offset of each section (its count field); END = end of soft bodies */
    size_t version;                  /* the version float */
    size_t name_length;              /* the model name's length field */
    size_t first_vertex_bone;        /* vertex 0's first bone index */
    size_t first_ik_link_count, first_morph_offset_count, first_frame_element_count;
    size_t first_anchor_count, first_pin_count;
    size_t first_bone_name;          /* bone 0's name length field */
} pmx_fx_layout;

typedef struct pmx_fx_raw_options {
    float version;               /* 0: the model's */
    int encoding;                /* -1: the model's; else plush_encoding */
    int additional_uv;           /* -1: the model's (the header byte; vertices carry that many) */
    uint8_t sizes[PLUSH_PMX_INDEX_KINDS]; /* 0: the model's, or the smallest when the model's is 0; 3 writes 3 bytes */
    bool omit_soft_section;      /* 2.1 without the soft body count */
} pmx_fx_raw_options;

/* Default options (everything from the model). */
pmx_fx_raw_options pmx_fx_raw_defaults(void);
/* Appends m encoded as the PMX spec says to out; layout may be NULL. Texts are encoded from .s
 * (raw is ignored); weight types above 4 are written as the type byte followed by BDEF1 data. */
void pmx_fx_raw_write(const plush_pmx_model *m, const pmx_fx_raw_options *options, plush_buf *out,
                      pmx_fx_layout *layout);
/* The smallest index size, computed independently of the library. */
uint8_t pmx_fx_min_size(int kind, size_t count);

/* ---- bytes ------------------------------------------------------------------------------------- */

/* Offset of the only occurrence of needle in hay; fails the test when absent or not unique. */
size_t pmx_fx_find_unique(const uint8_t *hay, size_t n, const void *needle, size_t k);
void pmx_fx_put_i32(uint8_t *at, int32_t v);
void pmx_fx_put_f32(uint8_t *at, float v);
int32_t pmx_fx_get_i32(const uint8_t *at);
/* An exact-size malloc'd copy of n bytes (at least one byte is allocated) so ASan sees any overrun. */
uint8_t *pmx_fx_copy(const uint8_t *data, size_t n);

/* A fresh diagnostic (offset and index -1). */
plush_diag pmx_fx_diag(void);

#endif
