/* PMX fixtures built in code: canonical element arrays, the minimal and the rich model. */
#include "pmx_fixture.h"
#include "plush/sys/core.h"
#include "plush/sys/vmd.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- building ---------------------------------------------------------------------------------- */

void pmx_fx_linear_curves(uint8_t block[64])
{
    static const uint8_t straight[4][4] = {
        {20, 20, 107, 107}, {20, 20, 107, 107}, {20, 20, 107, 107}, {20, 20, 107, 107}};
    plush_vmd_curves_write(straight, block);
}

plush_str pmx_fx_lit(const char *utf8)
{
    plush_str s = {0};
    s.s = utf8 ? utf8 : "";
    s.len = (uint32_t)strlen(s.s);
    return s;
}

plush_str pmx_fx_str(plush_pmx_model *m, const char *utf8)
{
    const char *src = utf8 ? utf8 : "";
    size_t n = strlen(src);
    plush_str s = {0};
    char *p = plush_arena_strdup(plush_pmx_arena(m), src, n);
    assert_non_null(p);
    s.s = p;
    s.len = (uint32_t)n;
    return s;
}

void *pmx_fx_alloc(plush_pmx_model *m, size_t count, size_t size)
{
    void *p = plush_arena_array(plush_pmx_arena(m), count ? count : 1, size);
    assert_non_null(p);
    return p;
}

plush_pmx_vertex *pmx_fx_vertices(plush_pmx_model *m, size_t n)
{
    plush_pmx_vertex *v = pmx_fx_alloc(m, n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        float f = (float)i;
        v[i].position[0] = f;
        v[i].position[1] = f * 0.5f;
        v[i].position[2] = -f;
        v[i].normal[1] = 1.0f;
        v[i].uv[0] = f * 0.25f;
        v[i].uv[1] = 1.0f - f * 0.125f;
        v[i].bones[0] = 0;
        v[i].bones[1] = v[i].bones[2] = v[i].bones[3] = -1;
        v[i].weights[0] = 1.0f;
        v[i].edge_scale = 1.0f;
        v[i].weight_type = PLUSH_PMX_BDEF1;
        v[i].sdef = -1;
    }
    m->vertices = v;
    m->vertex_count = n;
    return v;
}

plush_str *pmx_fx_textures(plush_pmx_model *m, size_t n)
{
    plush_str *t = pmx_fx_alloc(m, n, sizeof *t);
    for (size_t i = 0; i < n; i++)
        t[i] = pmx_fx_lit("t");
    m->textures = t;
    m->texture_count = n;
    return t;
}

plush_pmx_material *pmx_fx_materials(plush_pmx_model *m, size_t n)
{
    plush_pmx_material *mat = pmx_fx_alloc(m, n, sizeof *mat);
    for (size_t i = 0; i < n; i++) {
        mat[i].name = mat[i].name_en = mat[i].memo = pmx_fx_lit("");
        for (int k = 0; k < 4; k++)
            mat[i].diffuse[k] = 1.0f;
        mat[i].specular_power = 5.0f;
        mat[i].edge_color[3] = 1.0f;
        mat[i].edge_size = 1.0f;
        mat[i].texture = -1;
        mat[i].sphere_texture = -1;
        mat[i].toon = -1;
    }
    m->materials = mat;
    m->material_count = n;
    return mat;
}

plush_pmx_bone *pmx_fx_bones(plush_pmx_model *m, size_t n)
{
    plush_pmx_bone *b = pmx_fx_alloc(m, n, sizeof *b);
    for (size_t i = 0; i < n; i++) {
        b[i].name = b[i].name_en = pmx_fx_lit("");
        b[i].position[1] = (float)i;
        b[i].parent = -1;
        b[i].flags = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_VISIBLE | PLUSH_PMX_BONE_ENABLED;
        b[i].tail_bone = -1;
        b[i].tail_offset[1] = 1.0f;
        b[i].append_parent = -1;
        b[i].ik_target = -1;
    }
    m->bones = b;
    m->bone_count = n;
    return b;
}

plush_pmx_morph *pmx_fx_morphs(plush_pmx_model *m, size_t n)
{
    plush_pmx_morph *mo = pmx_fx_alloc(m, n, sizeof *mo);
    for (size_t i = 0; i < n; i++) {
        mo[i].name = mo[i].name_en = pmx_fx_lit("");
        mo[i].panel = 4;
        mo[i].kind = PLUSH_PMX_MORPH_VERTEX;
    }
    m->morphs = mo;
    m->morph_count = n;
    return mo;
}

