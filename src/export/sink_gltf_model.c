/* The baked PMX as a glTF mesh, skin and materials (sink_gltf_internal.h says how coordinates change). */
#include "export/sink_gltf_internal.h"
#include "core/common.h"
#include "plush/sys/render.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plush__gltf_point(const float p[3], float out[3])
{
    out[0] = (float)(p[0] * PLUSH_GLTF_METRES_PER_UNIT);
    out[1] = (float)(p[1] * PLUSH_GLTF_METRES_PER_UNIT);
    out[2] = (float)(-p[2] * PLUSH_GLTF_METRES_PER_UNIT);
}

/* JOINTS_0 / WEIGHTS_0 of one vertex: each bone once (weights of a repeated bone added), zero weights
 * dropped, the sum made 1; a vertex without any weight follows the root, as PMX keeps it at rest. SDEF and
 * QDEF are blended linearly (glTF has neither). */
static void vertex_skin(const plush_pmx_vertex *v, uint16_t joints[4], float weights[4])
{
    int n = v->weight_type == PLUSH_PMX_BDEF1 ? 1 : (v->weight_type == PLUSH_PMX_BDEF2 || v->weight_type == PLUSH_PMX_SDEF) ? 2 : 4;
    int used = 0;
    double w[4] = {0};
    uint16_t j[4] = {0};
    for (int k = 0; k < n; k++) {
        double wk = n == 1 ? 1.0 : v->weights[k];
        if (v->bones[k] < 0 || !(wk > 0))
            continue;
        uint16_t joint = (uint16_t)(v->bones[k] + 1);
        int at = 0;
        while (at < used && j[at] != joint)
            at++;
        if (at == used)
            j[used++] = joint;
        w[at] += wk;
    }
    double sum = w[0] + w[1] + w[2] + w[3];
    if (used == 0 || !(sum > 0)) {
        used = 1;
        j[0] = 0;
        w[0] = sum = 1.0;
    }
    /* the first weight takes the float rounding so the sum is as near 1 as float allows */
    float rest = 1.0f;
    for (int k = 1; k < 4; k++) {
        weights[k] = k < used ? (float)(w[k] / sum) : 0.0f;
        rest -= weights[k];
        joints[k] = k < used ? j[k] : 0;
    }
    weights[0] = rest;
    joints[0] = j[0];
}

static plush_status build_vertices(const plush_pmx_model *m, gltf_model *g, plush_diag *diag)
{
    plush_gltf_desc *d = &g->desc;
    size_t n = m->vertex_count;
    float(*pos)[3] = plush_arena_array(&g->arena, n, sizeof *pos);
    float(*nrm)[3] = plush_arena_array(&g->arena, n, sizeof *nrm);
    float(*uv)[2] = plush_arena_array(&g->arena, n, sizeof *uv);
    uint16_t(*jnt)[4] = plush_arena_array(&g->arena, n, sizeof *jnt);
    float(*wgt)[4] = plush_arena_array(&g->arena, n, sizeof *wgt);
    if (!pos || !nrm || !uv || !jnt || !wgt)
        return plush__no_memory(diag);
    for (size_t v = 0; v < n; v++) {
        const plush_pmx_vertex *pv = &m->vertices[v];
        plush__gltf_point(pv->position, pos[v]);
        double x = pv->normal[0], y = pv->normal[1], z = -(double)pv->normal[2];
        double len = sqrt(x * x + y * y + z * z);
        if (!(len > 1e-12) || !isfinite(len)) /* glTF wants unit normals: a missing one points up */
            x = 0, y = 1, z = 0, len = 1;
        nrm[v][0] = (float)(x / len), nrm[v][1] = (float)(y / len), nrm[v][2] = (float)(z / len);
        uv[v][0] = pv->uv[0], uv[v][1] = pv->uv[1];
        vertex_skin(pv, jnt[v], wgt[v]);
        if (pv->weight_type == PLUSH_PMX_SDEF || pv->weight_type == PLUSH_PMX_QDEF)
            g->sdef_qdef++;
    }
    d->vertex_count = n;
    d->positions = (const float(*)[3])pos;
    d->normals = (const float(*)[3])nrm;
    d->uvs = (const float(*)[2])uv;
    d->joints = (const uint16_t(*)[4])jnt;
    d->weights = (const float(*)[4])wgt;
    return PLUSH_OK;
}

