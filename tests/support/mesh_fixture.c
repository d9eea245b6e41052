/* Meshes for PMX models built in code. */
#include "mesh_fixture.h"
#include "pmx_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

plush_pmx_model *mesh_fx_model(size_t bone_count)
{
    plush_pmx_model *m = plush_pmx_create();
    assert_non_null(m);
    m->version = 2.1f;
    m->name = pmx_fx_str(m, "mesh fixture");
    m->name_en = m->comment = m->comment_en = pmx_fx_lit("");
    plush_pmx_bone *b = pmx_fx_bones(m, bone_count);
    for (size_t i = 1; i < bone_count; i++)
        b[i].parent = (int32_t)i - 1;
    return m;
}

/* Grows an arena array by copying: fixtures are small. */
static void *regrow(plush_pmx_model *m, const void *old, size_t old_count, size_t new_count, size_t size)
{
    void *p = pmx_fx_alloc(m, new_count, size);
    if (old_count)
        memcpy(p, old, old_count * size);
    return p;
}

size_t mesh_fx_add_material(plush_pmx_model *m, const char *name, const mesh_fx *mesh, int32_t bone)
{
    size_t v0 = m->vertex_count, f0 = m->index_count, k = m->material_count;
    plush_pmx_vertex *v = regrow(m, m->vertices, v0, v0 + mesh->vertex_count, sizeof *v);
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        plush_pmx_vertex *x = &v[v0 + i];
        const float *p = mesh->positions[i];
        memcpy(x->position, p, sizeof x->position);
        float len = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        for (int c = 0; c < 3; c++)
            x->normal[c] = len > 0 ? p[c] / len : (c == 1);
        x->uv[0] = (float)i / (float)(mesh->vertex_count ? mesh->vertex_count : 1);
        x->bones[0] = bone;
        x->bones[1] = x->bones[2] = x->bones[3] = -1;
        x->weights[0] = 1.0f;
        x->edge_scale = 1.0f;
        x->weight_type = PLUSH_PMX_BDEF1;
        x->sdef = -1;
    }
    m->vertices = v;
    m->vertex_count = v0 + mesh->vertex_count;
    uint32_t *f = regrow(m, m->indices, f0, f0 + mesh->index_count, sizeof *f);
    for (size_t i = 0; i < mesh->index_count; i++)
        f[f0 + i] = (uint32_t)v0 + mesh->indices[i];
    m->indices = f;
    m->index_count = f0 + mesh->index_count;

    plush_pmx_material *old = m->materials;
    plush_pmx_material *mat = pmx_fx_materials(m, k + 1);
    if (k)
        memcpy(mat, old, k * sizeof *mat);
    mat[k].name = pmx_fx_str(m, name);
    mat[k].index_count = (int32_t)mesh->index_count;
    return k;
}

size_t mesh_fx_add_soft_body(plush_pmx_model *m, int32_t material, uint8_t shape)
{
    size_t k = m->soft_body_count;
    plush_pmx_soft_body *old = m->soft_bodies;
    plush_pmx_soft_body *s = pmx_fx_soft_bodies(m, k + 1);
    if (k)
        memcpy(s, old, k * sizeof *s);
    s[k].material = material;
    s[k].shape = shape;
    s[k].name = pmx_fx_str(m, shape == 0 ? "cage" : "rope");
    return k;
}

static mesh_fx mesh_alloc(size_t vertices, size_t indices)
{
    mesh_fx mesh = {.vertex_count = vertices, .index_count = indices};
    mesh.positions = calloc(vertices ? vertices : 1, sizeof *mesh.positions);
    mesh.indices = calloc(indices ? indices : 1, sizeof *mesh.indices);
    assert_non_null(mesh.positions);
    assert_non_null(mesh.indices);
    return mesh;
}

void mesh_fx_free(mesh_fx *mesh)
{
    free(mesh->positions);
    free(mesh->indices);
    memset(mesh, 0, sizeof *mesh);
}

mesh_fx mesh_fx_grid(unsigned n, float size)
{
    mesh_fx g = mesh_alloc((size_t)(n + 1) * (n + 1), (size_t)n * n * 6);
    for (unsigned j = 0; j <= n; j++)
        for (unsigned i = 0; i <= n; i++) {
            float *p = g.positions[j * (n + 1) + i];
            p[0] = size * ((float)i / (float)n - 0.5f);
            p[2] = size * ((float)j / (float)n - 0.5f);
        }
    size_t k = 0;
    for (unsigned j = 0; j < n; j++)
        for (unsigned i = 0; i < n; i++) {
            uint32_t a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
            uint32_t t[6] = {a, c, b, b, c, d};
            memcpy(g.indices + k, t, sizeof t);
            k += 6;
        }
    return g;
}

