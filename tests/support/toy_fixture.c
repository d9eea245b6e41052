/* The plush-like toy: see toy_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "toy_fixture.h"
#include "mesh_fixture.h"
#include "pmx_fixture.h"
#include "plush/sys/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A UV sphere centred at (x, y, 0). */
static mesh_fx moved_sphere(float r, float x, float y, unsigned rings, unsigned segments)
{
    mesh_fx s = mesh_fx_uv_sphere(r, rings, segments);
    for (size_t i = 0; i < s.vertex_count; i++)
        s.positions[i][0] += x, s.positions[i][1] += y;
    return s;
}

/* Two spheres as one mesh. */
static mesh_fx pair(float r, float x, float y)
{
    mesh_fx a = moved_sphere(r, -x, y, 10, 16), b = moved_sphere(r, x, y, 10, 16), out;
    out.vertex_count = a.vertex_count + b.vertex_count;
    out.index_count = a.index_count + b.index_count;
    out.positions = calloc(out.vertex_count, sizeof *out.positions);
    out.indices = calloc(out.index_count, sizeof *out.indices);
    assert_non_null(out.positions);
    assert_non_null(out.indices);
    memcpy(out.positions, a.positions, a.vertex_count * sizeof *a.positions);
    memcpy(out.positions + a.vertex_count, b.positions, b.vertex_count * sizeof *b.positions);
    memcpy(out.indices, a.indices, a.index_count * sizeof *a.indices);
    for (size_t i = 0; i < b.index_count; i++)
        out.indices[a.index_count + i] = b.indices[i] + (uint32_t)a.vertex_count;
    mesh_fx_free(&a);
    mesh_fx_free(&b);
    return out;
}

plush_pmx_model *toy_fx_model(void)
{
    plush_pmx_model *m = mesh_fx_model(3);
    m->version = 2.0f;
    m->name = pmx_fx_str(m, "plush toy");
    static const char *const names[] = {"root", "head", "body"};
    static const float y[] = {0, 10, TOY_FX_NECK_Y};
    for (int i = 0; i < 3; i++) {
        m->bones[i].name = m->bones[i].name_en = pmx_fx_str(m, names[i]);
        m->bones[i].position[1] = y[i];
        m->bones[i].flags |= PLUSH_PMX_BONE_TRANSLATABLE;
    }
    mesh_fx head = moved_sphere(1.3f, 0, 10, 16, 24), body = moved_sphere(1.6f, 0, 7, 16, 24);
    mesh_fx arms = pair(0.55f, 1.8f, 7.6f), legs = pair(0.65f, 0.8f, 5.4f);
    mesh_fx_add_material(m, "head", &head, 1);
    mesh_fx_add_material(m, "body", &body, 2);
    mesh_fx_add_material(m, "arms", &arms, 2);
    mesh_fx_add_material(m, "legs", &legs, 2);
    mesh_fx_free(&head);
    mesh_fx_free(&body);
    mesh_fx_free(&arms);
    mesh_fx_free(&legs);

    plush_pmx_rigid_body *rb = pmx_fx_rigid_bodies(m, 2);
    rb[0].name = rb[0].name_en = pmx_fx_str(m, "head");
    rb[0].bone = 1, rb[0].group = 0, rb[0].mode = PLUSH_PMX_RIGID_FOLLOW_BONE;
    rb[0].shape = PLUSH_PMX_RIGID_SPHERE, rb[0].size[0] = 1.2f;
    rb[0].position[0] = 0, rb[0].position[1] = 10;
    rb[1].name = rb[1].name_en = pmx_fx_str(m, "body");
    rb[1].bone = 2, rb[1].group = 1, rb[1].mode = PLUSH_PMX_RIGID_PHYSICS;
    rb[1].shape = PLUSH_PMX_RIGID_SPHERE, rb[1].size[0] = 1.5f;
    rb[1].position[0] = 0, rb[1].position[1] = 7;
    rb[0].mask = (uint16_t)(0xFFFF & ~2u), rb[1].mask = (uint16_t)(0xFFFF & ~1u); /* head and body pass */
    plush_pmx_joint *j = pmx_fx_joints(m, 1);
    j[0].name = j[0].name_en = pmx_fx_str(m, "neck");
    j[0].type = PLUSH_PMX_JOINT_SPRING_6DOF;
    j[0].body_a = 0, j[0].body_b = 1;
    j[0].position[1] = TOY_FX_NECK_Y;
    for (int k = 0; k < 3; k++)
        j[0].angular_lower[k] = -0.6f, j[0].angular_upper[k] = 0.6f;
    return m;
}

plush_vmd_motion *toy_fx_swing(uint32_t frames)
{
    return toy_fx_swing_bone("root", frames);
}

plush_vmd_motion *toy_fx_swing_bone(const char *bone, uint32_t frames)
{
    plush_vmd_motion *v = plush_vmd_create();
    assert_non_null(v);
    size_t n = frames / 30 + 2;
    v->bone_keys = plush_arena_array(plush_vmd_arena(v), n, sizeof *v->bone_keys);
    assert_non_null(v->bone_keys);
    v->bone_key_count = 0;
    for (uint32_t f = 0;; f += 30) {
        uint32_t at = f < frames ? f : frames;
        plush_vmd_bone_key *k = &v->bone_keys[v->bone_key_count++];
        memset(k, 0, sizeof *k);
        k->name = (plush_str){.s = bone, .len = (uint32_t)strlen(bone)};
        k->frame = at;
        int phase = (int)(at / 30) % 4; /* rest, right, rest, left */
        bool end = at == frames;
        float side = end || phase % 2 == 0 ? 0.0f : phase == 1 ? 1.0f : -1.0f;
        k->translation[0] = 3.0f * side;
        float a = 0.5f * side;
        k->rotation[2] = sinf(a / 2), k->rotation[3] = cosf(a / 2);
        pmx_fx_linear_curves(k->interpolation);
        if (end)
            break;
    }
    return v;
}