plush_pmx_display_frame *pmx_fx_frames(plush_pmx_model *m, size_t n)
{
    plush_pmx_display_frame *f = pmx_fx_alloc(m, n, sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i].name = f[i].name_en = pmx_fx_lit("");
    m->display_frames = f;
    m->display_frame_count = n;
    return f;
}

plush_pmx_rigid_body *pmx_fx_rigid_bodies(plush_pmx_model *m, size_t n)
{
    plush_pmx_rigid_body *r = pmx_fx_alloc(m, n, sizeof *r);
    for (size_t i = 0; i < n; i++) {
        r[i].name = r[i].name_en = pmx_fx_lit("");
        r[i].bone = -1;
        r[i].mask = 0xFFFF;
        r[i].size[0] = r[i].size[1] = r[i].size[2] = 1.0f;
        r[i].position[0] = (float)i;
        r[i].mass = 1.0f;
        r[i].linear_damping = 0.5f;
        r[i].angular_damping = 0.5f;
        r[i].friction = 0.5f;
    }
    m->rigid_bodies = r;
    m->rigid_body_count = n;
    return r;
}

plush_pmx_joint *pmx_fx_joints(plush_pmx_model *m, size_t n)
{
    plush_pmx_joint *j = pmx_fx_alloc(m, n, sizeof *j);
    for (size_t i = 0; i < n; i++)
        j[i].name = j[i].name_en = pmx_fx_lit("");
    m->joints = j;
    m->joint_count = n;
    return j;
}

plush_pmx_soft_body *pmx_fx_soft_bodies(plush_pmx_model *m, size_t n)
{
    plush_pmx_soft_body *s = pmx_fx_alloc(m, n, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        s[i].name = s[i].name_en = pmx_fx_lit("");
        s[i].material = -1;
        s[i].mask = 0xFFFF;
        s[i].total_mass = 1.0f;
    }
    m->soft_bodies = s;
    m->soft_body_count = n;
    return s;
}

uint32_t *pmx_fx_faces(plush_pmx_model *m, size_t index_count)
{
    uint32_t *f = pmx_fx_alloc(m, index_count, sizeof *f);
    m->indices = f;
    m->index_count = index_count;
    return f;
}

void pmx_fx_additional_uvs(plush_pmx_model *m, uint8_t n)
{
    m->additional_uv = n;
    m->additional_uvs = NULL;
    if (!n)
        return;
    float(*a)[4] = pmx_fx_alloc(m, m->vertex_count * n, sizeof *a);
    for (size_t i = 0; i < m->vertex_count; i++)
        for (size_t k = 0; k < n; k++) {
            float *u = a[i * n + k];
            u[0] = (float)i;
            u[1] = (float)k + 0.5f;
            u[2] = -(float)(i + k);
            u[3] = 0.125f * (float)(k + 1);
        }
    m->additional_uvs = a;
}

void *pmx_fx_morph_offsets(plush_pmx_model *m, plush_pmx_morph *morph, uint8_t kind, uint32_t count)
{
    size_t size;
    switch (kind) {
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP: size = sizeof(plush_pmx_morph_group); break;
    case PLUSH_PMX_MORPH_VERTEX: size = sizeof(plush_pmx_morph_vertex); break;
    case PLUSH_PMX_MORPH_BONE: size = sizeof(plush_pmx_morph_bone); break;
    case PLUSH_PMX_MORPH_MATERIAL: size = sizeof(plush_pmx_morph_material); break;
    case PLUSH_PMX_MORPH_IMPULSE: size = sizeof(plush_pmx_morph_impulse); break;
    default: size = sizeof(plush_pmx_morph_uv); break;
    }
    void *p = count ? pmx_fx_alloc(m, count, size) : NULL;
    morph->kind = kind;
    morph->offset_count = count;
    morph->offsets.group = p; /* every union member is a pointer to the same storage */
    switch (kind) {
    case PLUSH_PMX_MORPH_VERTEX: morph->offsets.vertex = p; break;
    case PLUSH_PMX_MORPH_BONE: morph->offsets.bone = p; break;
    case PLUSH_PMX_MORPH_MATERIAL: morph->offsets.material = p; break;
    case PLUSH_PMX_MORPH_IMPULSE: morph->offsets.impulse = p; break;
    case PLUSH_PMX_MORPH_GROUP:
    case PLUSH_PMX_MORPH_FLIP: break;
    default: morph->offsets.uv = p; break;
    }
    return p;
}

