/* glTF 2.0 binary writer (gltf.h): the description is checked whole, then the BIN chunk is laid out one
 * buffer view per array (4-byte aligned, so every accessor sits on its component size) while the JSON
 * naming those views is built beside it, and both go into one GLB. */
#include "plush/gltf.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    GL_UNSIGNED_SHORT = 5123,
    GL_UNSIGNED_INT = 5125,
    GL_FLOAT = 5126,
    GL_ARRAY_BUFFER = 34962,
    GL_ELEMENT_ARRAY_BUFFER = 34963
};

typedef struct glb_builder {
    plush_buf bin;
    plush_buf views;       /* the bufferViews' JSON objects, comma separated */
    plush_buf accessors;   /* the accessors' JSON objects */
    size_t view_count, accessor_count;
} glb_builder;

/* ---- JSON text ---------------------------------------------------------------------------------- */

static void put(plush_buf *b, const char *s) { plush_buf_append(b, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(plush_buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->failed = true; /* every format here is short: a long one is a bug, reported as a failure */
        return;
    }
    plush_buf_append(b, tmp, (size_t)n);
}

/* A JSON string; text is UTF-8 already, only quotes, backslashes and control characters are escaped. */
static void put_string(plush_buf *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            putf(b, "\\%c", c);
        else if (c < 0x20)
            putf(b, "\\u%04x", c);
        else
            plush_buf_append(b, s, 1);
    }
    put(b, "\"");
}

static void put_name(plush_buf *b, const char *name)
{
    if (name) {
        put(b, "\"name\":");
        put_string(b, name);
        put(b, ",");
    }
}

/* 17 digits: the float's exact value as a double, so the validator's min/max comparison matches. */
static void put_exact(plush_buf *b, float v) { putf(b, "%.17g", (double)v); }

static void put_floats(plush_buf *b, const float *v, int n)
{
    put(b, "[");
    for (int i = 0; i < n; i++)
        putf(b, i ? ",%.9g" : "%.9g", (double)v[i]);
    put(b, "]");
}

/* ---- BIN chunk: views and accessors ----------------------------------------------------------- */

static size_t add_view(glb_builder *g, const void *data, size_t size, int target)
{
    static const uint8_t zero[4] = {0};
    plush_buf_append(&g->bin, zero, (4 - g->bin.size % 4) % 4);
    size_t offset = g->bin.size;
    plush_buf_append(&g->bin, data, size);
    if (g->view_count)
        put(&g->views, ",");
    putf(&g->views, "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu", offset, size);
    if (target)
        putf(&g->views, ",\"target\":%d", target);
    put(&g->views, "}");
    return g->view_count++;
}

static int type_components(const char *type)
{
    return strcmp(type, "SCALAR") == 0 ? 1 : strcmp(type, "VEC2") == 0 ? 2 : strcmp(type, "VEC3") == 0 ? 3
         : strcmp(type, "VEC4") == 0 ? 4 : 16;
}

/* An accessor of count elements; with bounds (float data only) it carries min and max. */
static size_t add_accessor(glb_builder *g, size_t view, size_t byte_offset, int component, size_t count,
                           const char *type, const float *bounds_data)
{
    if (g->accessor_count)
        put(&g->accessors, ",");
    putf(&g->accessors, "{\"bufferView\":%zu,", view);
    if (byte_offset)
        putf(&g->accessors, "\"byteOffset\":%zu,", byte_offset);
    putf(&g->accessors, "\"componentType\":%d,\"count\":%zu,\"type\":\"%s\"", component, count, type);
    if (bounds_data) {
        int n = type_components(type);
        float lo[16], hi[16];
        for (int k = 0; k < n; k++)
            lo[k] = hi[k] = bounds_data[k];
        for (size_t i = 1; i < count; i++)
            for (int k = 0; k < n; k++) {
                float v = bounds_data[i * (size_t)n + (size_t)k];
                lo[k] = v < lo[k] ? v : lo[k];
                hi[k] = v > hi[k] ? v : hi[k];
            }
        for (int pass = 0; pass < 2; pass++) {
            put(&g->accessors, pass ? ",\"max\":[" : ",\"min\":[");
            for (int k = 0; k < n; k++) {
                if (k)
                    put(&g->accessors, ",");
                put_exact(&g->accessors, pass ? hi[k] : lo[k]);
            }
            put(&g->accessors, "]");
        }
    }
    put(&g->accessors, "}");
    return g->accessor_count++;
}

