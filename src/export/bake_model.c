/* The baked model: the source model without its soft bodies and soft-body materials, plus one pseudo-bone
 * per proxy triangle that the bound vertices are weighted to. */
#include "export/bake_internal.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static const uint16_t PSEUDO_FLAGS = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_TRANSLATABLE |
                                     PLUSH_PMX_BONE_VISIBLE | PLUSH_PMX_BONE_ENABLED;

static plush_str ascii(plush_arena *arena, const char *s)
{
    size_t n = strlen(s);
    return (plush_str){.s = plush_arena_strdup(arena, s, n), .len = (uint32_t)n};
}

void plush__bake_pseudo_name(size_t triangle, char name[16])
{
    /* pb0001 ... pb9999, then more digits (a proxy never has a billion triangles): inside VMD's 15 bytes */
    snprintf(name, 16, "pb%04u", (unsigned)((triangle + 1) % 1000000000u));
}

bool *plush__bake_soft_materials(const plush_pmx_model *m, plush_arena *arena)
{
    bool *soft = plush_arena_array(arena, m->material_count ? m->material_count : 1, sizeof *soft);
    for (size_t mat = 0; soft && mat < m->material_count; mat++)
        soft[mat] = plush_pmx_material_soft_body(m, mat) >= 0;
    return soft;
}

plush_status plush__bake_keep_vertices(const plush_pmx_model *m, const bool *soft_material, plush_arena *arena,
                                       int32_t **out_map, size_t *out_kept, plush_diag *diag)
{
    size_t n = m->vertex_count ? m->vertex_count : 1;
    uint8_t *use = plush_arena_array(arena, n, 1); /* bit 0: a kept material, bit 1: a soft material */
    int32_t *map = plush_arena_array(arena, n, sizeof *map);
    if (!use || !map)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t count = (size_t)m->materials[mat].index_count;
        uint8_t bit = soft_material[mat] ? 2 : 1;
        for (size_t i = first; i < first + count && i < m->index_count; i++)
            if (m->indices[i] < m->vertex_count)
                use[m->indices[i]] |= bit;
        first += count;
    }
    size_t kept = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        map[v] = use[v] == 2 ? -1 : (int32_t)kept++;
    *out_map = map;
    *out_kept = kept;
    return PLUSH_OK;
}

/* Bound vertex weights: pseudo-bones by share, PMX bones by 1 - share, the four largest kept. */
plush_status plush__bake_visible_faces(const plush_pmx_model *m, const bool *soft_material, plush_arena *arena,
                                       uint32_t (**faces)[3], size_t *count, plush_diag *diag)
{
    uint32_t(*t)[3] = plush_arena_array(arena, m->index_count / 3 + 1, sizeof *t);
    if (!t)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    size_t first = 0, n = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t c = (size_t)m->materials[mat].index_count;
        if (!soft_material[mat])
            for (size_t i = first; i + 3 <= first + c && i + 3 <= m->index_count; i += 3)
                memcpy(t[n++], m->indices + i, sizeof t[0]);
        first += c;
    }
    *faces = t;
    *count = n;
    return PLUSH_OK;
}

static void reweight(const plush_scene_bake *bake, size_t row, size_t root, plush_pmx_vertex *v)
{
    const plush_proxy_binding *pb = bake->binding->binding;
    const plush__bake_fit *fit = bake->fit;
    float share = pb->proxy_share ? pb->proxy_share[row] : 1.0f;
    int32_t bone[8];
    float weight[8];
    int n = 0;
    /* the proxy part: the pseudo-bones of its triangles, or the fitted bones */
    const int32_t *src = fit ? fit->bone[row] : pb->triangles[row];
    const float *src_w = fit ? fit->weight[row] : pb->weights[row];
    for (int k = 0; k < (fit ? 4 : PLUSH_PROXY_INFLUENCES); k++)
        if (src[k] >= 0 && src_w[k] > 0) {
            bone[n] = (int32_t)(root + 1 + (size_t)src[k]);
            weight[n++] = src_w[k] * share;
        }
    if (share < 1.0f)
        for (int k = 0; k < 4; k++)
            if (v->bones[k] >= 0 && v->weights[k] > 0) {
                bone[n] = v->bones[k];
                weight[n++] = v->weights[k] * (1.0f - share);
            }
    /* Largest first (stable: equal weights keep their order), then the four largest. */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && weight[j] > weight[j - 1]; j--) {
            float tw = weight[j];
            weight[j] = weight[j - 1];
            weight[j - 1] = tw;
            int32_t tb = bone[j];
            bone[j] = bone[j - 1];
            bone[j - 1] = tb;
        }
    if (n > 4)
        n = 4;
    float sum = 0;
    for (int i = 0; i < n; i++)
        sum += weight[i];
    if (n == 0 || !(sum > 0))
        return; /* nothing to bind to: keep the vertex's own weights */
    for (int k = 0; k < 4; k++) {
        v->bones[k] = k < n ? bone[k] : -1;
        v->weights[k] = k < n ? weight[k] / sum : 0.0f;
    }
    v->sdef = -1;
    if (n == 1) {
        v->weight_type = PLUSH_PMX_BDEF1;
        v->weights[0] = 1.0f;
    } else if (n == 2) {
        v->weight_type = PLUSH_PMX_BDEF2;
        v->weights[1] = 1.0f - v->weights[0];
    } else {
        v->weight_type = PLUSH_PMX_BDEF4;
    }
}