plush_pmx_model *pmx_fx_minimal(float version)
{
    plush_pmx_model *m = plush_pmx_create();
    assert_non_null(m);
    m->version = version;
    m->name = pmx_fx_str(m, "min");
    m->name_en = m->comment = m->comment_en = pmx_fx_lit("");
    pmx_fx_vertices(m, 3);
    uint32_t *f = pmx_fx_faces(m, 3);
    f[0] = 0, f[1] = 1, f[2] = 2;
    pmx_fx_textures(m, 1);
    plush_pmx_material *mat = pmx_fx_materials(m, 1);
    mat[0].texture = 0;
    mat[0].index_count = 3;
    pmx_fx_bones(m, 1);
    plush_pmx_morph *mo = pmx_fx_morphs(m, 1);
    plush_pmx_morph_vertex *mv = pmx_fx_morph_offsets(m, &mo[0], PLUSH_PMX_MORPH_VERTEX, 1);
    mv[0].vertex = 2;
    mv[0].offset[1] = 1.0f;
    plush_pmx_display_frame *fr = pmx_fx_frames(m, 1);
    fr[0].special = 1;
    fr[0].element_count = 1;
    fr[0].elements = pmx_fx_alloc(m, 1, sizeof *fr[0].elements);
    pmx_fx_rigid_bodies(m, 1);
    return m;
}

/* ---- the rich model ---------------------------------------------------------------------------- */

#define TEDDY "\xF0\x9F\xA7\xB8" /* U+1F9F8, outside the BMP: a surrogate pair in UTF-16 */

static void set3(float *d, float a, float b, float c) { d[0] = a, d[1] = b, d[2] = c; }
static void set4(float *d, float a, float b, float c, float e) { d[0] = a, d[1] = b, d[2] = c, d[3] = e; }

static void rich_vertices(plush_pmx_model *m, bool v21, uint8_t auv)
{
    plush_pmx_vertex *v = pmx_fx_vertices(m, 12);
    for (size_t i = 0; i < 12; i++) {
        v[i].edge_scale = 0.5f + 0.125f * (float)i;
        set3(v[i].normal, 0.0f, 0.6f, 0.8f);
        v[i].bones[0] = (int32_t)(i % 10);
    }
    /* 0: BDEF1 */
    v[0].bones[0] = 3;
    /* 1: BDEF2 */
    v[1].weight_type = PLUSH_PMX_BDEF2;
    v[1].bones[0] = 1, v[1].bones[1] = 2;
    v[1].weights[0] = 0.25f, v[1].weights[1] = 1.0f - 0.25f;
    /* 2: BDEF4 */
    v[2].weight_type = PLUSH_PMX_BDEF4;
    v[2].bones[0] = 0, v[2].bones[1] = 1, v[2].bones[2] = 2, v[2].bones[3] = 3;
    set4(v[2].weights, 0.1f, 0.2f, 0.3f, 0.4f);
    /* 3: SDEF (sdef 0) */
    v[3].weight_type = PLUSH_PMX_SDEF;
    v[3].bones[0] = 1, v[3].bones[1] = 2;
    v[3].weights[0] = 0.75f, v[3].weights[1] = 1.0f - 0.75f;
    v[3].sdef = 0;
    /* 4: QDEF in 2.1, BDEF4 in 2.0 */
    v[4].weight_type = v21 ? PLUSH_PMX_QDEF : PLUSH_PMX_BDEF4;
    v[4].bones[0] = 4, v[4].bones[1] = 5, v[4].bones[2] = 6, v[4].bones[3] = 7;
    set4(v[4].weights, 0.4f, 0.3f, 0.2f, 0.1f);
    /* 5: SDEF (sdef 1) */
    v[5].weight_type = PLUSH_PMX_SDEF;
    v[5].bones[0] = 2, v[5].bones[1] = 3;
    v[5].weights[0] = 0.5f, v[5].weights[1] = 1.0f - 0.5f;
    v[5].sdef = 1;
    /* 6: BDEF4 with unused slots as many tools write them */
    v[6].weight_type = PLUSH_PMX_BDEF4;
    v[6].bones[0] = 0, v[6].bones[1] = 1, v[6].bones[2] = -1, v[6].bones[3] = -1;
    set4(v[6].weights, 0.5f, 0.5f, 0.0f, 0.0f);
    /* 7: BDEF2 with weight 1 */
    v[7].weight_type = PLUSH_PMX_BDEF2;
    v[7].bones[0] = 0, v[7].bones[1] = 9;
    v[7].weights[0] = 1.0f, v[7].weights[1] = 1.0f - 1.0f;

    plush_pmx_sdef *s = pmx_fx_alloc(m, 2, sizeof *s);
    set3(s[0].c, 0.0f, 10.0f, 0.5f);
    set3(s[0].r0, 0.0f, 9.0f, 0.25f);
    set3(s[0].r1, 0.0f, 11.0f, 0.75f);
    set3(s[1].c, 1.0f, 5.0f, -0.5f);
    set3(s[1].r0, 1.5f, 4.0f, -0.25f);
    set3(s[1].r1, 2.5f, 6.0f, -0.125f);
    m->sdefs = s;
    m->sdef_count = 2;
    pmx_fx_additional_uvs(m, auv);
}