/* A view holding one accessor. */
static size_t add_array(glb_builder *g, const void *data, size_t count, int component, const char *type, int target,
                        bool bounds)
{
    size_t size = count * (size_t)type_components(type) * (component == GL_UNSIGNED_SHORT ? 2 : 4);
    size_t view = add_view(g, data, size, target);
    return add_accessor(g, view, 0, component, count, type, bounds ? (const float *)data : NULL);
}

/* ---- checks -------------------------------------------------------------------------------------- */

static bool finite_all(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static plush_status check_mesh(const plush_gltf_desc *d, plush_diag *diag)
{
    if (!d->vertex_count || !d->positions || !d->primitive_count || !d->primitives || !d->indices)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "mesh", -1, "no vertices, faces or primitives");
    if (d->vertex_count > UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "mesh", -1, "%zu vertices is too many", d->vertex_count);
    if (!finite_all(&d->positions[0][0], d->vertex_count * 3) ||
        (d->normals && !finite_all(&d->normals[0][0], d->vertex_count * 3)) ||
        (d->uvs && !finite_all(&d->uvs[0][0], d->vertex_count * 2)))
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "vertex", -1, "a vertex attribute is not finite");
    for (size_t i = 0; i < d->index_count; i++)
        if (d->indices[i] >= d->vertex_count)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "face", (int64_t)(i / 3),
                                   "vertex %u out of range (%zu vertices)", d->indices[i], d->vertex_count);
    for (size_t p = 0; p < d->primitive_count; p++) {
        const plush_gltf_primitive *pr = &d->primitives[p];
        if (!pr->index_count || pr->index_count % 3 || pr->first_index > d->index_count ||
            pr->index_count > d->index_count - pr->first_index)
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "primitive", (int64_t)p,
                                   "indices %zu + %zu outside the %zu face indices or not whole triangles",
                                   pr->first_index, pr->index_count, d->index_count);
        if (pr->material < -1 || (pr->material >= 0 && (size_t)pr->material >= d->material_count))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "primitive", (int64_t)p, "material %d out of range",
                                   (int)pr->material);
    }
    for (size_t m = 0; m < d->material_count; m++) {
        int32_t im = d->materials[m].image;
        if (im < -1 || (im >= 0 && (size_t)im >= d->image_count))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m, "image %d out of range", (int)im);
        if (!finite_all(d->materials[m].base_color, 4))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "material", (int64_t)m, "colour is not finite");
    }
    for (size_t i = 0; i < d->image_count; i++)
        if (!d->images[i].data || !d->images[i].size || !d->images[i].mime_type)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "image", (int64_t)i, "empty image");
    for (size_t t = 0; t < d->target_count; t++)
        if (!d->targets[t].positions || !finite_all(&d->targets[t].positions[0][0], d->vertex_count * 3))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "target", (int64_t)t, "missing or not finite");
    return PLUSH_OK;
}

static plush_status check_nodes(const plush_gltf_desc *d, plush_diag *diag)
{
    if (d->node_count > 65536)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "node", -1, "%zu joints is too many", d->node_count);
    if ((d->joints != NULL) != (d->weights != NULL) || (d->joints && (!d->node_count || !d->inverse_bind)))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "skin", -1, "joints without weights, nodes or matrices");
    for (size_t n = 0; n < d->node_count; n++) {
        const plush_gltf_node *nd = &d->nodes[n];
        if (nd->parent < -1 || (nd->parent >= 0 && (size_t)nd->parent >= d->node_count))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "node", (int64_t)n, "parent %d out of range",
                                   (int)nd->parent);
        if (!finite_all(nd->translation, 3) || !finite_all(nd->rotation, 4))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "node", (int64_t)n, "transform is not finite");
        /* a chain longer than the node count has a cycle */
        int32_t p = nd->parent;
        for (size_t steps = 0; p >= 0; steps++, p = d->nodes[p].parent)
            if (steps > d->node_count)
                return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "node", (int64_t)n, "parents form a cycle");
    }
    if (d->joints)
        for (size_t v = 0; v < d->vertex_count; v++)
            for (int k = 0; k < 4; k++)
                if (d->joints[v][k] >= d->node_count || !isfinite(d->weights[v][k]) || d->weights[v][k] < 0)
                    return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "vertex", (int64_t)v,
                                           "joint %u or its weight out of range", d->joints[v][k]);
    return PLUSH_OK;
}

