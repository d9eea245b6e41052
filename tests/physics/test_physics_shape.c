/* A rigid body's shape as plain geometry (physics/rigid_shape.h): whether a point that moved in a straight
 * line went through a capsule or a sphere -- across its core, half its thickness about its axis, to the other
 * side -- as the soft measure's "through a limb" counts it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "physics/rigid_shape.h"

#include <math.h>

static plush_pmx_rigid_body shape(uint8_t kind, float r, float h)
{
    plush_pmx_rigid_body rb = {.shape = kind, .bone = -1};
    rb.size[0] = r, rb.size[1] = h, rb.size[2] = r;
    return rb;
}

static bool through(const plush_pmx_rigid_body *rb, double ax, double ay, double az, double bx, double by, double bz)
{
    const double a[3] = {ax, ay, az}, b[3] = {bx, by, bz};
    return plush__rigid_passed_through(rb, a, b);
}

/* A capsule of radius 0.6 whose cylinder runs 2 along Y (its core: 0.3 about the segment y in -1..1). */
static void test_capsule(void **state)
{
    (void)state;
    plush_pmx_rigid_body rb = shape(PLUSH_PMX_RIGID_CAPSULE, 0.6f, 2.0f);
    assert_true(through(&rb, -1, 0, 0, 1, 0, 0));         /* straight across the axis */
    assert_true(through(&rb, 1, 0.5, 0.2, -1, 0.4, -0.1)); /* across it, a little aslant */
    assert_false(through(&rb, 1, 0, 0, 1, 0.5, 0));       /* along its side */
    assert_false(through(&rb, -1, 0, 0, 0, 0, 1));        /* a quarter turn round it: the chord stays 0.71 out */
    /* a turn of 150 degrees about it at 0.7 in one step: the chord comes within 0.18 of the axis */
    double t = 150 * acos(-1.0) / 180;
    assert_true(through(&rb, 0.7, 0, 0, 0.7 * cos(t), 0, 0.7 * sin(t)));
    assert_false(through(&rb, 0.1, 0, 0, -0.1, 0, 0.05)); /* deep inside, jittering about the axis */
    assert_false(through(&rb, -1, 0, 0, -0.1, 0, 0));     /* into the core: in, not through */
    assert_false(through(&rb, -1, 3, 0, 1, 3, 0));        /* over its cap, 2 from the top of the segment */
    assert_true(through(&rb, -1, 1.2, 0, 1, 1.2, 0));     /* through its cap, 0.2 from the segment's end */
    assert_true(through(&rb, -1, 0.4, 0.29, 1, 0.4, 0.29)); /* just inside the core */
    assert_false(through(&rb, -1, 0.4, 0.31, 1, 0.4, 0.31)); /* just outside it */
    assert_true(through(&rb, 0.5, -3, 0, -0.5, 3, 0));    /* steeply across, over the whole segment */
}

/* A sphere's core is a ball of half its radius; a box is not measured. */
static void test_sphere_and_box(void **state)
{
    (void)state;
    plush_pmx_rigid_body ball = shape(PLUSH_PMX_RIGID_SPHERE, 1.0f, 0);
    assert_true(through(&ball, -2, 0.1, 0, 2, -0.1, 0));
    assert_false(through(&ball, -2, 0.6, 0, 2, 0.6, 0)); /* 0.6 from its centre: through its rim, not its core */
    assert_false(through(&ball, -2, 0, 0, -0.2, 0, 0));
    plush_pmx_rigid_body box = shape(PLUSH_PMX_RIGID_BOX, 1.0f, 1.0f);
    assert_false(through(&box, -2, 0, 0, 2, 0, 0));
    plush_pmx_rigid_body none = shape(7, 1.0f, 1.0f);
    assert_false(through(&none, -2, 0, 0, 2, 0, 0));
    plush_pmx_rigid_body flat = shape(PLUSH_PMX_RIGID_CAPSULE, 0.0f, 1.0f);
    assert_false(through(&flat, -2, 0, 0, 2, 0, 0)); /* no thickness, no core */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capsule),
        cmocka_unit_test(test_sphere_and_box),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