static void rich_faces_materials(plush_pmx_model *m, bool v21)
{
    static const uint32_t tris21[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 10, 11, 10};
    static const uint32_t tris20[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11, 10, 9};
    uint32_t *f = pmx_fx_faces(m, 15);
    memcpy(f, v21 ? tris21 : tris20, sizeof tris21);

    plush_str *t = pmx_fx_textures(m, 4);
    t[0] = pmx_fx_str(m, "tex\\body.png");
    t[1] = pmx_fx_str(m, "sph\\肌.sph");
    t[2] = pmx_fx_str(m, "toon\\own_toon.bmp");
    t[3] = pmx_fx_str(m, TEDDY ".png");

    plush_pmx_material *mat = pmx_fx_materials(m, 5);
    for (int i = 0; i < 5; i++) {
        float f0 = (float)i * 0.125f;
        set4(mat[i].diffuse, 0.5f + f0, 0.25f, 0.125f + f0, 1.0f - f0);
        set3(mat[i].specular, 0.1f, 0.2f + f0, 0.3f);
        mat[i].specular_power = 10.0f + (float)i;
        set3(mat[i].ambient, 0.4f, 0.5f, 0.6f - f0);
        set4(mat[i].edge_color, f0, 0.0f, 0.0f, 1.0f);
        mat[i].edge_size = 0.5f + f0;
    }
    mat[0].name = pmx_fx_str(m, "体");
    mat[0].name_en = pmx_fx_str(m, "body");
    mat[0].flags = PLUSH_PMX_MATERIAL_DOUBLE_SIDED | PLUSH_PMX_MATERIAL_GROUND_SHADOW |
                   PLUSH_PMX_MATERIAL_SHADOW_CASTER | PLUSH_PMX_MATERIAL_SHADOW_RECEIVER | PLUSH_PMX_MATERIAL_EDGE;
    mat[0].texture = 0;
    mat[0].sphere_mode = PLUSH_PMX_SPHERE_OFF;
    mat[0].toon_shared = 1, mat[0].toon = 0;
    mat[0].memo = pmx_fx_str(m, "メモ\r\n2行目");
    mat[0].index_count = 6;

    mat[1].name = pmx_fx_str(m, TEDDY "ぬい");
    mat[1].flags = PLUSH_PMX_MATERIAL_DOUBLE_SIDED | PLUSH_PMX_MATERIAL_EDGE;
    mat[1].texture = 1;
    mat[1].sphere_texture = 1;
    mat[1].sphere_mode = PLUSH_PMX_SPHERE_MULTIPLY;
    mat[1].toon_shared = 0, mat[1].toon = 2;
    mat[1].index_count = 3;

    mat[2].name = pmx_fx_str(m, "点");
    mat[2].flags = v21 ? PLUSH_PMX_MATERIAL_POINT | PLUSH_PMX_MATERIAL_VERTEX_COLOR : PLUSH_PMX_MATERIAL_SHADOW_CASTER;
    mat[2].texture = 3;
    mat[2].sphere_texture = 2;
    mat[2].sphere_mode = PLUSH_PMX_SPHERE_ADD;
    mat[2].toon_shared = 1, mat[2].toon = 9;
    mat[2].memo = pmx_fx_str(m, "point");
    mat[2].index_count = 3;

    mat[3].name = pmx_fx_str(m, "線");
    mat[3].flags = v21 ? PLUSH_PMX_MATERIAL_LINE | PLUSH_PMX_MATERIAL_SHADOW_RECEIVER : PLUSH_PMX_MATERIAL_GROUND_SHADOW;
    mat[3].texture = -1;
    mat[3].sphere_texture = 3;
    mat[3].sphere_mode = PLUSH_PMX_SPHERE_SUBTEXTURE;
    mat[3].toon_shared = 0, mat[3].toon = -1;
    mat[3].index_count = 3;

    /* 4: empty name, draws nothing, all flags 2.1 knows */
    mat[4].flags = v21 ? 0xFF : 0x1F;
    mat[4].toon_shared = 1, mat[4].toon = 5;
    mat[4].index_count = 0;
}