mesh_fx mesh_fx_cube(float h)
{
    /* Each face: the axis it faces, its sign; corners walk the other two axes. */
    mesh_fx mesh = mesh_alloc(24, 36);
    size_t v = 0, f = 0;
    for (int axis = 0; axis < 3; axis++)
        for (int sign = -1; sign <= 1; sign += 2) {
            int a = (axis + 1) % 3, b = (axis + 2) % 3;
            static const float corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
            for (int c = 0; c < 4; c++) {
                mesh.positions[v + (size_t)c][axis] = (float)sign * h;
                mesh.positions[v + (size_t)c][a] = corner[c][0] * h;
                mesh.positions[v + (size_t)c][b] = corner[c][1] * h;
            }
            static const uint32_t quad[6] = {0, 1, 2, 0, 2, 3};
            for (int i = 0; i < 6; i++)
                mesh.indices[f++] = (uint32_t)v + quad[sign < 0 ? 5 - i : i];
            v += 4;
        }
    return mesh;
}

mesh_fx mesh_fx_uv_sphere(float radius, unsigned rings, unsigned segments)
{
    size_t cols = segments + 1;
    mesh_fx mesh = mesh_alloc((size_t)(rings + 1) * cols, (size_t)rings * segments * 6);
    const double pi = 3.14159265358979323846;
    for (unsigned r = 0; r <= rings; r++) {
        double theta = pi * r / rings;
        /* Exact zeros at the poles, so the whole pole row welds. */
        float s = r == 0 || r == rings ? 0.0f : (float)sin(theta);
        float y = r == 0 ? 1.0f : r == rings ? -1.0f : (float)cos(theta);
        for (unsigned c = 0; c <= segments; c++) {
            double phi = 2 * pi * (c % segments) / segments; /* the seam column repeats column 0 exactly */
            float *p = mesh.positions[r * cols + c];
            p[0] = radius * s * (float)cos(phi);
            p[1] = radius * y;
            p[2] = radius * s * (float)sin(phi);
        }
    }
    size_t f = 0;
    for (unsigned r = 0; r < rings; r++)
        for (unsigned c = 0; c < segments; c++) {
            uint32_t a = (uint32_t)(r * cols + c), b = a + 1, d = a + (uint32_t)cols, e = d + 1;
            uint32_t quad[6] = {a, d, b, b, d, e};
            memcpy(mesh.indices + f, quad, sizeof quad);
            f += 6;
        }
    return mesh;
}

mesh_fx mesh_fx_icosahedron(float r)
{
    const float t = (1.0f + sqrtf(5.0f)) / 2.0f;
    float corners[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                            {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    static const uint32_t faces[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11},
                                          {1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                          {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9},
                                          {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
    float scale = r / sqrtf(1.0f + t * t);
    mesh_fx mesh = mesh_alloc(60, 60);
    for (size_t i = 0; i < 20; i++)
        for (size_t k = 0; k < 3; k++) {
            for (int c = 0; c < 3; c++)
                mesh.positions[i * 3 + k][c] = corners[faces[i][k]][c] * scale;
            mesh.indices[i * 3 + k] = (uint32_t)(i * 3 + k);
        }
    return mesh;
}

plush_pmx_model *mesh_fx_plush(void)
{
    plush_pmx_model *m = mesh_fx_model(2);
    m->bones[0].name = pmx_fx_str(m, "root");
    m->bones[1].name = pmx_fx_str(m, "body");
    mesh_fx sphere = mesh_fx_uv_sphere(1.0f, 8, 12);
    mesh_fx cage = mesh_fx_icosahedron(1.4f);
    mesh_fx eyes = mesh_fx_cube(0.1f);
    for (size_t i = 0; i < eyes.vertex_count; i++) {
        eyes.positions[i][1] += 0.3f;
        eyes.positions[i][2] -= 0.95f;
    }
    mesh_fx_add_material(m, "body", &sphere, 1);
    size_t mat = mesh_fx_add_material(m, "cage", &cage, 0);
    mesh_fx_add_material(m, "eyes", &eyes, 1);
    mesh_fx_add_soft_body(m, (int32_t)mat, 0);
    mesh_fx_free(&sphere);
    mesh_fx_free(&cage);
    mesh_fx_free(&eyes);
    return m;
}

bool mesh_fx_all_finite(const float (*p)[3], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i][0]) || !isfinite(p[i][1]) || !isfinite(p[i][2]))
            return false;
    return true;
}