static plush_status copy_geometry(const plush_scene_bake *bake, const int32_t *vmap, size_t kept, plush_pmx_model *o,
                                  plush_diag *diag)
{
    const plush_scene_binding *b = bake->binding;
    const plush_pmx_model *m = b->model;
    plush_arena *arena = plush_pmx_arena(o);
    size_t root = m->bone_count;
    o->vertices = plush_arena_array(arena, kept ? kept : 1, sizeof *o->vertices);
    if (m->additional_uv)
        o->additional_uvs = plush_arena_array(arena, (kept ? kept : 1) * m->additional_uv, sizeof *o->additional_uvs);
    if (!o->vertices || (m->additional_uv && !o->additional_uvs))
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    o->vertex_count = kept;
    for (size_t v = 0; v < m->vertex_count; v++) {
        if (vmap[v] < 0)
            continue;
        plush_pmx_vertex *dst = &o->vertices[vmap[v]];
        *dst = m->vertices[v];
        int64_t row = plush_scene_binding_row(b, (uint32_t)v);
        if (row >= 0)
            reweight(bake, (size_t)row, root, dst);
        if (m->additional_uv)
            memcpy(o->additional_uvs + (size_t)vmap[v] * m->additional_uv,
                   m->additional_uvs + v * m->additional_uv, m->additional_uv * sizeof *o->additional_uvs);
    }
    o->sdef_count = m->sdef_count;
    o->sdefs = m->sdefs;

    o->materials = plush_arena_array(arena, m->material_count ? m->material_count : 1, sizeof *o->materials);
    o->indices = plush_arena_array(arena, m->index_count ? m->index_count : 1, sizeof *o->indices);
    if (!o->materials || !o->indices)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    size_t first = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t count = (size_t)m->materials[mat].index_count;
        if (!b->proxy.soft_material[mat]) {
            for (size_t i = first; i < first + count; i++)
                o->indices[o->index_count++] = (uint32_t)vmap[m->indices[i]];
            o->materials[o->material_count++] = m->materials[mat];
        }
        first += count;
    }
    return PLUSH_OK;
}

static plush_status add_bones(const plush_scene_bake *bake, plush_pmx_model *o, plush_diag *diag)
{
    const plush_pmx_model *m = bake->binding->model;
    plush_arena *arena = plush_pmx_arena(o);
    size_t tris = bake->fit ? bake->fit->bones : bake->binding->proxy.triangle_count;
    o->bone_count = m->bone_count + 1 + tris;
    o->bones = plush_arena_array(arena, o->bone_count, sizeof *o->bones);
    if (!o->bones)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (m->bone_count)
        memcpy(o->bones, m->bones, m->bone_count * sizeof *o->bones);
    plush_pmx_bone *root = &o->bones[m->bone_count];
    root->name = root->name_en = ascii(arena, "plush_root");
    root->parent = root->tail_bone = root->append_parent = root->ik_target = -1;
    root->flags = PSEUDO_FLAGS;
    for (size_t t = 0; t < tris; t++) {
        plush_pmx_bone *pb = &o->bones[m->bone_count + 1 + t];
        char name[16];
        plush__bake_pseudo_name(t, name);
        pb->name = pb->name_en = ascii(arena, name);
        if (!pb->name.s)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        memcpy(pb->position, bake->fit ? bake->fit->pivot[t] : bake->centroids[t], sizeof pb->position);
        pb->parent = (int32_t)m->bone_count;
        pb->tail_bone = pb->append_parent = pb->ik_target = -1;
        pb->flags = PSEUDO_FLAGS;
    }
    /* One display frame so the pseudo-bones can be found (and keyed) in an editor. */
    o->display_frame_count = m->display_frame_count + 1;
    o->display_frames = plush_arena_array(arena, o->display_frame_count, sizeof *o->display_frames);
    plush_pmx_frame_element *el = plush_arena_array(arena, tris + 1, sizeof *el);
    if (!o->display_frames || !el)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (m->display_frame_count)
        memcpy(o->display_frames, m->display_frames, m->display_frame_count * sizeof *o->display_frames);
    for (size_t i = 0; i <= tris; i++)
        el[i] = (plush_pmx_frame_element){.is_morph = 0, .index = (int32_t)(m->bone_count + i)};
    plush_pmx_display_frame *f = &o->display_frames[m->display_frame_count];
    f->name = f->name_en = ascii(arena, "plush");
    f->element_count = (uint32_t)(tris + 1);
    f->elements = el;
    return PLUSH_OK;
}