static void rich_bones(plush_pmx_model *m)
{
    enum { ROT = PLUSH_PMX_BONE_ROTATABLE, TRA = PLUSH_PMX_BONE_TRANSLATABLE, VIS = PLUSH_PMX_BONE_VISIBLE,
           ENA = PLUSH_PMX_BONE_ENABLED, BASE = ROT | VIS | ENA };
    plush_pmx_bone *b = pmx_fx_bones(m, 10);
    static const char *const names[10] = {"センター", "上半身", "左ひざ", "", TEDDY, "軸", "ローカル", "外部親", "右足ＩＫ", "全部"};
    for (int i = 0; i < 10; i++) {
        b[i].name = pmx_fx_str(m, names[i]);
        set3(b[i].position, (float)i * 0.5f, 10.0f - (float)i, (float)i * -0.25f);
        set3(b[i].tail_offset, 0.0f, 1.0f + (float)i, 0.0f);
    }
    b[0].name_en = pmx_fx_str(m, "center");
    b[1].name_en = pmx_fx_str(m, "upper body");

    /* 0: root, tail is a bone */
    b[0].flags = BASE | TRA | PLUSH_PMX_BONE_TAIL_IS_BONE;
    b[0].tail_bone = 1;
    set3(b[0].tail_offset, 0, 0, 0);
    /* 1: tail offset */
    b[1].parent = 0;
    /* 2: append rotate */
    b[2].parent = 1;
    b[2].layer = 1;
    b[2].flags = BASE | PLUSH_PMX_BONE_APPEND_ROTATE;
    b[2].append_parent = 1, b[2].append_ratio = 0.5f;
    /* 3: append translate; tail is "no bone" */
    b[3].parent = 2;
    b[3].flags = BASE | TRA | PLUSH_PMX_BONE_APPEND_TRANSLATE | PLUSH_PMX_BONE_TAIL_IS_BONE;
    b[3].tail_bone = -1;
    set3(b[3].tail_offset, 0, 0, 0);
    b[3].append_parent = 0, b[3].append_ratio = -1.0f;
    /* 4: append both, local */
    b[4].parent = 0;
    b[4].flags = BASE | PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE | PLUSH_PMX_BONE_APPEND_LOCAL;
    b[4].append_parent = 2, b[4].append_ratio = 0.25f;
    /* 5: fixed axis */
    b[5].parent = 4;
    b[5].flags = BASE | PLUSH_PMX_BONE_FIXED_AXIS;
    set3(b[5].fixed_axis, 0.6f, 0.8f, 0.0f);
    /* 6: local axes */
    b[6].parent = 5;
    b[6].flags = BASE | PLUSH_PMX_BONE_LOCAL_AXES;
    set3(b[6].local_x, 1.0f, 0.0f, 0.0f);
    set3(b[6].local_z, 0.0f, 0.0f, 1.0f);
    /* 7: external parent, after physics */
    b[7].parent = 6;
    b[7].layer = 2;
    b[7].flags = BASE | PLUSH_PMX_BONE_EXTERNAL_PARENT | PLUSH_PMX_BONE_AFTER_PHYSICS;
    b[7].external_key = 42;
    /* 8: IK, a second root; one link with limits, one without */
    b[8].flags = BASE | TRA | PLUSH_PMX_BONE_IK;
    b[8].ik_target = 3;
    b[8].ik_loop_count = 40;
    b[8].ik_limit_angle = 0.5f;
    b[8].ik_link_count = 2;
    b[8].ik_links = pmx_fx_alloc(m, 2, sizeof *b[8].ik_links);
    b[8].ik_links[0].bone = 2;
    b[8].ik_links[0].has_limits = 1;
    set3(b[8].ik_links[0].lower, -3.1415927f, 0.0f, 0.0f);
    set3(b[8].ik_links[0].upper, -0.0087f, 0.0f, 0.0f);
    b[8].ik_links[1].bone = 1;
    /* 9: every flag that adds data at once (the order of the optional blocks matters) */
    b[9].parent = 8;
    b[9].layer = 3;
    b[9].flags = BASE | TRA | PLUSH_PMX_BONE_TAIL_IS_BONE | PLUSH_PMX_BONE_IK | PLUSH_PMX_BONE_APPEND_LOCAL |
                 PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE | PLUSH_PMX_BONE_FIXED_AXIS |
                 PLUSH_PMX_BONE_LOCAL_AXES | PLUSH_PMX_BONE_AFTER_PHYSICS | PLUSH_PMX_BONE_EXTERNAL_PARENT;
    b[9].tail_bone = 0;
    set3(b[9].tail_offset, 0, 0, 0);
    b[9].append_parent = 5, b[9].append_ratio = 0.75f;
    set3(b[9].fixed_axis, 0.0f, 0.0f, 1.0f);
    set3(b[9].local_x, 0.0f, 1.0f, 0.0f);
    set3(b[9].local_z, 1.0f, 0.0f, 0.0f);
    b[9].external_key = -7;
    b[9].ik_target = 6;
    b[9].ik_loop_count = 3;
    b[9].ik_limit_angle = 1.0f;
    b[9].ik_link_count = 1;
    b[9].ik_links = pmx_fx_alloc(m, 1, sizeof *b[9].ik_links);
    b[9].ik_links[0].bone = 5;
    b[9].ik_links[0].has_limits = 1;
    set3(b[9].ik_links[0].lower, -1.0f, -2.0f, -3.0f);
    set3(b[9].ik_links[0].upper, 1.0f, 2.0f, 3.0f);
}

