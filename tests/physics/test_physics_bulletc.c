/* bulletc: the C ABI over Bullet, reached the way world.c reaches it — dlopen of libplush_physics.so
 * next to the test's build directory and the one exported table. Rigid contact, kinematic bodies, every
 * constraint kind, soft bodies (step, freeze, restore), error paths and determinism; under make check
 * ASan's leak check at exit covers bc_world_destroy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "physics/bulletc.h"
#include "support/mesh_fixture.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DT (1.0f / 60.0f)

typedef struct fixture {
    void *so;
    const plush_bulletc_api *bc;
} fixture;

/* ---- helpers ----------------------------------------------------------------------------------- */

static void translation(float m[16], float x, float y, float z)
{
    memset(m, 0, 16 * sizeof m[0]);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
    m[12] = x;
    m[13] = y;
    m[14] = z;
}

/* Rotation by angle about Y, then translation (column-major). */
static void rot_y_translation(float m[16], float angle, float x, float y, float z)
{
    translation(m, x, y, z);
    m[0] = cosf(angle);
    m[2] = -sinf(angle);
    m[8] = sinf(angle);
    m[10] = cosf(angle);
}

static bc_world *world_new(const plush_bulletc_api *bc)
{
    const bc_world_desc desc = {.gravity = {0.0f, -98.0f, 0.0f}, .air_density = 1.2f};
    char err[BC_ERR] = "";
    bc_world *w = bc->world_create(&desc, err);
    assert_non_null(w);
    return w;
}

/* A static 20 x 2 x 20 box whose top face is y = 0. */
static bc_body *ground_new(const plush_bulletc_api *bc, bc_world *w)
{
    char err[BC_ERR] = "";
    const float half[3] = {10.0f, 1.0f, 10.0f};
    bc_shape *shape = bc->shape_create(w, BC_BOX, half, err);
    assert_non_null(shape);
    bc_body_desc d = {.mass = 0.0f, .friction = 0.5f, .group = 1, .mask = -1};
    translation(d.transform, 0.0f, -1.0f, 0.0f);
    bc_body *body = bc->body_create(w, shape, &d, err);
    assert_non_null(body);
    return body;
}

static bc_body *dynamic_new(const plush_bulletc_api *bc, bc_world *w, bc_shape_kind kind, const float size[3], float x,
                            float y, float z)
{
    char err[BC_ERR] = "";
    bc_shape *shape = bc->shape_create(w, kind, size, err);
    assert_non_null(shape);
    bc_body_desc d = {.mass = 1.0f, .linear_damping = 0.1f, .angular_damping = 0.1f, .friction = 0.5f,
                      .group = 1, .mask = -1};
    translation(d.transform, x, y, z);
    bc_body *body = bc->body_create(w, shape, &d, err);
    assert_non_null(body);
    return body;
}

/* An octahedron of radius r around (0, y, 0): 6 nodes, 12 edges, 8 faces — the smallest closed
 * TriMesh-like soft body. */