/* Faces with their winding reversed, one primitive per material that draws any. */
static plush_status build_faces(const plush_pmx_model *m, gltf_model *g, plush_diag *diag)
{
    plush_gltf_desc *d = &g->desc;
    uint32_t *idx = plush_arena_array(&g->arena, m->index_count ? m->index_count : 1, sizeof *idx);
    plush_gltf_primitive *prim = plush_arena_array(&g->arena, m->material_count ? m->material_count : 1, sizeof *prim);
    if (!idx || !prim)
        return plush__no_memory(diag);
    for (size_t i = 0; i + 2 < m->index_count; i += 3) {
        idx[i] = m->indices[i];
        idx[i + 1] = m->indices[i + 2];
        idx[i + 2] = m->indices[i + 1];
    }
    size_t first = 0, count = 0;
    for (size_t mat = 0; mat < m->material_count; mat++) {
        size_t c = (size_t)m->materials[mat].index_count;
        if (c >= 3)
            prim[count++] = (plush_gltf_primitive){.first_index = first, .index_count = c - c % 3,
                                                   .material = (int32_t)mat};
        first += c;
    }
    if (!count)
        return plush_diag_fail(diag, PLUSH_E_GEOMETRY, -1, "material", -1, "no material draws a face");
    d->index_count = m->index_count;
    d->indices = idx;
    d->primitives = prim;
    d->primitive_count = count;
    return PLUSH_OK;
}

/* The joints: node 0 the common root at the origin, node 1 + b bone b at its offset from its parent;
 * inverse bind matrices T(-rest position). */
static plush_status build_nodes(const plush_pmx_model *m, gltf_model *g, plush_diag *diag)
{
    plush_gltf_desc *d = &g->desc;
    size_t n = m->bone_count + 1;
    if (n > 65536)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "bone", -1, "%zu bones: glTF joints are 16-bit here",
                               m->bone_count);
    plush_gltf_node *nodes = plush_arena_array(&g->arena, n, sizeof *nodes);
    float(*ibm)[16] = plush_arena_array(&g->arena, n, sizeof *ibm);
    if (!nodes || !ibm)
        return plush__no_memory(diag);
    nodes[0] = (plush_gltf_node){.name = m->name.len ? m->name.s : "model", .parent = -1, .rotation = {0, 0, 0, 1}};
    for (size_t j = 0; j < n; j++) {
        for (int k = 0; k < 16; k++)
            ibm[j][k] = k % 5 == 0 ? 1.0f : 0.0f;
        if (j == 0)
            continue;
        const plush_pmx_bone *b = &m->bones[j - 1];
        float rest[3], parent[3] = {0, 0, 0};
        plush__gltf_point(b->position, rest);
        if (b->parent >= 0)
            plush__gltf_point(m->bones[b->parent].position, parent);
        nodes[j] = (plush_gltf_node){.name = b->name.s, .parent = b->parent + 1, .rotation = {0, 0, 0, 1}};
        for (int k = 0; k < 3; k++) {
            nodes[j].translation[k] = rest[k] - parent[k];
            ibm[j][12 + k] = -rest[k];
        }
    }
    d->nodes = nodes;
    d->node_count = n;
    d->inverse_bind = (const float(*)[16])ibm;
    return PLUSH_OK;
}

/* Embeds texture t, or the image already made of the same file (paths[i]: image i's real path); a texture
 * that cannot be used is a warning and left out (-1). Only running out of memory fails (*st). */