static void rich_morphs(plush_pmx_model *m, bool v21, uint8_t auv)
{
    plush_pmx_morph *mo = pmx_fx_morphs(m, 12);
    static const char *const names[12] = {"あ", "笑い", "ボーン", "UV", "追加UV1", "追加UV2", "追加UV3", "追加UV4",
                                          "材質", "フリップ", "インパルス", ""};
    for (int i = 0; i < 12; i++) {
        mo[i].name = pmx_fx_str(m, names[i]);
        mo[i].panel = (uint8_t)(i % 5);
    }
    mo[0].name_en = pmx_fx_str(m, "a");

    plush_pmx_morph_vertex *v = pmx_fx_morph_offsets(m, &mo[0], PLUSH_PMX_MORPH_VERTEX, 2);
    v[0].vertex = 0, set3(v[0].offset, 0.0f, 0.125f, 0.0f);
    v[1].vertex = 11, set3(v[1].offset, 1.0f, 2.0f, 3.0f);

    plush_pmx_morph_group *g = pmx_fx_morph_offsets(m, &mo[1], PLUSH_PMX_MORPH_GROUP, 2);
    g[0].morph = 0, g[0].weight = 0.5f;
    g[1].morph = 8, g[1].weight = 1.0f;

    plush_pmx_morph_bone *bo = pmx_fx_morph_offsets(m, &mo[2], PLUSH_PMX_MORPH_BONE, 2);
    bo[0].bone = 1;
    set3(bo[0].translation, 1.0f, 0.0f, 0.0f);
    set4(bo[0].rotation, 0.0f, 0.0f, 0.38268343f, 0.9238795f);
    bo[1].bone = 9;
    set3(bo[1].translation, 0.0f, -1.0f, 0.5f);
    set4(bo[1].rotation, 0.5f, 0.5f, 0.5f, 0.5f);

    for (int k = 0; k < 5; k++) {
        uint8_t kind = (uint8_t)(PLUSH_PMX_MORPH_UV + k);
        if (k > auv) /* an additional-UV morph needs that many additional UVs: plain UV instead */
            kind = PLUSH_PMX_MORPH_UV;
        plush_pmx_morph_uv *u = pmx_fx_morph_offsets(m, &mo[3 + k], kind, 1);
        u[0].vertex = (int32_t)(2 + k);
        set4(u[0].offset, 0.1f * (float)k, 0.2f, 0.3f, 0.4f + (float)k);
    }

    plush_pmx_morph_material *mm = pmx_fx_morph_offsets(m, &mo[8], PLUSH_PMX_MORPH_MATERIAL, 2);
    for (int i = 0; i < 2; i++) {
        float s = (float)i + 1.0f;
        mm[i].operation = (uint8_t)i;
        set4(mm[i].diffuse, 0.1f * s, 0.2f * s, 0.3f * s, 0.4f * s);
        set3(mm[i].specular, 0.5f * s, 0.6f * s, 0.7f * s);
        mm[i].specular_power = 8.0f * s;
        set3(mm[i].ambient, 0.9f * s, 1.0f * s, 1.1f * s);
        set4(mm[i].edge_color, 1.2f * s, 1.3f * s, 1.4f * s, 1.5f * s);
        mm[i].edge_size = 1.6f * s;
        set4(mm[i].texture_tint, 1.7f * s, 1.8f * s, 1.9f * s, 2.0f * s);
        set4(mm[i].sphere_tint, 2.1f * s, 2.2f * s, 2.3f * s, 2.4f * s);
        set4(mm[i].toon_tint, 2.5f * s, 2.6f * s, 2.7f * s, 2.8f * s);
    }
    mm[0].material = -1;
    mm[1].material = 2;

    if (v21) {
        plush_pmx_morph_group *fl = pmx_fx_morph_offsets(m, &mo[9], PLUSH_PMX_MORPH_FLIP, 2);
        fl[0].morph = 0, fl[0].weight = 0.5f;
        fl[1].morph = 2, fl[1].weight = 1.0f;
        plush_pmx_morph_impulse *im = pmx_fx_morph_offsets(m, &mo[10], PLUSH_PMX_MORPH_IMPULSE, 2);
        im[0].rigid_body = 0, im[0].local = 1;
        set3(im[0].velocity, 1.0f, 2.0f, 3.0f);
        set3(im[0].torque, -1.0f, -2.0f, -3.0f);
        im[1].rigid_body = 2, im[1].local = 0;
        set3(im[1].velocity, 0.0f, 9.5f, 0.0f);
        set3(im[1].torque, 0.25f, 0.0f, 0.0f);
    } else {
        plush_pmx_morph_group *g2 = pmx_fx_morph_offsets(m, &mo[9], PLUSH_PMX_MORPH_GROUP, 1);
        g2[0].morph = 2, g2[0].weight = 0.5f;
        plush_pmx_morph_vertex *v2 = pmx_fx_morph_offsets(m, &mo[10], PLUSH_PMX_MORPH_VERTEX, 1);
        v2[0].vertex = 5, set3(v2[0].offset, 0.0f, 0.0f, 1.0f);
    }
    /* 11: no offsets at all */
    pmx_fx_morph_offsets(m, &mo[11], PLUSH_PMX_MORPH_VERTEX, 0);
}