static plush_status check_animation(const plush_gltf_desc *d, plush_diag *diag)
{
    const plush_gltf_animation *a = d->animation;
    if (!a)
        return PLUSH_OK;
    if (!a->key_count || !a->times || (!a->translations && !a->rotations && !a->weights) ||
        (a->weights && !d->target_count))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "animation", -1, "no keys, channels or targets");
    for (size_t k = 0; k < a->key_count; k++)
        if (!isfinite(a->times[k]) || a->times[k] < 0 || (k && !(a->times[k] > a->times[k - 1])))
            return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "animation", (int64_t)k,
                                   "key times must be finite, >= 0 and increasing");
    for (size_t node = 0; a->kept && node < d->node_count; node++) {
        if (a->animated && !a->animated[node])
            continue;
        size_t k = 0;
        while (k < a->key_count && !a->kept[node * a->key_count + k])
            k++;
        if (k == a->key_count)
            return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, "animation", (int64_t)node,
                                   "an animated node keeps no key");
    }
    size_t n = d->node_count * a->key_count;
    if ((a->translations && !finite_all(&a->translations[0][0], n * 3)) ||
        (a->rotations && !finite_all(&a->rotations[0][0], n * 4)) ||
        (a->weights && !finite_all(a->weights, a->key_count * d->target_count)))
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "animation", -1, "a key is not finite");
    return PLUSH_OK;
}

/* ---- the JSON sections ----------------------------------------------------------------------------- */

static void put_nodes(plush_buf *j, const plush_gltf_desc *d)
{
    put(j, "\"nodes\":[");
    for (size_t n = 0; n < d->node_count; n++) {
        const plush_gltf_node *nd = &d->nodes[n];
        put(j, n ? ",{" : "{");
        put_name(j, nd->name);
        bool first = true;
        for (size_t c = 0; c < d->node_count; c++)
            if (d->nodes[c].parent == (int32_t)n) {
                putf(j, first ? "\"children\":[%zu" : ",%zu", c);
                first = false;
            }
        if (!first)
            put(j, "],");
        put(j, "\"translation\":");
        put_floats(j, nd->translation, 3);
        put(j, ",\"rotation\":");
        put_floats(j, nd->rotation, 4);
        put(j, "}");
    }
    put(j, d->node_count ? ",{" : "{");
    put_name(j, d->mesh_name);
    put(j, d->joints ? "\"mesh\":0,\"skin\":0}]," : "\"mesh\":0}],");
    put(j, "\"scene\":0,\"scenes\":[{\"nodes\":[");
    for (size_t n = 0; n < d->node_count; n++)
        if (d->nodes[n].parent < 0)
            putf(j, "%zu,", n);
    putf(j, "%zu]}],", d->node_count);
}

static void put_materials(plush_buf *j, const plush_gltf_desc *d)
{
    if (d->material_count) {
        put(j, "\"materials\":[");
        for (size_t m = 0; m < d->material_count; m++) {
            const plush_gltf_material *mt = &d->materials[m];
            put(j, m ? ",{" : "{");
            put_name(j, mt->name);
            put(j, "\"pbrMetallicRoughness\":{\"baseColorFactor\":");
            put_floats(j, mt->base_color, 4);
            if (mt->image >= 0)
                putf(j, ",\"baseColorTexture\":{\"index\":%d}", (int)mt->image);
            put(j, ",\"metallicFactor\":0,\"roughnessFactor\":1}");
            if (mt->double_sided)
                put(j, ",\"doubleSided\":true");
            if (mt->blend)
                put(j, ",\"alphaMode\":\"BLEND\"");
            put(j, "}");
        }
        put(j, "],");
    }
    if (d->image_count) {
        /* one texture per image, sampled with wrap-around (MMD's UVs repeat) and mipmaps */
        put(j, "\"samplers\":[{\"magFilter\":9729,\"minFilter\":9987}],\"textures\":[");
        for (size_t i = 0; i < d->image_count; i++)
            putf(j, i ? ",{\"sampler\":0,\"source\":%zu}" : "{\"sampler\":0,\"source\":%zu}", i);
        put(j, "],");
    }
}

