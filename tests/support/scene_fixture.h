/* Scenes built in code: the small plush ready to run (its cage pinned, its soft body a soft pressure ball)
 * and a motion that sways it.
 *
 *   plush_pmx_model *m = scene_fx_pinned_plush();
 *   plush_vmd_motion *v = scene_fx_sway();
 *   plush_scene *sc = NULL;
 *   plush_scene_create(&(plush_scene_desc){.model = m, .motion = v}, &sc, &diag);
 *   ...
 *   plush_scene_destroy(sc); plush_vmd_free(v); plush_pmx_free(m);
 *
 * Needs cmocka (helpers fail the running test when out of memory).
 */
#ifndef PLUSH_TESTS_SCENE_FIXTURE_H
#define PLUSH_TESTS_SCENE_FIXTURE_H

#include "plush/pmx.h"
#include "plush/vmd.h"

/* mesh_fx_plush with its cage pinned at the cage's highest vertex (to bone 0, "root") and its soft body a
 * soft pressure ball: total mass 1, 4 position iterations, pressure 50, damping 0.05, linear stiffness
 * 0.8. */
plush_pmx_model *scene_fx_pinned_plush(void);

/* Pins soft body soft_body at one node: the highest vertex of material `material` (its cage). */
void scene_fx_pin_top(plush_pmx_model *m, size_t material, size_t soft_body);

/* A motion moving bone "root" sideways (+3 in x at frame 20) and back (frame 40), on linear curves. */
plush_vmd_motion *scene_fx_sway(void);

#endif