static int32_t load_texture(const plush_str *t, size_t index, const char *model_file, plush__texture_store *store,
                            gltf_model *g, char **paths, bool *translucent, plush_status *st, plush_diag *diag)
{
    plush__texture_file f;
    plush_diag local = {0};
    plush_buf *out = &g->image_data[g->desc.image_count];
    const char *mime = "image/png";
    *translucent = false;
    *st = plush__texture_open(model_file, t, &f, &local);
    for (size_t i = 0; *st == PLUSH_OK && f.path && i < g->desc.image_count; i++)
        if (strcmp(paths[i], f.path) == 0) {
            plush__texture_close(&f);
            return (int32_t)i; /* the caller knows its translucency */
        }
    if (*st == PLUSH_OK && f.path && f.jpeg) {
        /* JPEG has no alpha and is already what glTF embeds: its bytes, not decoded */
        mime = "image/jpeg";
        if (!plush_buf_append(out, f.bytes, f.size))
            *st = plush_diag_fail(&local, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    } else if (*st == PLUSH_OK && f.path) {
        const plush__texture *tex = NULL;
        *st = plush__texture_decode(store, model_file, t, &tex, &local);
        if (*st == PLUSH_OK)
            *st = plush_image_encode_texture(&tex->texels, out, translucent, &local);
    }
    char *path = f.path;
    f.path = NULL;
    plush__texture_close(&f);
    if (*st != PLUSH_OK || !path) {
        free(path);
        plush_buf_free(out);
        if (*st == PLUSH_E_NOMEM) {
            plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
            return -1;
        }
        if (*st != PLUSH_OK)
            plush_diag_warn(diag, -1, "texture", (int64_t)index, "%s: left out of the glTF file", local.message);
        *st = PLUSH_OK;
        return -1;
    }
    paths[g->desc.image_count] = path;
    plush_gltf_image *im = (plush_gltf_image *)&g->desc.images[g->desc.image_count];
    *im = (plush_gltf_image){.name = t->s, .mime_type = mime, .data = out->data, .size = out->size};
    return (int32_t)g->desc.image_count++;
}

static float clamp01(float v) { return v > 1.0f ? 1.0f : v > 0.0f ? v : 0.0f; }

/* PMX colours are the sRGB values MMD puts on screen; glTF's baseColorFactor is linear (the sRGB
 * transfer function of IEC 61966-2-1). */
static float srgb_to_linear(float c)
{
    double v = clamp01(c);
    return (float)(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4));
}

static plush_status build_materials(const plush_pmx_model *m, const plush_str *textures, size_t texture_count,
                                    const char *model_file, plush__texture_store *store, gltf_model *g,
                                    plush_diag *diag)
{
    plush_gltf_desc *d = &g->desc;
    size_t tn = texture_count ? texture_count : 1;
    plush_gltf_material *mats = plush_arena_array(&g->arena, m->material_count ? m->material_count : 1, sizeof *mats);
    int32_t *image_of = plush_arena_array(&g->arena, tn, sizeof *image_of);   /* -2: not tried yet */
    bool *translucent = plush_arena_array(&g->arena, tn, sizeof *translucent); /* per image */
    d->images = plush_arena_array(&g->arena, tn, sizeof *d->images);
    g->image_data = calloc(tn, sizeof *g->image_data);
    char **paths = calloc(tn, sizeof *paths);
    if (!mats || !image_of || !translucent || !d->images || !g->image_data || !paths) {
        free(paths);
        return plush__no_memory(diag);
    }
    for (size_t t = 0; t < tn; t++)
        image_of[t] = -2;
    plush_status st = PLUSH_OK;
    for (size_t i = 0; st == PLUSH_OK && i < m->material_count; i++) {
        const plush_pmx_material *pm = &m->materials[i];
        int32_t t = pm->texture, image = -1;
        if (t >= 0 && (size_t)t < texture_count) {
            if (image_of[t] == -2) {
                bool clear = false;
                size_t before = d->image_count;
                image_of[t] = load_texture(&textures[t], (size_t)t, model_file, store, g, paths, &clear, &st, diag);
                if (d->image_count > before)
                    translucent[before] = clear;
            }
            image = image_of[t];
        }
        mats[i] = (plush_gltf_material){.name = pm->name.s, .image = image,
                                        .double_sided = (pm->flags & PLUSH_PMX_MATERIAL_DOUBLE_SIDED) != 0};
        for (int k = 0; k < 3; k++)
            mats[i].base_color[k] = srgb_to_linear(pm->diffuse[k]);
        mats[i].base_color[3] = clamp01(pm->diffuse[3]);   /* alpha is coverage, not a colour */
        mats[i].blend = mats[i].base_color[3] < 1.0f || (image >= 0 && translucent[image]);
    }
    for (size_t i = 0; i < tn; i++)
        free(paths[i]);
    free(paths);
    d->materials = mats;
    d->material_count = m->material_count;
    return st;
}

