/* Proxy skinning fixtures built in code. */
#include "skin_fixture.h"
#include "plush/sys/core.h"
#include "plush/sys/proxy.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

double skin_fx_rnd(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

void *skin_fx_array(plush_arena *arena, size_t count, size_t size)
{
    void *p = plush_arena_array(arena, count, size);
    assert_non_null(p);
    return p;
}

void skin_fx_alloc(skin_fx *f, size_t nodes, size_t tris, size_t count)
{
    memset(f, 0, sizeof *f);
    f->node_count = nodes;
    f->tri_count = tris;
    f->count = count;
    f->nodes = skin_fx_array(&f->arena, nodes, sizeof *f->nodes);
    f->moved = skin_fx_array(&f->arena, nodes, sizeof *f->moved);
    f->tris = skin_fx_array(&f->arena, tris, sizeof *f->tris);
    f->points = skin_fx_array(&f->arena, count, sizeof *f->points);
    f->normals = skin_fx_array(&f->arena, count, sizeof *f->normals);
    f->out_p = skin_fx_array(&f->arena, count, sizeof *f->out_p);
    f->out_n = skin_fx_array(&f->arena, count, sizeof *f->out_n);
    plush_proxy_binding *b = &f->binding;
    b->vertex_count = count;
    b->triangle_count = tris;
    b->triangles = skin_fx_array(&f->arena, count, sizeof *b->triangles);
    b->weights = skin_fx_array(&f->arena, count, sizeof *b->weights);
    b->proxy_share = skin_fx_array(&f->arena, count, sizeof *b->proxy_share);
    f->mesh = (plush_proxy_mesh){.nodes = (const float(*)[3])f->nodes, .node_count = nodes,
                                 .triangles = (const uint32_t(*)[3])f->tris, .triangle_count = tris};
}

static bool usable(const float a[3], const float b[3], const float c[3])
{
    float m[16];
    double e1[3], e2[3];
    for (int k = 0; k < 3; k++) {
        e1[k] = b[k] - a[k];
        e2[k] = c[k] - a[k];
    }
    double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    /* Well-shaped triangles only, so the tolerance below measures the skinning, not a sliver. */
    return plush_proxy_triangle_frame(a, b, c, m) && n[0] * n[0] + n[1] * n[1] + n[2] * n[2] > 0.01;
}

void skin_fx_bind_randomly(skin_fx *f)
{
    for (size_t v = 0; v < f->count; v++) {
        int used = 1 + (int)(v % 4);
        float sum = 0;
        for (int k = 0; k < PLUSH_PROXY_INFLUENCES; k++) {
            int32_t t = -1;
            float w = 0;
            if (k < used) {
                bool again;
                do {
                    t = (int32_t)skin_fx_rnd(0, (double)f->tri_count);
                    again = false;
                    for (int j = 0; j < k; j++)
                        again |= f->binding.triangles[v][j] == t;
                } while (again);
                w = (float)skin_fx_rnd(0.05, 1);
            }
            f->binding.triangles[v][k] = t;
            f->binding.weights[v][k] = w;
            sum += w;
        }
        for (int k = 0; k < used; k++)
            f->binding.weights[v][k] /= sum;
        f->binding.proxy_share[v] = 1;
        double n[3], len = 0;
        for (int k = 0; k < 3; k++) {
            n[k] = skin_fx_rnd(-1, 1);
            len += n[k] * n[k];
        }
        double scale = skin_fx_rnd(0.5, 3) / sqrt(len);
        for (int k = 0; k < 3; k++)
            f->normals[v][k] = (float)(n[k] * scale);
    }
}

void skin_fx_soup(skin_fx *f, size_t nodes, size_t tris, size_t count)
{
    skin_fx_alloc(f, nodes, tris, count);
    for (size_t i = 0; i < nodes; i++)
        for (int k = 0; k < 3; k++)
            f->nodes[i][k] = (float)skin_fx_rnd(-2, 2);
    for (size_t i = 0; i < tris; i++) {
        do {
            for (int k = 0; k < 3; k++)
                f->tris[i][k] = (uint32_t)skin_fx_rnd(0, (double)nodes);
        } while (f->tris[i][0] == f->tris[i][1] || f->tris[i][1] == f->tris[i][2] ||
                 f->tris[i][0] == f->tris[i][2] ||
                 !usable(f->nodes[f->tris[i][0]], f->nodes[f->tris[i][1]], f->nodes[f->tris[i][2]]));
    }
    for (size_t v = 0; v < count; v++)
        for (int k = 0; k < 3; k++)
            f->points[v][k] = (float)skin_fx_rnd(-2.5, 2.5);
    skin_fx_bind_randomly(f);
}

plush_proxy_skin *skin_fx_skin(skin_fx *f, plush_proxy_blend blend, bool stretch)
{
    plush_proxy_skin_options opt = {.blend = blend, .stretch = stretch};
    plush_proxy_skin *skin = NULL;
    plush_diag diag = {0};
    assert_int_equal(plush_proxy_skin_create(&f->mesh, &f->binding, (const float(*)[3])f->points,
                                             (const float(*)[3])f->normals, &opt, &skin, &diag),
                     PLUSH_OK);
    assert_non_null(skin);
    return skin;
}

static void invert_transpose(const skin_fx_affine *map, double out[3][3])
{
    const double(*m)[3] = map->m;
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                 m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
            out[r][c] = (m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1]) / det;
        }
}