/* Morph offsets on removed vertices or materials go with them; the others are renumbered. */
static plush_status copy_morphs(const plush_pmx_model *m, const int32_t *vmap, const int32_t *matmap,
                                plush_pmx_model *o, plush_diag *diag)
{
    plush_arena *arena = plush_pmx_arena(o);
    o->morph_count = m->morph_count;
    o->morphs = plush_arena_array(arena, m->morph_count ? m->morph_count : 1, sizeof *o->morphs);
    if (!o->morphs)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t i = 0; i < m->morph_count; i++) {
        const plush_pmx_morph *src = &m->morphs[i];
        plush_pmx_morph *dst = &o->morphs[i];
        *dst = *src;
        size_t n = src->offset_count ? src->offset_count : 1, k = 0;
        if (src->kind == PLUSH_PMX_MORPH_VERTEX) {
            plush_pmx_morph_vertex *off = plush_arena_array(arena, n, sizeof *off);
            if (!off)
                return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            for (uint32_t j = 0; j < src->offset_count; j++)
                if (vmap[src->offsets.vertex[j].vertex] >= 0) {
                    off[k] = src->offsets.vertex[j];
                    off[k++].vertex = vmap[src->offsets.vertex[j].vertex];
                }
            dst->offsets.vertex = off;
        } else if (src->kind >= PLUSH_PMX_MORPH_UV && src->kind <= PLUSH_PMX_MORPH_UV4) {
            plush_pmx_morph_uv *off = plush_arena_array(arena, n, sizeof *off);
            if (!off)
                return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            for (uint32_t j = 0; j < src->offset_count; j++)
                if (vmap[src->offsets.uv[j].vertex] >= 0) {
                    off[k] = src->offsets.uv[j];
                    off[k++].vertex = vmap[src->offsets.uv[j].vertex];
                }
            dst->offsets.uv = off;
        } else if (src->kind == PLUSH_PMX_MORPH_MATERIAL) {
            plush_pmx_morph_material *off = plush_arena_array(arena, n, sizeof *off);
            if (!off)
                return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            for (uint32_t j = 0; j < src->offset_count; j++) {
                int32_t mat = src->offsets.material[j].material;
                if (mat >= 0 && matmap[mat] < 0)
                    continue;
                off[k] = src->offsets.material[j];
                off[k++].material = mat >= 0 ? matmap[mat] : -1;
            }
            dst->offsets.material = off;
        } else {
            continue;
        }
        dst->offset_count = (uint32_t)k;
    }
    return PLUSH_OK;
}

/* PMX 2.0 knows spring 6DOF joints only (and MMD reads lower > upper as a free axis, equal as locked):
 * each 2.1 joint becomes the spring 6DOF that holds what it held, springs zero. The fields each kind
 * reads are src/physics/world_joints.c's. */