plush_status plush__gltf_model_build(const plush_pmx_model *baked, const plush_str *source_textures,
                                     size_t source_texture_count, const char *model_file, plush__texture_store *store,
                                     gltf_model *g, plush_diag *diag)
{
    memset(g, 0, sizeof *g);
    g->desc.mesh_name = baked->name.len ? baked->name.s : "model";
    plush_status st = build_vertices(baked, g, diag);
    if (st == PLUSH_OK)
        st = build_faces(baked, g, diag);
    if (st == PLUSH_OK)
        st = build_nodes(baked, g, diag);
    if (st == PLUSH_OK)
        st = build_materials(baked, source_textures, source_texture_count, model_file, store, g, diag);
    if (st == PLUSH_OK) {
        g->vertex_morph = plush_arena_array(&g->arena, baked->morph_count ? baked->morph_count : 1, sizeof *g->vertex_morph);
        if (!g->vertex_morph)
            st = plush__no_memory(diag);
        for (size_t i = 0; st == PLUSH_OK && i < baked->morph_count; i++)
            if (baked->morphs[i].kind == PLUSH_PMX_MORPH_VERTEX)
                g->vertex_morph[g->vertex_morphs++] = (int32_t)i;
    }
    if (st == PLUSH_OK && g->sdef_qdef)
        plush_diag_warn(diag, -1, "vertex", -1, "%zu SDEF/QDEF vertices written as linear blends (glTF has neither)",
                        g->sdef_qdef);
    return st;
}

plush_status plush__gltf_model_targets(const plush_pmx_model *baked, const bool *used, gltf_model *g, plush_diag *diag)
{
    size_t n = 0;
    for (size_t i = 0; i < g->vertex_morphs; i++)
        n += used[i];
    plush_gltf_target *targets = plush_arena_array(&g->arena, n ? n : 1, sizeof *targets);
    if (!targets)
        return plush__no_memory(diag);
    size_t t = 0;
    for (size_t i = 0; i < g->vertex_morphs; i++) {
        if (!used[i])
            continue;
        const plush_pmx_morph *mo = &baked->morphs[g->vertex_morph[i]];
        float(*off)[3] = plush_arena_array(&g->arena, baked->vertex_count, sizeof *off);
        if (!off)
            return plush__no_memory(diag);
        for (uint32_t k = 0; k < mo->offset_count; k++) {
            const plush_pmx_morph_vertex *mv = &mo->offsets.vertex[k];
            if (mv->vertex < 0 || (size_t)mv->vertex >= baked->vertex_count)
                continue;
            float o[3];
            plush__gltf_point(mv->offset, o);
            for (int c = 0; c < 3; c++)
                off[mv->vertex][c] += o[c];
        }
        targets[t++] = (plush_gltf_target){.name = mo->name.s, .positions = (const float(*)[3])off};
    }
    g->desc.targets = targets;
    g->desc.target_count = n;
    return PLUSH_OK;
}

void plush__gltf_model_free(gltf_model *g)
{
    if (!g)
        return;
    for (size_t i = 0; g->image_data && i < g->desc.image_count; i++)
        plush_buf_free(&g->image_data[i]);
    free(g->image_data);
    plush_arena_free(&g->arena);
    memset(g, 0, sizeof *g);
}