static void frame_elements(plush_pmx_model *m, plush_pmx_display_frame *f, const int32_t *pairs, uint32_t n)
{
    f->element_count = n;
    f->elements = n ? pmx_fx_alloc(m, n, sizeof *f->elements) : NULL;
    for (uint32_t i = 0; i < n; i++) {
        f->elements[i].is_morph = (uint8_t)pairs[2 * i];
        f->elements[i].index = pairs[2 * i + 1];
    }
}

static void rich_frames(plush_pmx_model *m)
{
    plush_pmx_display_frame *f = pmx_fx_frames(m, 4);
    f[0].name = pmx_fx_str(m, "Root");
    f[0].name_en = pmx_fx_str(m, "Root");
    f[0].special = 1;
    frame_elements(m, &f[0], (const int32_t[]){0, 0}, 1);
    f[1].name = pmx_fx_str(m, "表情");
    f[1].name_en = pmx_fx_str(m, "Exp");
    f[1].special = 1;
    frame_elements(m, &f[1], (const int32_t[]){1, 0, 1, 1, 1, 11}, 3);
    f[2].name = pmx_fx_str(m, "体" TEDDY);
    frame_elements(m, &f[2], (const int32_t[]){0, 1, 0, 2, 1, 2, 0, 9}, 4);
    /* 3: empty name, no elements */
}