static void to_spring_6dof(plush_pmx_joint *j)
{
    const plush_pmx_joint in = *j;
    const float free_lo = 1.0f, free_hi = 0.0f; /* lower > upper: free */
    memset(j->linear_lower, 0, sizeof j->linear_lower);
    memset(j->linear_upper, 0, sizeof j->linear_upper);
    memset(j->angular_lower, 0, sizeof j->angular_lower);
    memset(j->angular_upper, 0, sizeof j->angular_upper);
    memset(j->spring_linear, 0, sizeof j->spring_linear);
    memset(j->spring_angular, 0, sizeof j->spring_angular);
    switch (in.type) {
    case PLUSH_PMX_JOINT_6DOF: /* the same limits, no springs */
        memcpy(j->linear_lower, in.linear_lower, sizeof j->linear_lower);
        memcpy(j->linear_upper, in.linear_upper, sizeof j->linear_upper);
        memcpy(j->angular_lower, in.angular_lower, sizeof j->angular_lower);
        memcpy(j->angular_upper, in.angular_upper, sizeof j->angular_upper);
        break;
    case PLUSH_PMX_JOINT_P2P: /* the point held, turning free */
        for (int k = 0; k < 3; k++)
            j->angular_lower[k] = free_lo, j->angular_upper[k] = free_hi;
        break;
    case PLUSH_PMX_JOINT_CONE_TWIST: /* symmetric spans: twist about X, swings about Y and Z */
        for (int k = 0; k < 3; k++)
            j->angular_lower[k] = -fabsf(in.angular_lower[k]), j->angular_upper[k] = fabsf(in.angular_lower[k]);
        break;
    case PLUSH_PMX_JOINT_SLIDER: /* along and about X only */
        j->linear_lower[0] = in.linear_lower[0], j->linear_upper[0] = in.linear_upper[0];
        j->angular_lower[0] = in.angular_lower[0], j->angular_upper[0] = in.angular_upper[0];
        break;
    case PLUSH_PMX_JOINT_HINGE: /* about Z only, within the limits stored in x */
        j->angular_lower[2] = in.angular_lower[0], j->angular_upper[2] = in.angular_upper[0];
        break;
    default:
        break;
    }
    j->type = PLUSH_PMX_JOINT_SPRING_6DOF;
}

/* The joints as PMX 2.0 holds them; converted ones are counted in one warning. False when out of memory. */
static bool spring_joints(const plush_pmx_model *m, plush_pmx_model *o, plush_diag *diag)
{
    size_t by_type[6] = {0}, converted = 0;
    for (size_t i = 0; i < m->joint_count; i++)
        if (m->joints[i].type != PLUSH_PMX_JOINT_SPRING_6DOF && m->joints[i].type < 6)
            by_type[m->joints[i].type]++, converted++;
    if (!converted)
        return true;
    plush_pmx_joint *js = plush_arena_array(plush_pmx_arena(o), m->joint_count, sizeof *js);
    if (!js)
        return false;
    memcpy(js, m->joints, m->joint_count * sizeof *js);
    for (size_t i = 0; i < m->joint_count; i++)
        if (js[i].type != PLUSH_PMX_JOINT_SPRING_6DOF && js[i].type < 6)
            to_spring_6dof(&js[i]);
    o->joints = js;
    plush_diag_warn(diag, -1, "joint", -1,
                    "%zu PMX 2.1 joints converted to spring 6DOF for PMX 2.0 (6DOF %zu, point-to-point %zu, "
                    "cone-twist %zu, slider %zu, hinge %zu)",
                    converted, by_type[1], by_type[2], by_type[3], by_type[4], by_type[5]);
    return true;
}

plush_status plush_scene_bake_model(const plush_scene_bake *bake, plush_pmx_model **out, plush_diag *diag)
{
    if (!bake || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no bake or no place for the model");
    *out = NULL;
    const plush_scene_binding *b = bake->binding;
    const plush_pmx_model *m = b->model;
    plush_pmx_model *o = plush_pmx_create();
    if (!o)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    plush_arena *arena = plush_pmx_arena(o);
    o->version = 2.0f;
    o->encoding = m->encoding;
    o->additional_uv = m->additional_uv;
    o->name = m->name;
    o->name_en = m->name_en;
    o->comment = m->comment;
    o->comment_en = m->comment_en;
    o->texture_count = m->texture_count;
    o->textures = m->textures;
    o->rigid_body_count = m->rigid_body_count;
    o->rigid_bodies = m->rigid_bodies;
    o->joint_count = m->joint_count;
    o->joints = m->joints;
    if (!spring_joints(m, o, diag)) {
        plush_pmx_free(o);
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }

    int32_t *vmap = NULL;
    size_t kept = 0;
    int32_t *matmap = plush_arena_array(arena, m->material_count ? m->material_count : 1, sizeof *matmap);
    plush_status st = matmap ? plush__bake_keep_vertices(m, b->proxy.soft_material, arena, &vmap, &kept, diag)
                             : plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    if (st == PLUSH_OK) {
        int32_t next = 0;
        for (size_t mat = 0; mat < m->material_count; mat++)
            matmap[mat] = b->proxy.soft_material[mat] ? -1 : next++;
        st = copy_geometry(bake, vmap, kept, o, diag);
    }
    if (st == PLUSH_OK)
        st = add_bones(bake, o, diag);
    if (st == PLUSH_OK)
        st = copy_morphs(m, vmap, matmap, o, diag);
    if (st != PLUSH_OK) {
        plush_pmx_free(o);
        return st;
    }
    *out = o;
    return PLUSH_OK;
}