typedef struct mesh_accessors {
    size_t position, normal, uv, joints, weights;
    size_t *indices;            /* per primitive */
    size_t first_target;        /* target t's POSITION accessor is first_target + t */
} mesh_accessors;

static void put_mesh(plush_buf *j, const plush_gltf_desc *d, const mesh_accessors *acc)
{
    put(j, "\"meshes\":[{");
    put_name(j, d->mesh_name);
    put(j, "\"primitives\":[");
    for (size_t p = 0; p < d->primitive_count; p++) {
        putf(j, "%s{\"attributes\":{\"POSITION\":%zu", p ? "," : "", acc->position);
        if (d->normals)
            putf(j, ",\"NORMAL\":%zu", acc->normal);
        if (d->uvs)
            putf(j, ",\"TEXCOORD_0\":%zu", acc->uv);
        if (d->joints)
            putf(j, ",\"JOINTS_0\":%zu,\"WEIGHTS_0\":%zu", acc->joints, acc->weights);
        putf(j, "},\"indices\":%zu,\"mode\":4", acc->indices[p]);
        if (d->primitives[p].material >= 0)
            putf(j, ",\"material\":%d", (int)d->primitives[p].material);
        if (d->target_count) {
            put(j, ",\"targets\":[");
            for (size_t t = 0; t < d->target_count; t++)
                putf(j, t ? ",{\"POSITION\":%zu}" : "{\"POSITION\":%zu}", acc->first_target + t);
            put(j, "]");
        }
        put(j, "}");
    }
    put(j, "]");
    if (d->target_count) {
        put(j, ",\"weights\":[");
        for (size_t t = 0; t < d->target_count; t++)
            put(j, t ? ",0" : "0");
        put(j, "],\"extras\":{\"targetNames\":[");
        for (size_t t = 0; t < d->target_count; t++) {
            if (t)
                put(j, ",");
            put_string(j, d->targets[t].name ? d->targets[t].name : "");
        }
        put(j, "]}");
    }
    put(j, "}],");
}

/* ---- the animation ----------------------------------------------------------------------------------- */

/* Node n's kept keys gathered into buf (times: 1 float, translations: 3, rotations: 4 per key). */
static size_t gather(const plush_gltf_animation *a, size_t n, const float *src, int width, float *buf)
{
    size_t count = 0;
    for (size_t k = 0; k < a->key_count; k++)
        if (a->kept[n * a->key_count + k])
            memcpy(buf + (count++) * (size_t)width, src + k * (size_t)width, (size_t)width * sizeof *buf);
    return count;
}