static void rich_physics(plush_pmx_model *m, bool v21)
{
    plush_pmx_rigid_body *r = pmx_fx_rigid_bodies(m, 4);
    static const char *const names[4] = {"頭", "", "スカート" TEDDY, "髪"};
    for (int i = 0; i < 4; i++) {
        float f = (float)i;
        r[i].name = pmx_fx_str(m, names[i]);
        set3(r[i].size, 1.0f + f, 0.5f + f, 0.25f + f);
        set3(r[i].position, f, 15.0f - f, -f * 0.5f);
        set3(r[i].rotation, 0.1f * f, -0.2f * f, 0.3f);
        r[i].mass = 1.0f + 0.5f * f;
        r[i].linear_damping = 0.5f + 0.01f * f;
        r[i].angular_damping = 0.5f + 0.02f * f;
        r[i].restitution = 0.03f * f;
        r[i].friction = 0.5f - 0.04f * f;
    }
    r[0].name_en = pmx_fx_str(m, "head");
    r[0].bone = 0, r[0].group = 0, r[0].mask = 0xFFFF, r[0].shape = 0, r[0].mode = 0;
    r[1].bone = -1, r[1].group = 15, r[1].mask = 0x0001, r[1].shape = 1, r[1].mode = 1;
    r[2].bone = 4, r[2].group = 7, r[2].mask = 0x8000, r[2].shape = 2, r[2].mode = 2;
    r[3].bone = 9, r[3].group = 3, r[3].mask = 0x7FF7, r[3].shape = 2, r[3].mode = 1;

    size_t nj = v21 ? 6 : 2;
    plush_pmx_joint *j = pmx_fx_joints(m, nj);
    static const int32_t pairs[6][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}};
    for (size_t i = 0; i < nj; i++) {
        float f = (float)i;
        j[i].type = (uint8_t)(v21 ? i : PLUSH_PMX_JOINT_SPRING_6DOF);
        j[i].body_a = pairs[i][0];
        j[i].body_b = pairs[i][1];
        set3(j[i].position, f, 1.0f + f, 2.0f + f);
        set3(j[i].rotation, 0.1f * f, 0.2f, 0.3f);
        set3(j[i].linear_lower, -1.0f - f, -2.0f, -3.0f);
        set3(j[i].linear_upper, 1.0f + f, 2.0f, 3.0f);
        set3(j[i].angular_lower, -0.5f, -0.25f - f, -0.125f);
        set3(j[i].angular_upper, 0.5f, 0.25f + f, 0.125f);
        set3(j[i].spring_linear, 10.0f * f, 20.0f, 30.0f);
        set3(j[i].spring_angular, 40.0f, 50.0f * f, 60.0f);
    }
    j[0].name = pmx_fx_str(m, "首");
    j[0].name_en = pmx_fx_str(m, "neck");
    if (nj > 5)
        j[5].name = pmx_fx_str(m, "蝶番" TEDDY);

    if (!v21)
        return;
    plush_pmx_soft_body *s = pmx_fx_soft_bodies(m, 2);
    s[0].name = pmx_fx_str(m, "スカート");
    s[0].name_en = pmx_fx_str(m, "skirt");
    s[0].shape = 0;
    s[0].material = 0;
    s[0].group = 3;
    s[0].mask = 0xFFF7;
    s[0].flags = PLUSH_PMX_SOFT_BLINK | PLUSH_PMX_SOFT_CLUSTERS | PLUSH_PMX_SOFT_LINK_RANDOMIZE;
    s[0].blink_distance = 2;
    s[0].cluster_count = 5;
    s[0].total_mass = 1.5f;
    s[0].margin = 0.0625f;
    s[0].aero_model = 1;
    plush_pmx_soft_config *c = &s[0].config;
    c->vcf = 0.5f, c->dp = 1.5f, c->dg = 2.5f, c->lf = 3.5f, c->pr = 4.5f, c->vc = 5.5f;
    c->df = 6.5f, c->mt = 7.5f, c->chr = 8.5f, c->khr = 9.5f, c->shr = 10.5f, c->ahr = 11.5f;
    c->srhr_cl = 12.5f, c->skhr_cl = 13.5f, c->sshr_cl = 14.5f;
    c->sr_splt_cl = 15.5f, c->sk_splt_cl = 16.5f, c->ss_splt_cl = 17.5f;
    s[0].v_iterations = 1, s[0].p_iterations = 2, s[0].d_iterations = 3, s[0].c_iterations = 4;
    s[0].lst = 0.25f, s[0].ast = 0.5f, s[0].vst = 0.75f;
    s[0].anchor_count = 2;
    s[0].anchors = pmx_fx_alloc(m, 2, sizeof *s[0].anchors);
    s[0].anchors[0].rigid_body = 0, s[0].anchors[0].vertex = 0, s[0].anchors[0].near_mode = 0;
    s[0].anchors[1].rigid_body = 2, s[0].anchors[1].vertex = 4, s[0].anchors[1].near_mode = 1;
    s[0].pin_count = 3;
    s[0].pins = pmx_fx_alloc(m, 3, sizeof *s[0].pins);
    s[0].pins[0] = 1, s[0].pins[1] = 2, s[0].pins[2] = 5;

    /* 1: a rope on no material with nothing attached */
    s[1].name = pmx_fx_str(m, TEDDY);
    s[1].shape = 1;
    s[1].material = -1;
    s[1].mask = 0x0000;
    s[1].total_mass = 0.5f;
}

plush_pmx_model *pmx_fx_rich(float version, uint8_t encoding, uint8_t additional_uv)
{
    bool v21 = version > 2.05f;
    plush_pmx_model *m = plush_pmx_create();
    assert_non_null(m);
    m->version = version;
    m->encoding = encoding;
    m->name = pmx_fx_str(m, "ぬいぐるみ" TEDDY);
    m->name_en = pmx_fx_str(m, "plush");
    m->comment = pmx_fx_str(m, "コメント\r\n二行目 " TEDDY);
    m->comment_en = pmx_fx_lit("");
    rich_vertices(m, v21, additional_uv);
    rich_faces_materials(m, v21);
    rich_bones(m);
    rich_morphs(m, v21, additional_uv);
    rich_frames(m);
    rich_physics(m, v21);
    return m;
}
