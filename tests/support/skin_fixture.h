/* Proxy skinning fixtures built in code: random triangle soups and flat sheets as proxies, random
 * bindings (1 to 4 influences, random weights), and affine motions with the exact answer to compare.
 *
 *   skin_fx f;
 *   skin_fx_soup(&f, 40, 50, 3000);                        // 40 nodes, 50 triangles, 3000 bound vertices
 *   plush_proxy_skin *skin = skin_fx_skin(&f, PLUSH_PROXY_BLEND_LINEAR, false);
 *   skin_fx_affine a = {.b = {1, 2, 3}};
 *   skin_fx_random_rotation(a.m);
 *   skin_fx_move(&f, skin, &a);                            // moves the proxy, updates, applies
 *   skin_fx_expect(&f, &a);                                // every vertex and normal where a takes it
 *   plush_proxy_skin_destroy(skin);
 *   plush_arena_free(&f.arena);
 *
 * Needs cmocka (helpers fail the running test). Random numbers come from one fixed xorshift sequence, so
 * every run sees the same cases.
 */
#ifndef PLUSH_TESTS_SKIN_FIXTURE_H
#define PLUSH_TESTS_SKIN_FIXTURE_H

#include "plush/proxy.h"

/* x -> m x + b; a struct so it can be passed as const (C11 cannot add const to double (*)[3]). */
typedef struct skin_fx_affine {
    double m[3][3];
    double b[3];
} skin_fx_affine;

typedef struct skin_fx {
    plush_arena arena;
    float (*nodes)[3];
    float (*moved)[3];
    size_t node_count;
    uint32_t (*tris)[3];
    size_t tri_count;
    float (*points)[3];
    float (*normals)[3];
    float (*out_p)[3];
    float (*out_n)[3];
    size_t count;
    plush_proxy_binding binding;
    plush_proxy_mesh mesh;
} skin_fx;

/* Uniform in [lo, hi). */
double skin_fx_rnd(double lo, double hi);
/* Zero-filled arena memory; fails the test when out of memory. */
void *skin_fx_array(plush_arena *arena, size_t count, size_t size);
/* Every array of f (and its binding, proxy_share included) for the given counts, zero-filled. */
void skin_fx_alloc(skin_fx *f, size_t nodes, size_t tris, size_t count);
/* Vertex v gets 1 + v % 4 distinct random triangles with random weights summing to 1, proxy_share 1,
 * and a random normal of length 0.5 to 3 (the skin must renormalise). */
void skin_fx_bind_randomly(skin_fx *f);
/* A soup of well-shaped random triangles in [-2, 2]^3 with random vertices around it, bound randomly. */
void skin_fx_soup(skin_fx *f, size_t nodes, size_t tris, size_t count);
/* A flat proxy (a jittered 8x8 grid in a tilted plane with axes u, v and normal w) and 2000 vertices on
 * the plane (on_plane) or up to 1 away from it, bound randomly. */
void skin_fx_sheet(skin_fx *f, bool on_plane, double u[3], double v[3], double w[3]);
/* A skin on f's proxy, binding, points and normals; fails the test when create fails. */
plush_proxy_skin *skin_fx_skin(skin_fx *f, plush_proxy_blend blend, bool stretch);
/* Moves the proxy by the map, updates and applies into out_p/out_n. The bone-skinned input there is NaN
 * where proxy_share is 1 (never read) and the exact answer elsewhere. */
void skin_fx_move(skin_fx *f, plush_proxy_skin *skin, const skin_fx_affine *map);
/* Every vertex where the map takes it (relative error below 1e-5: the distance over the larger of the
 * expected point's distance from the origin and the proxy's size, 2), every normal along M^-T n within
 * 1e-5 and of unit length within 1e-6. */
void skin_fx_expect(const skin_fx *f, const skin_fx_affine *map);
/* Rotation by angle about axis (any length), row-major. */
void skin_fx_rotation(const double axis[3], double angle, double out[3][3]);
void skin_fx_random_rotation(double out[3][3]);

#endif