static void put_animation(plush_buf *j, glb_builder *g, const plush_gltf_desc *d)
{
    const plush_gltf_animation *a = d->animation;
    /* every key's times: for the morph weights, and for the nodes when all keys are kept */
    size_t times = a->weights || !a->kept ? add_array(g, a->times, a->key_count, GL_FLOAT, "SCALAR", 0, true) : 0;
    plush_buf samplers = {0}, channels = {0};
    size_t count = 0;
    /* a node's own times and values when it keeps some of the keys */
    float *buf = a->kept ? malloc(a->key_count * 4 * sizeof *buf) : NULL;
    if (a->kept && !buf)
        j->failed = true;
    for (size_t n = 0; n < d->node_count && (buf || !a->kept); n++) {
        if (a->animated && !a->animated[n])
            continue;
        size_t input = times, keys = a->key_count;
        if (a->kept) {
            keys = gather(a, n, a->times, 1, buf);
            input = add_array(g, buf, keys, GL_FLOAT, "SCALAR", 0, true);
        }
        for (int path = 0; path < 2; path++) {
            const float *src = path ? (a->rotations ? a->rotations[n * a->key_count] : NULL)
                                    : (a->translations ? a->translations[n * a->key_count] : NULL);
            if (!src)
                continue;
            if (a->kept) {
                gather(a, n, src, path ? 4 : 3, buf);
                src = buf;
            }
            size_t out = add_array(g, src, keys, GL_FLOAT, path ? "VEC4" : "VEC3", 0, false);
            putf(&samplers, "%s{\"input\":%zu,\"output\":%zu,\"interpolation\":\"LINEAR\"}", count ? "," : "",
                 input, out);
            putf(&channels, "%s{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"%s\"}}", count ? "," : "", count,
                 n, path ? "rotation" : "translation");
            count++;
        }
    }
    free(buf);
    if (a->weights) {
        size_t out = add_array(g, a->weights, a->key_count * d->target_count, GL_FLOAT, "SCALAR", 0, false);
        putf(&samplers, "%s{\"input\":%zu,\"output\":%zu,\"interpolation\":\"LINEAR\"}", count ? "," : "", times,
             out);
        putf(&channels, "%s{\"sampler\":%zu,\"target\":{\"node\":%zu,\"path\":\"weights\"}}", count ? "," : "",
             count, d->node_count);
        count++;
    }
    put(j, "\"animations\":[{");
    put_name(j, a->name);
    put(j, "\"samplers\":[");
    plush_buf_append(j, samplers.data, samplers.size);
    put(j, "],\"channels\":[");
    plush_buf_append(j, channels.data, channels.size);
    put(j, "]}],");
    if (samplers.failed || channels.failed)
        j->failed = true;
    plush_buf_free(&samplers);
    plush_buf_free(&channels);
}

/* ---- the whole file ---------------------------------------------------------------------------------- */

static bool put_u32(plush_buf *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return plush_buf_append(b, le, 4);
}

static plush_status assemble(const plush_buf *json, const plush_buf *bin, plush_buf *out, plush_diag *diag)
{
    size_t jpad = (4 - json->size % 4) % 4, bpad = (4 - bin->size % 4) % 4;
    size_t total = 12 + 8 + json->size + jpad + 8 + bin->size + bpad;
    if (total > UINT32_MAX)
        return plush_diag_fail(diag, PLUSH_E_RANGE, -1, "mesh", -1, "%zu bytes is beyond GLB's 4 GiB", total);
    size_t keep = out->size;
    bool ok = plush_buf_reserve(out, total) && plush_buf_append(out, "glTF", 4) && put_u32(out, 2) &&
              put_u32(out, (uint32_t)total) && put_u32(out, (uint32_t)(json->size + jpad)) &&
              plush_buf_append(out, "JSON", 4) && plush_buf_append(out, json->data, json->size) &&
              plush_buf_append(out, "    ", jpad) && put_u32(out, (uint32_t)(bin->size + bpad)) &&
              plush_buf_append(out, "BIN\0", 4) && plush_buf_append(out, bin->data, bin->size) &&
              plush_buf_append(out, "\0\0\0", bpad);
    if (!ok) {
        out->size = keep;
        out->failed = false;
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    }
    return PLUSH_OK;
}

static void put_buffers(plush_buf *j, glb_builder *g, const plush_gltf_desc *d, const mesh_accessors *acc)
{
    put(j, "\"accessors\":[");
    plush_buf_append(j, g->accessors.data, g->accessors.size);
    put(j, "],\"bufferViews\":[");
    plush_buf_append(j, g->views.data, g->views.size);
    putf(j, "],\"buffers\":[{\"byteLength\":%zu}]", g->bin.size + (4 - g->bin.size % 4) % 4);
    if (d->joints) {
        put(j, ",\"skins\":[{\"joints\":[");
        for (size_t n = 0; n < d->node_count; n++)
            putf(j, n ? ",%zu" : "%zu", n);
        putf(j, "],\"inverseBindMatrices\":%zu}]", acc->first_target + d->target_count);
    }
}

