/* A plush-like toy built in code, for the one-command flow (plush run --cage): separate closed pieces (a
 * head, a body, two arms, two legs) as an ordinary MMD model has them, a skeleton whose body hangs from
 * the head by physics, and a motion that holds the toy by the head and swings it.
 *
 *   plush_pmx_model *m = toy_fx_model();        // PMX 2.0, no soft body
 *   plush_vmd_motion *v = toy_fx_swing(300);     // the head carried and swung, 300 frames
 *
 * Needs cmocka (helpers fail the running test when out of memory).
 */
#ifndef PLUSH_TESTS_TOY_FIXTURE_H
#define PLUSH_TESTS_TOY_FIXTURE_H

#include "plush/pmx.h"
#include "plush/vmd.h"

/* Bones 0 "root", 1 "head" (child of root, at y 10), 2 "body" (child of head, at y 8.6). Materials
 * "head" (a sphere of radius 1.3 at y 10 on the head bone), "body" (radius 1.6 at y 7), "arms" (two of
 * radius 0.55 at x -+1.8, y 7.6) and "legs" (two of radius 0.65 at x -+0.8, y 5.4), all on the body bone
 * but the head. Rigid bodies: "head" follows its bone (mode 0), "body" is dynamic (mode 1, group 1),
 * joined to the head at the neck (y 8.6) by a spring 6DOF with +-0.6 rad of swing. So the head is held
 * (nothing dynamic moves it) and the body is not. TOY_FX_NECK_Y is that height. */
#define TOY_FX_NECK_Y 8.6f
plush_pmx_model *toy_fx_model(void);

/* "root" keys every 30 frames up to `frames`: carried along x by +-3 units and tilted about z by
 * +-0.5 rad in turn (linear curves), back to rest at the end. */
plush_vmd_motion *toy_fx_swing(uint32_t frames);
/* The same keys on another bone (UTF-8 name; it must outlive the motion): "センター" swings any model
 * with MMD's standard skeleton. */
plush_vmd_motion *toy_fx_swing_bone(const char *bone, uint32_t frames);

#endif
