/* Scenes built in code. */
#include "scene_fixture.h"
#include "mesh_fixture.h"
#include "pmx_fixture.h"
#include "plush/sys/core.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

void scene_fx_pin_top(plush_pmx_model *m, size_t material, size_t soft_body)
{
    size_t first = 0;
    for (size_t k = 0; k < material; k++)
        first += (size_t)m->materials[k].index_count;
    int32_t top = -1;
    for (size_t i = first; i < first + (size_t)m->materials[material].index_count; i++) {
        uint32_t v = m->indices[i];
        if (top < 0 || m->vertices[v].position[1] > m->vertices[top].position[1])
            top = (int32_t)v;
    }
    plush_pmx_soft_body *s = &m->soft_bodies[soft_body];
    s->pin_count = 1;
    s->pins = plush_arena_array(plush_pmx_arena(m), 1, sizeof *s->pins);
    assert_non_null(s->pins);
    s->pins[0] = top;
}

plush_pmx_model *scene_fx_pinned_plush(void)
{
    plush_pmx_model *m = mesh_fx_plush();
    plush_pmx_soft_body *s = &m->soft_bodies[0];
    s->total_mass = 1;
    s->p_iterations = 4;
    s->config.pr = 50;
    s->config.dp = 0.05f;
    s->lst = 0.8f;
    scene_fx_pin_top(m, 1, 0); /* the cage is material 1, after the body's faces */
    return m;
}

plush_vmd_motion *scene_fx_sway(void)
{
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    v->bone_key_count = 3;
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), 3, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    for (int i = 0; i < 3; i++) {
        plush_vmd_bone_key *k = &v->bone_keys[i];
        k->name = (plush_str){.s = "root", .len = 4};
        k->frame = (uint32_t)(20 * i);
        k->translation[0] = i == 1 ? 3.0f : 0.0f;
        k->rotation[3] = 1;
        pmx_fx_linear_curves(k->interpolation);
    }
    return v;
}