plush_status plush_gltf_write(const plush_gltf_desc *d, plush_buf *out, plush_diag *diag)
{
    if (!d || !out)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no description or no output");
    plush_status st = check_mesh(d, diag);
    if (st == PLUSH_OK)
        st = check_nodes(d, diag);
    if (st == PLUSH_OK)
        st = check_animation(d, diag);
    if (st != PLUSH_OK)
        return st;
    glb_builder g = {0};
    plush_buf j = {0};
    mesh_accessors acc = {0};
    acc.indices = calloc(d->primitive_count, sizeof *acc.indices);
    if (!acc.indices)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");

    /* accessors in a fixed order: attributes, indices, targets, inverse binds, images, animation */
    acc.position = add_array(&g, d->positions, d->vertex_count, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER, true);
    if (d->normals)
        acc.normal = add_array(&g, d->normals, d->vertex_count, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER, false);
    if (d->uvs)
        acc.uv = add_array(&g, d->uvs, d->vertex_count, GL_FLOAT, "VEC2", GL_ARRAY_BUFFER, false);
    if (d->joints) {
        acc.joints = add_array(&g, d->joints, d->vertex_count, GL_UNSIGNED_SHORT, "VEC4", GL_ARRAY_BUFFER, false);
        acc.weights = add_array(&g, d->weights, d->vertex_count, GL_FLOAT, "VEC4", GL_ARRAY_BUFFER, false);
    }
    size_t index_view = add_view(&g, d->indices, d->index_count * 4, GL_ELEMENT_ARRAY_BUFFER);
    for (size_t p = 0; p < d->primitive_count; p++)
        acc.indices[p] = add_accessor(&g, index_view, d->primitives[p].first_index * 4, GL_UNSIGNED_INT,
                                      d->primitives[p].index_count, "SCALAR", NULL);
    acc.first_target = g.accessor_count;
    for (size_t t = 0; t < d->target_count; t++)
        add_array(&g, d->targets[t].positions, d->vertex_count, GL_FLOAT, "VEC3", GL_ARRAY_BUFFER, true);
    if (d->joints)
        add_array(&g, d->inverse_bind, d->node_count, GL_FLOAT, "MAT4", 0, false);

    putf(&j, "{\"asset\":{\"version\":\"2.0\",\"generator\":");
    put_string(&j, d->generator ? d->generator : "plush");
    put(&j, "},");
    put_nodes(&j, d);
    put_mesh(&j, d, &acc);
    put_materials(&j, d);
    if (d->image_count) {
        put(&j, "\"images\":[");
        for (size_t i = 0; i < d->image_count; i++) {
            size_t view = add_view(&g, d->images[i].data, d->images[i].size, 0);
            put(&j, i ? ",{" : "{");
            put_name(&j, d->images[i].name);
            putf(&j, "\"bufferView\":%zu,\"mimeType\":", view);
            put_string(&j, d->images[i].mime_type);
            put(&j, "}");
        }
        put(&j, "],");
    }
    if (d->animation)
        put_animation(&j, &g, d);
    put_buffers(&j, &g, d, &acc);
    put(&j, "}");

    bool failed = j.failed || g.bin.failed || g.views.failed || g.accessors.failed;
    st = failed ? plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory") : assemble(&j, &g.bin, out, diag);
    free(acc.indices);
    plush_buf_free(&j);
    plush_buf_free(&g.bin);
    plush_buf_free(&g.views);
    plush_buf_free(&g.accessors);
    return st;
}

plush_status plush_gltf_write_file(const plush_gltf_desc *desc, const char *path, plush_diag *diag)
{
    if (!path)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "no path to write to");
    if (diag && !diag->file)
        diag->file = path;
    plush_buf buf = {0};
    plush_status st = plush_gltf_write(desc, &buf, diag);
    if (st == PLUSH_OK)
        st = plush_file_write_atomic(path, buf.data, buf.size, diag);
    plush_buf_free(&buf);
    return st;
}