enum { OCTA_NODES = 6 };
static const uint32_t octa_faces[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                          {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
static const uint32_t octa_edges[12][2] = {{0, 2}, {2, 1}, {1, 3}, {3, 0}, {0, 4}, {1, 4},
                                           {2, 4}, {3, 4}, {0, 5}, {1, 5}, {2, 5}, {3, 5}};

static bc_soft *octa_new(const plush_bulletc_api *bc, bc_world *w, float r, float y, const float masses[OCTA_NODES])
{
    const float pos[OCTA_NODES][3] = {{r, y, 0}, {-r, y, 0}, {0, y, r}, {0, y, -r}, {0, y + r, 0}, {0, y - r, 0}};
    const float ones[OCTA_NODES] = {1, 1, 1, 1, 1, 1};
    const bc_soft_desc desc = {.node_count = OCTA_NODES, .positions = pos, .masses = masses ? masses : ones,
                               .group = 1, .mask = -1};
    char err[BC_ERR] = "";
    bc_soft *s = bc->soft_create(w, &desc, err);
    assert_non_null(s);
    for (size_t i = 0; i < 12; i++)
        bc->soft_append_link(s, octa_edges[i][0], octa_edges[i][1]);
    for (size_t i = 0; i < 8; i++)
        bc->soft_append_face(s, octa_faces[i][0], octa_faces[i][1], octa_faces[i][2]);
    bc->soft_set_material(s, 1.0f, 1.0f, 1.0f);
    bc->soft_bending(s, 2);
    const bc_soft_config cfg = {.aero_model = 0, .kVCF = 1, .kDP = 0.05f, .kPR = 10.0f, .kDF = 0.2f,
                                .kCHR = 1, .kKHR = 0.1f, .kSHR = 1, .kAHR = 0.7f,
                                .kSRHR_CL = 0.1f, .kSKHR_CL = 1, .kSSHR_CL = 0.5f,
                                .kSR_SPLT_CL = 0.5f, .kSK_SPLT_CL = 0.5f, .kSS_SPLT_CL = 0.5f,
                                .viterations = 0, .piterations = 4, .diterations = 0, .citerations = 4,
                                .collisions = 0x11 /* SDF_RS | VF_SS */, .margin = 0.05f};
    bc->soft_set_config(s, &cfg);
    bc->soft_set_total_mass(s, 1.0f);
    return s;
}

/* ---- setup: load the shared object the way the library does ------------------------------------ */

static int setup(void **state)
{
    /* the build's plugin (PLUSH_PHYSICS_LIB, tests/support/physics_plugin.c) */
    const char *path = getenv("PLUSH_PHYSICS_LIB");
    if (!path)
        return -1;
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!f->so) {
        fprintf(stderr, "test_physics_bulletc: %s\n", dlerror());
        free(f);
        return -1;
    }
    plush_bulletc_get_fn get;
    *(void **)&get = dlsym(f->so, PLUSH_BULLETC_SYMBOL);
    f->bc = get ? get(PLUSH_BULLETC_VERSION) : NULL;
    if (!f->bc) {
        dlclose(f->so);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dlclose(f->so);
    free(f);
    return 0;
}

/* ---- tests -------------------------------------------------------------------------------------- */

static void test_table(void **state)
{
    const fixture *f = *state;
    assert_int_equal(f->bc->version, PLUSH_BULLETC_VERSION);
    assert_true(f->bc->scalar_is_float());
    plush_bulletc_get_fn get;
    *(void **)&get = dlsym(f->so, PLUSH_BULLETC_SYMBOL);
    assert_null(get(PLUSH_BULLETC_VERSION + 1));
    /* nothing else is exported */
    assert_null(dlsym(f->so, "world_create"));
}

static void test_sphere_rests_on_box(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    ground_new(bc, w);
    const float radius[3] = {1.0f, 0, 0};
    bc_body *ball = dynamic_new(bc, w, BC_SPHERE, radius, 0.0f, 5.0f, 0.0f);
    for (int i = 0; i < 300; i++)
        bc->world_step(w, DT);
    float m[16], v[3], a[3];
    bc->body_get_transform(ball, m);
    bc->body_get_velocity(ball, v, a);
    /* resting on the top face: centre one radius above it (1%), not moving */
    assert_float_equal(m[13], 1.0f, 0.01f);
    assert_float_equal(m[12], 0.0f, 0.05f);
    assert_float_equal(m[14], 0.0f, 0.05f);
    assert_true(fabsf(v[1]) < 0.05f);
    bc->world_destroy(w);
}

static void test_filter_lets_bodies_pass(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    char err[BC_ERR] = "";
    const float half[3] = {10.0f, 1.0f, 10.0f};
    bc_shape *shape = bc->shape_create(w, BC_BOX, half, err);
    /* ground in group 1 << 3 whose mask leaves out group 1 << 2: the ball falls through */
    bc_body_desc gd = {.mass = 0.0f, .group = 1 << 3, .mask = (int16_t)~(1 << 2)};
    translation(gd.transform, 0.0f, -1.0f, 0.0f);
    assert_non_null(bc->body_create(w, shape, &gd, err));
    const float radius[3] = {1.0f, 0, 0};
    bc_shape *ball_shape = bc->shape_create(w, BC_SPHERE, radius, err);
    bc_body_desc bd = {.mass = 1.0f, .group = 1 << 2, .mask = -1};
    translation(bd.transform, 0.0f, 5.0f, 0.0f);
    bc_body *ball = bc->body_create(w, ball_shape, &bd, err);
    assert_non_null(ball);
    for (int i = 0; i < 120; i++)
        bc->world_step(w, DT);
    float m[16];
    bc->body_get_transform(ball, m);
    assert_true(m[13] < -10.0f);
    bc->world_destroy(w);
}

static void test_kinematic_follows_transform(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    char err[BC_ERR] = "";
    const float half[3] = {0.5f, 0.5f, 0.5f};
    bc_shape *shape = bc->shape_create(w, BC_BOX, half, err);
    bc_body_desc d = {.kinematic = true, .mass = 3.0f, .group = 1, .mask = -1};
    translation(d.transform, 0.0f, 2.0f, 0.0f);
    bc_body *k = bc->body_create(w, shape, &d, err);
    assert_non_null(k);
    bc->world_step(w, DT); /* gravity must not move it */

    float want[16], got[16];
    rot_y_translation(want, 0.5f, 1.0f, 2.0f, -3.0f);
    bc->body_set_transform(k, want);
    bc->body_get_transform(k, got);
    for (int i = 0; i < 16; i++)
        assert_float_equal(got[i], want[i], 1e-6f);

    /* one step later the body is where it was put, and Bullet derived its velocity from the move */
    bc->world_step(w, DT);
    bc->body_get_transform(k, got);
    for (int i = 0; i < 16; i++)
        assert_float_equal(got[i], want[i], 1e-6f);
    float v[3], a[3];
    bc->body_get_velocity(k, v, a);
    assert_float_equal(v[0], 1.0f / DT, 1e-2f);
    assert_float_equal(v[1], 0.0f, 1e-2f);
    assert_float_equal(v[2], -3.0f / DT, 1e-2f);
    assert_float_equal(a[1], 0.5f / DT, 1e-2f);

    /* a reset: transform and a zero velocity teleport it, so it arrives without the jump's velocity */
    translation(want, 50.0f, 2.0f, 0.0f);
    bc->body_set_transform(k, want);
    bc->body_set_velocity(k, (const float[3]){0, 0, 0}, (const float[3]){0, 0, 0});
    bc->world_step(w, DT);
    bc->body_get_transform(k, got);
    bc->body_get_velocity(k, v, a);
    assert_float_equal(got[12], 50.0f, 1e-6f);
    for (int i = 0; i < 3; i++) {
        assert_float_equal(v[i], 0.0f, 1e-6f);
        assert_float_equal(a[i], 0.0f, 1e-6f);
    }
    bc->world_destroy(w);
}

static void test_constraints_hold(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    char err[BC_ERR] = "";
    const float half[3] = {0.5f, 0.5f, 0.5f};
    bc_shape *shape = bc->shape_create(w, BC_BOX, half, err);
    const float capsule[3] = {0.3f, 1.0f, 0};
    bc_shape *cap = bc->shape_create(w, BC_CAPSULE, capsule, err);
    assert_non_null(cap);

    enum { KINDS = 6 };
    bc_body *anchor[KINDS], *hang[KINDS];
    for (int k = 0; k < KINDS; k++) {
        bc_body_desc a = {.kinematic = true, .group = 1, .mask = -1};
        translation(a.transform, 4.0f * (float)k, 10.0f, 0.0f);
        anchor[k] = bc->body_create(w, shape, &a, err);
        bc_body_desc b = {.mass = 1.0f, .linear_damping = 0.5f, .angular_damping = 0.5f, .group = 1, .mask = -1};
        translation(b.transform, 4.0f * (float)k, 8.0f, 0.0f);
        hang[k] = bc->body_create(w, k % 2 ? cap : shape, &b, err);
        assert_non_null(anchor[k]);
        assert_non_null(hang[k]);
    }
    /* the joint sits at y = 9: one unit below the anchor's centre, one above the hanging body's */
    float fa[16], fb[16];
    translation(fa, 0.0f, -1.0f, 0.0f);
    translation(fb, 0.0f, 1.0f, 0.0f);

    bc_6dof_desc spring = {.use_linear_reference_frame_a = true,
                           .angular_lower = {-0.2f, -0.2f, -0.2f}, .angular_upper = {0.2f, 0.2f, 0.2f},
                           .spring = {false, false, false, true, true, true},
                           .stiffness = {0, 0, 0, 50, 50, 50}, .damping = {1, 1, 1, 1, 1, 1},
                           .stop_erp = 0.475f, .set_equilibrium = true};
    memcpy(spring.frame_a, fa, sizeof fa);
    memcpy(spring.frame_b, fb, sizeof fb);
    bc_6dof_desc plain = spring;
    memset(plain.spring, 0, sizeof plain.spring);
    plain.set_equilibrium = false;
    const bc_p2p_desc p2p = {.pivot_a = {0, -1, 0}, .pivot_b = {0, 1, 0}};
    bc_cone_twist_desc cone = {.swing_span1 = 0.3f, .swing_span2 = 0.3f, .twist_span = 0.2f, .softness = 1.0f,
                               .bias_factor = 0.3f, .relaxation_factor = 1.0f, .damping = 0.01f,
                               .fix_threshold = 0.05f, .motor = true, .max_motor_impulse = 0.1f,
                               .motor_target = {0, 0, 0, 1}};
    memcpy(cone.frame_a, fa, sizeof fa);
    memcpy(cone.frame_b, fb, sizeof fb);
    bc_slider_desc slider = {.use_linear_reference_frame_a = true, .lower_linear = -0.1f, .upper_linear = 0.1f,
                             .lower_angular = -0.1f, .upper_angular = 0.1f, .powered_linear = true,
                             .target_linear_velocity = 0.0f, .max_linear_force = 1.0f};
    memcpy(slider.frame_a, fa, sizeof fa);
    memcpy(slider.frame_b, fb, sizeof fb);
    bc_hinge_desc hinge = {.use_reference_frame_a = true, .low = -0.3f, .high = 0.3f, .softness = 0.9f,
                           .bias_factor = 0.3f, .relaxation_factor = 1.0f, .motor = true,
                           .target_velocity = 0.0f, .max_motor_impulse = 0.1f};
    memcpy(hinge.frame_a, fa, sizeof fa);
    memcpy(hinge.frame_b, fb, sizeof fb);

    assert_non_null(bc->constraint_6dof(w, anchor[0], hang[0], &spring, err));
    assert_non_null(bc->constraint_6dof(w, anchor[1], hang[1], &plain, err));
    assert_non_null(bc->constraint_p2p(w, anchor[2], hang[2], &p2p, err));
    assert_non_null(bc->constraint_cone_twist(w, anchor[3], hang[3], &cone, err));
    assert_non_null(bc->constraint_slider(w, anchor[4], hang[4], &slider, err));
    assert_non_null(bc->constraint_hinge(w, anchor[5], hang[5], &hinge, err));

    for (int i = 0; i < 300; i++)
        bc->world_step(w, DT);
    for (int k = 0; k < KINDS; k++) {
        float m[16];
        bc->body_get_transform(hang[k], m);
        /* still hanging at its joint, not fallen away */
        assert_float_equal(m[12], 4.0f * (float)k, 0.3f);
        assert_float_equal(m[13], 8.0f, 0.3f);
        assert_float_equal(m[14], 0.0f, 0.3f);
    }
    bc->world_destroy(w);
}

static void test_errors(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    char err[BC_ERR] = "";
    assert_null(bc->world_create(NULL, err));
    assert_true(err[0] != '\0');
    const bc_world_desc bad = {.gravity = {0, NAN, 0}};
    err[0] = '\0';
    assert_null(bc->world_create(&bad, err));
    assert_true(err[0] != '\0');

    bc_world *w = world_new(bc);
    bc_world *other = world_new(bc);
    const float neg[3] = {-1.0f, 1.0f, 1.0f};
    err[0] = '\0';
    assert_null(bc->shape_create(w, BC_SPHERE, neg, err));
    assert_true(err[0] != '\0');
    assert_null(bc->shape_create(w, (bc_shape_kind)7, neg, NULL)); /* err may be NULL */

    bc_body *a = dynamic_new(bc, w, BC_SPHERE, (const float[3]){1, 0, 0}, 0, 0, 0);
    bc_body *b = dynamic_new(bc, other, BC_SPHERE, (const float[3]){1, 0, 0}, 0, 0, 0);
    const bc_p2p_desc p2p = {{0}, {0}};
    err[0] = '\0';
    assert_null(bc->constraint_p2p(w, a, b, &p2p, err));
    assert_true(err[0] != '\0');
    assert_null(bc->constraint_p2p(w, a, a, &p2p, err));

    const float pos[1][3] = {{0, 0, 0}};
    const bc_soft_desc empty = {.node_count = 0, .positions = pos};
    assert_null(bc->soft_create(w, &empty, err));
    const float nan_pos[1][3] = {{0, INFINITY, 0}};
    const bc_soft_desc nan_desc = {.node_count = 1, .positions = nan_pos};
    assert_null(bc->soft_create(w, &nan_desc, err));

    /* indices past the soft body are ignored, not written */
    bc_soft *s = octa_new(bc, w, 1.0f, 3.0f, NULL);
    bc->soft_append_link(s, 0, 99);
    bc->soft_append_face(s, 0, 1, 99);
    bc->soft_set_node(s, 6, pos[0], pos[0]);
    bc->soft_set_node_inverse_mass(s, 1000, 0.0f);
    bc->soft_append_anchor(s, 0, b); /* body of another world */
    float x[OCTA_NODES + 1][3], untouched[OCTA_NODES + 1][3];
    memset(x, 0x7f, sizeof x);
    memcpy(untouched, x, sizeof x);
    bc->soft_get_nodes(s, 1, OCTA_NODES, x, NULL, NULL); /* one past the end: nothing copied */
    assert_memory_equal(x, untouched, sizeof x);
    bc->soft_finish(s);
    bc->soft_finish(s); /* twice is harmless */
    for (int i = 0; i < 10; i++)
        bc->world_step(w, DT);
    bc->world_destroy(w);
    bc->world_destroy(other);
    bc->world_destroy(NULL);
}

static void test_soft_steps_finite(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    ground_new(bc, w);
    bc_soft *s = octa_new(bc, w, 1.0f, 3.0f, NULL);
    bc->soft_finish(s);
    assert_int_equal(bc->soft_node_count(s), OCTA_NODES);

    float x[OCTA_NODES][3], v[OCTA_NODES][3], n[OCTA_NODES][3];
    for (int i = 0; i < 180; i++) {
        bc->world_step(w, DT);
        bc->soft_get_nodes(s, 0, OCTA_NODES, x, v, n);
        assert_true(mesh_fx_all_finite((const float(*)[3])x, OCTA_NODES));
        assert_true(mesh_fx_all_finite((const float(*)[3])v, OCTA_NODES));
        assert_true(mesh_fx_all_finite((const float(*)[3])n, OCTA_NODES));
    }
    /* it fell onto the ground and stayed above it, roughly keeping its size */
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < OCTA_NODES; i++) {
        lo = fminf(lo, x[i][1]);
        hi = fmaxf(hi, x[i][1]);
    }
    assert_true(lo > -0.2f && lo < 0.3f);
    assert_true(hi - lo > 1.0f && hi - lo < 3.0f);
    /* outward normals: the top node's normal points up */
    assert_true(n[4][1] > 0.5f || n[4][1] < -0.5f);
    bc->world_destroy(w);
}

static void test_soft_pin_and_anchor(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    const float masses[OCTA_NODES] = {1, 1, 1, 1, 0, 1}; /* top node pinned from the start */
    bc_soft *s = octa_new(bc, w, 1.0f, 5.0f, masses);
    /* a kinematic box under the bottom node carries it by an anchor */
    char err[BC_ERR] = "";
    bc_shape *shape = bc->shape_create(w, BC_BOX, (const float[3]){0.2f, 0.2f, 0.2f}, err);
    bc_body_desc kd = {.kinematic = true, .group = 2, .mask = 0};
    translation(kd.transform, 0.0f, 4.0f, 0.0f);
    bc_body *k = bc->body_create(w, shape, &kd, err);
    assert_non_null(k);
    bc->soft_append_anchor(s, 5, k);
    bc->soft_finish(s);

    float x[OCTA_NODES][3];
    for (int i = 1; i <= 120; i++) {
        const float t = (float)i * DT;
        /* pinned node moves along a prescribed path */
        const float p[3] = {0.5f * sinf(t), 6.0f + 0.2f * t, 0.0f};
        bc->soft_set_node(s, 4, p, (const float[3]){0, 0, 0});
        float m[16];
        translation(m, 0.5f * sinf(t), 4.0f + 0.2f * t, 0.0f);
        bc->body_set_transform(k, m);
        bc->world_step(w, DT);
        bc->soft_get_nodes(s, 0, OCTA_NODES, x, NULL, NULL);
        assert_true(mesh_fx_all_finite((const float(*)[3])x, OCTA_NODES));
        assert_true(x[4][0] == p[0] && x[4][1] == p[1] && x[4][2] == p[2]);
    }
    /* the anchored node stays with its body */
    assert_float_equal(x[5][0], 0.5f * sinf(2.0f), 0.1f);
    assert_float_equal(x[5][1], 4.0f + 0.4f, 0.1f);
    /* pin by inverse mass at run time */
    bc->soft_set_node_inverse_mass(s, 0, 0.0f);
    float before[3];
    memcpy(before, x[0], sizeof before);
    for (int i = 0; i < 10; i++)
        bc->world_step(w, DT);
    bc->soft_get_nodes(s, 0, 1, x, NULL, NULL);
    assert_memory_equal(x[0], before, sizeof before);
    bc->world_destroy(w);
}

static void test_soft_freeze_and_restore(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    bc_world *w = world_new(bc);
    ground_new(bc, w);
    bc_soft *s = octa_new(bc, w, 1.0f, 3.0f, NULL);
    bc->soft_finish(s);
    float start[OCTA_NODES][3], sv[OCTA_NODES][3];
    bc->soft_get_nodes(s, 0, OCTA_NODES, start, sv, NULL);
    for (int i = 0; i < 20; i++)
        bc->world_step(w, DT);

    float frozen[OCTA_NODES][3], x[OCTA_NODES][3];
    bc->soft_get_nodes(s, 0, OCTA_NODES, frozen, NULL, NULL);
    bc->soft_freeze(s);
    bc->soft_freeze(s);
    for (int i = 0; i < 30; i++)
        bc->world_step(w, DT);
    bc->soft_get_nodes(s, 0, OCTA_NODES, x, NULL, NULL);
    assert_memory_equal(x, frozen, sizeof x);

    /* restoring a saved state puts every node back exactly */
    bc->soft_set_all_nodes(s, (const float(*)[3])start, (const float(*)[3])sv);
    float v[OCTA_NODES][3];
    bc->soft_get_nodes(s, 0, OCTA_NODES, x, v, NULL);
    assert_memory_equal(x, start, sizeof x);
    assert_memory_equal(v, sv, sizeof v);
    bc->world_destroy(w);
}

/* Everything the ABI can make, in one world, with clusters and link randomisation; the world then
 * frees all of it (ASan's leak check at exit). Returns the soft body's nodes after 60 steps. */
static void run_scene(const plush_bulletc_api *bc, float out[OCTA_NODES][3], float out_body[16])
{
    bc_world *w = world_new(bc);
    ground_new(bc, w);
    const float r[3] = {0.5f, 0, 0};
    bc_body *ball = dynamic_new(bc, w, BC_SPHERE, r, 0.3f, 6.0f, 0.1f);
    bc_soft *s = octa_new(bc, w, 1.0f, 3.0f, NULL);
    bc->soft_randomize(s);
    bc->soft_clusters(s, 2);
    bc->soft_finish(s);
    bc_soft *unfinished = octa_new(bc, w, 1.0f, 8.0f, NULL); /* never added: still freed */
    (void)unfinished;
    for (int i = 0; i < 60; i++)
        bc->world_step(w, DT);
    bc->soft_get_nodes(s, 0, OCTA_NODES, out, NULL, NULL);
    bc->body_get_transform(ball, out_body);
    bc->world_destroy(w);
}

static void test_deterministic(void **state)
{
    const plush_bulletc_api *bc = ((const fixture *)*state)->bc;
    float a[OCTA_NODES][3], b[OCTA_NODES][3], ma[16], mb[16];
    run_scene(bc, a, ma);
    run_scene(bc, b, mb);
    assert_true(mesh_fx_all_finite((const float(*)[3])a, OCTA_NODES));
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(ma, mb, sizeof ma);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_sphere_rests_on_box),
        cmocka_unit_test(test_filter_lets_bodies_pass),
        cmocka_unit_test(test_kinematic_follows_transform),
        cmocka_unit_test(test_constraints_hold),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_soft_steps_finite),
        cmocka_unit_test(test_soft_pin_and_anchor),
        cmocka_unit_test(test_soft_freeze_and_restore),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
