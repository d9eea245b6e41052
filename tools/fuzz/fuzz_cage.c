/* libFuzzer target: the cage path. Any bytes are read as an OBJ cage (as plush attach --proxy reads one),
 * attached to a small model built here, and the attached model goes through the run's budget as plush run
 * would take it. Each step either fails cleanly with a status or gives what the next one takes; the
 * attached model validates; a cage over the budget's sizes never gets past plush_attach. */
#include "plush/attach.h"
#include "plush/obj.h"
#include "plush/scene.h"
#include "plush/sys/core.h"
#include "plush/sys/pmx.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static plush_str text(const char *s)
{
    return (plush_str){.s = s, .len = (uint32_t)strlen(s)};
}

/* A tetrahedron of one material on one bone, a rigid body following it: enough for pins and a mask. */
static plush_pmx_model *small_model(void)
{
    static const float corners[4][3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0, 0, 2}};
    static const uint32_t faces[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    plush_pmx_model *m = plush_pmx_create();
    if (!m)
        abort();
    plush_arena *a = plush_pmx_arena(m);
    m->version = 2.0f;
    m->name = m->name_en = m->comment = m->comment_en = text("fuzz");
    m->vertices = plush_arena_array(a, 4, sizeof *m->vertices);
    m->indices = plush_arena_array(a, 12, sizeof *m->indices);
    m->materials = plush_arena_array(a, 1, sizeof *m->materials);
    m->bones = plush_arena_array(a, 1, sizeof *m->bones);
    m->rigid_bodies = plush_arena_array(a, 1, sizeof *m->rigid_bodies);
    if (!m->vertices || !m->indices || !m->materials || !m->bones || !m->rigid_bodies)
        abort();
    m->vertex_count = 4, m->index_count = 12, m->material_count = 1, m->bone_count = 1, m->rigid_body_count = 1;
    for (int v = 0; v < 4; v++) {
        plush_pmx_vertex *x = &m->vertices[v];
        memset(x, 0, sizeof *x);
        memcpy(x->position, corners[v], sizeof x->position);
        x->normal[1] = 1;
        x->bones[1] = x->bones[2] = x->bones[3] = -1;
        x->weights[0] = 1;
        x->edge_scale = 1;
        x->weight_type = PLUSH_PMX_BDEF1;
        x->sdef = -1;
    }
    memcpy(m->indices, faces, sizeof faces);
    plush_pmx_material *mat = &m->materials[0];
    memset(mat, 0, sizeof *mat);
    mat->name = mat->name_en = text("body");
    mat->memo = text("");
    mat->diffuse[3] = 1, mat->edge_color[3] = 1, mat->edge_size = 1;
    mat->texture = mat->sphere_texture = mat->toon = -1;
    mat->index_count = 12;
    plush_pmx_bone *b = &m->bones[0];
    memset(b, 0, sizeof *b);
    b->name = b->name_en = text("root");
    b->parent = b->tail_bone = b->append_parent = b->ik_target = -1;
    b->flags = PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_VISIBLE | PLUSH_PMX_BONE_ENABLED;
    plush_pmx_rigid_body *r = &m->rigid_bodies[0];
    memset(r, 0, sizeof *r);
    r->name = r->name_en = text("root");
    r->mode = PLUSH_PMX_RIGID_FOLLOW_BONE, r->shape = PLUSH_PMX_RIGID_SPHERE;
    r->size[0] = 1, r->mass = 1, r->mask = 0xFFFF;
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static plush_pmx_model *model;
    if (!model)
        model = small_model();
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    plush_obj_model *obj = NULL;
    if (plush_obj_read(data, size, &obj, &diag) != PLUSH_OK)
        return 0;
    plush_cage_mesh cage = {.vertex_count = obj->vertex_count,
                            .positions = obj->positions,
                            .triangle_count = obj->triangle_count,
                            .triangles = obj->triangles};
    plush_attach_options o = {.cage = &cage, .auto_mask = true, .auto_pins = true};
    plush_pmx_model *out = NULL;
    plush_attach_result res;
    plush_status st = plush_attach(model, &o, &out, &res, &diag);
    if (st != PLUSH_OK) {
        if (out)
            abort();
        plush_obj_model_free(obj);
        return 0;
    }
    /* what attach lets through is a model plush reads back, of no more soft bodies than a run takes */
    plush_diag v = {0};
    plush_diag_reset(&v);
    if (plush_pmx_validate(out, &v) != PLUSH_OK || cage.triangle_count > PLUSH_CAGE_MAX_TRIANGLES ||
        out->soft_body_count > PLUSH_SCENE_MAX_SOFT_BODIES)
        abort();
    plush_scene_estimate e;
    plush_diag b = {0};
    plush_diag_reset(&b);
    st = plush_scene_check_budget(&(plush_scene_desc){.model = out}, 0, &e, &b);
    if ((st != PLUSH_OK && st != PLUSH_E_BUDGET) || !(e.frame_seconds >= 0))
        abort();
    plush_pmx_free(out);
    plush_obj_model_free(obj);
    return 0;
}