/* Where the map takes vertex v: M p + b, and its normal: M^-T n, unit. */
static void expected_vertex(const skin_fx *f, size_t v, const skin_fx_affine *map, double p[3], double n[3])
{
    double it[3][3], len = 0;
    invert_transpose(map, it);
    const float *q = f->points[v], *r = f->normals[v];
    for (int k = 0; k < 3; k++) {
        p[k] = map->m[k][0] * q[0] + map->m[k][1] * q[1] + map->m[k][2] * q[2] + map->b[k];
        n[k] = it[k][0] * r[0] + it[k][1] * r[1] + it[k][2] * r[2];
        len += n[k] * n[k];
    }
    for (int k = 0; k < 3; k++)
        n[k] /= sqrt(len);
}

void skin_fx_move(skin_fx *f, plush_proxy_skin *skin, const skin_fx_affine *map)
{
    for (size_t i = 0; i < f->node_count; i++)
        for (int r = 0; r < 3; r++)
            f->moved[i][r] = (float)(map->m[r][0] * f->nodes[i][0] + map->m[r][1] * f->nodes[i][1] +
                                     map->m[r][2] * f->nodes[i][2] + map->b[r]);
    const float *share = f->binding.proxy_share;
    for (size_t v = 0; v < f->count; v++) {
        double p[3], n[3];
        expected_vertex(f, v, map, p, n);
        for (int k = 0; k < 3; k++) {
            f->out_p[v][k] = !share || share[v] >= 1 ? NAN : (float)p[k];
            f->out_n[v][k] = !share || share[v] >= 1 ? NAN : (float)n[k];
        }
    }
    plush_proxy_skin_update(skin, (const float(*)[3])f->moved);
    plush_proxy_skin_apply(skin, f->out_p, f->out_n);
}

void skin_fx_expect(const skin_fx *f, const skin_fx_affine *map)
{
    double worst = 0, worst_n = 0;
    for (size_t v = 0; v < f->count; v++) {
        double e[3], en[3], elen = 0, err = 0, errn = 0, nlen = 0;
        expected_vertex(f, v, map, e, en);
        for (int r = 0; r < 3; r++) {
            elen += e[r] * e[r];
            err += (f->out_p[v][r] - e[r]) * (f->out_p[v][r] - e[r]);
            errn += (f->out_n[v][r] - en[r]) * (f->out_n[v][r] - en[r]);
            nlen += (double)f->out_n[v][r] * f->out_n[v][r];
        }
        double rel = sqrt(err) / fmax(sqrt(elen), 2.0);
        worst = fmax(worst, rel != rel ? INFINITY : rel);
        worst_n = fmax(worst_n, errn != errn ? INFINITY : sqrt(errn));
        assert_true(fabs(sqrt(nlen) - 1) < 1e-6);
    }
    assert_true(worst < 1e-5);
    assert_true(worst_n < 1e-5);
}

void skin_fx_rotation(const double axis[3], double angle, double out[3][3])
{
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double x = axis[0] / len, y = axis[1] / len, z = axis[2] / len, c = cos(angle), s = sin(angle), t = 1 - c;
    double r[3][3] = {{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
                      {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
                      {t * x * z - s * y, t * y * z + s * x, t * z * z + c}};
    memcpy(out, r, sizeof r);
}

void skin_fx_random_rotation(double out[3][3])
{
    double axis[3] = {skin_fx_rnd(-1, 1), skin_fx_rnd(-1, 1), skin_fx_rnd(-1, 1) + 0.1};
    skin_fx_rotation(axis, skin_fx_rnd(-M_PI, M_PI), out);
}

void skin_fx_sheet(skin_fx *f, bool on_plane, double u[3], double v[3], double w[3])
{
    enum { G = 8 };
    skin_fx_alloc(f, (G + 1) * (G + 1), 2 * G * G, 2000);
    double rot[3][3];
    skin_fx_random_rotation(rot);
    for (int k = 0; k < 3; k++) {
        u[k] = rot[k][0];
        v[k] = rot[k][1];
        w[k] = rot[k][2];
    }
    for (int i = 0; i <= G; i++)
        for (int j = 0; j <= G; j++) {
            double a = i - G / 2.0 + skin_fx_rnd(-0.2, 0.2), b = j - G / 2.0 + skin_fx_rnd(-0.2, 0.2);
            for (int k = 0; k < 3; k++)
                f->nodes[i * (G + 1) + j][k] = (float)((a * u[k] + b * v[k]) * 0.5);
        }
    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++) {
            uint32_t n00 = (uint32_t)(i * (G + 1) + j), n10 = n00 + G + 1;
            uint32_t(*t)[3] = f->tris + 2 * (i * G + j);
            t[0][0] = n00, t[0][1] = n10, t[0][2] = n10 + 1;
            t[1][0] = n10 + 1, t[1][1] = n00 + 1, t[1][2] = n00;
        }
    for (size_t p = 0; p < f->count; p++) {
        double a = skin_fx_rnd(-2, 2), b = skin_fx_rnd(-2, 2), h = on_plane ? 0 : skin_fx_rnd(-1, 1);
        for (int k = 0; k < 3; k++)
            f->points[p][k] = (float)(a * u[k] + b * v[k] + h * w[k]);
    }
    skin_fx_bind_randomly(f);
}

