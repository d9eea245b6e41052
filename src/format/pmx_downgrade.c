/* Writing PMX 2.0 from a model with 2.1-only elements: refuse, or drop them with a warning each. */
#include "pmx_internal.h"
#include "plush/sys/core.h"

#include <string.h>

enum { MATERIAL_21_FLAGS = PLUSH_PMX_MATERIAL_VERTEX_COLOR | PLUSH_PMX_MATERIAL_POINT | PLUSH_PMX_MATERIAL_LINE };

static const char *nm(const plush_str *s) { return s->s ? s->s : ""; }

static bool morph_is_21(const plush_pmx_morph *mo) { return mo->kind >= PLUSH_PMX_MORPH_FLIP; }

/* The first 2.1-only element, as section + index; false when there is none. */
static bool first_21(const plush_pmx_model *m, const char **sec, size_t *idx, const char **what)
{
    for (size_t i = 0; i < m->vertex_count; i++)
        if (m->vertices[i].weight_type == PLUSH_PMX_QDEF)
            return *sec = PMX_SEC_VERTEX, *idx = i, *what = "QDEF weights need", true;
    for (size_t i = 0; i < m->material_count; i++)
        if (m->materials[i].flags & MATERIAL_21_FLAGS)
            return *sec = PMX_SEC_MATERIAL, *idx = i, *what = "vertex colour, point and line drawing need", true;
    for (size_t i = 0; i < m->morph_count; i++)
        if (morph_is_21(&m->morphs[i]))
            return *sec = PMX_SEC_MORPH, *idx = i, *what = "flip and impulse morphs need", true;
    for (size_t i = 0; i < m->joint_count; i++)
        if (m->joints[i].type != PLUSH_PMX_JOINT_SPRING_6DOF)
            return *sec = PMX_SEC_JOINT, *idx = i, *what = "joints other than spring 6DOF need", true;
    if (m->soft_body_count)
        return *sec = PMX_SEC_SOFT, *idx = 0, *what = "soft bodies need", true;
    return false;
}

static plush_status drop_morphs(const plush_pmx_model *m, plush_arena *arena, plush_pmx_model *v, plush_diag *diag)
{
    int32_t *remap = plush_arena_array(arena, m->morph_count ? m->morph_count : 1, sizeof *remap);
    plush_pmx_morph *morphs = plush_arena_array(arena, m->morph_count ? m->morph_count : 1, sizeof *morphs);
    if (!remap || !morphs)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < m->morph_count; i++) {
        if (morph_is_21(&m->morphs[i])) {
            remap[i] = -1;
            plush_diag_warn(diag, -1, PMX_SEC_MORPH, (int64_t)i, "%s morph \"%s\" dropped (PMX 2.0 has none)",
                            m->morphs[i].kind == PLUSH_PMX_MORPH_FLIP ? "flip" : "impulse", nm(&m->morphs[i].name));
            continue;
        }
        remap[i] = (int32_t)kept;
        morphs[kept++] = m->morphs[i];
    }
    /* Group members that pointed at dropped morphs go; the rest follow the new numbering. */
    for (size_t i = 0; i < kept; i++) {
        plush_pmx_morph *mo = &morphs[i];
        if (mo->kind != PLUSH_PMX_MORPH_GROUP || !mo->offset_count)
            continue;
        plush_pmx_morph_group *g = plush_arena_array(arena, mo->offset_count, sizeof *g);
        if (!g)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        uint32_t n = 0;
        for (uint32_t k = 0; k < mo->offset_count; k++) {
            int32_t t = mo->offsets.group[k].morph;
            int32_t to = (t >= 0 && (size_t)t < m->morph_count) ? remap[t] : t;
            if (to < 0 && t >= 0 && (size_t)t < m->morph_count)
                continue;
            g[n] = mo->offsets.group[k];
            g[n++].morph = to;
        }
        mo->offsets.group = g;
        mo->offset_count = n;
    }
    plush_pmx_display_frame *frames =
        plush_arena_array(arena, m->display_frame_count ? m->display_frame_count : 1, sizeof *frames);
    if (!frames)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
    for (size_t i = 0; i < m->display_frame_count; i++) {
        frames[i] = m->display_frames[i];
        plush_pmx_frame_element *e = plush_arena_array(arena, frames[i].element_count + 1u, sizeof *e);
        if (!e)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        uint32_t n = 0;
        for (uint32_t k = 0; k < frames[i].element_count; k++) {
            plush_pmx_frame_element el = frames[i].elements[k];
            if (el.is_morph && el.index >= 0 && (size_t)el.index < m->morph_count) {
                if (remap[el.index] < 0)
                    continue;
                el.index = remap[el.index];
            }
            e[n++] = el;
        }
        frames[i].elements = e;
        frames[i].element_count = n;
    }
    v->morphs = morphs;
    v->morph_count = kept;
    v->display_frames = frames;
    return PLUSH_OK;
}

plush_status plush__pmx_downgrade(const plush_pmx_model *m, bool lossy, plush_arena *arena, plush_pmx_model *view,
                           plush_diag *diag)
{
    *view = *m;
    memset(&view->arena, 0, sizeof view->arena); /* the view owns nothing */
    view->version = PMX_V20;
    const char *sec, *what;
    size_t idx;
    if (!first_21(m, &sec, &idx, &what))
        return PLUSH_OK;
    if (!lossy)
        return plush_diag_fail(diag, PLUSH_E_CONFLICT, -1, sec, (int64_t)idx,
                               "%s PMX 2.1; write 2.1, or allow dropping them (lossy)", what);

    size_t qdef = 0, first_qdef = 0;
    for (size_t i = 0; i < m->vertex_count; i++)
        if (m->vertices[i].weight_type == PLUSH_PMX_QDEF && !qdef++)
            first_qdef = i;
    if (qdef) {
        plush_pmx_vertex *vs = plush_arena_array(arena, m->vertex_count, sizeof *vs);
        if (!vs)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        memcpy(vs, m->vertices, m->vertex_count * sizeof *vs);
        for (size_t i = 0; i < m->vertex_count; i++)
            if (vs[i].weight_type == PLUSH_PMX_QDEF)
                vs[i].weight_type = PLUSH_PMX_BDEF4;
        view->vertices = vs;
        plush_diag_warn(diag, -1, PMX_SEC_VERTEX, (int64_t)first_qdef,
                        "QDEF weights of %zu vertices written as BDEF4 (PMX 2.0 has no QDEF)", qdef);
    }
    bool flags = false;
    for (size_t i = 0; i < m->material_count; i++)
        flags |= (m->materials[i].flags & MATERIAL_21_FLAGS) != 0;
    if (flags) {
        plush_pmx_material *mt = plush_arena_array(arena, m->material_count, sizeof *mt);
        if (!mt)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        memcpy(mt, m->materials, m->material_count * sizeof *mt);
        for (size_t i = 0; i < m->material_count; i++) {
            if (!(mt[i].flags & MATERIAL_21_FLAGS))
                continue;
            mt[i].flags &= (uint8_t)~MATERIAL_21_FLAGS;
            plush_diag_warn(diag, -1, PMX_SEC_MATERIAL, (int64_t)i,
                            "vertex colour / point / line drawing flags of \"%s\" dropped", nm(&mt[i].name));
        }
        view->materials = mt;
    }
    bool morphs21 = false;
    for (size_t i = 0; i < m->morph_count; i++)
        morphs21 |= morph_is_21(&m->morphs[i]);
    if (morphs21) {
        plush_status st = drop_morphs(m, arena, view, diag);
        if (st != PLUSH_OK)
            return st;
    }
    size_t spring = 0;
    for (size_t i = 0; i < m->joint_count; i++)
        spring += m->joints[i].type == PLUSH_PMX_JOINT_SPRING_6DOF;
    if (spring != m->joint_count) {
        plush_pmx_joint *js = plush_arena_array(arena, spring ? spring : 1, sizeof *js);
        if (!js)
            return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, NULL, -1, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < m->joint_count; i++) {
            if (m->joints[i].type == PLUSH_PMX_JOINT_SPRING_6DOF)
                js[n++] = m->joints[i];
            else
                plush_diag_warn(diag, -1, PMX_SEC_JOINT, (int64_t)i, "joint \"%s\" of type %d dropped", nm(&m->joints[i].name),
                                m->joints[i].type);
        }
        view->joints = js;
        view->joint_count = n;
    }
    for (size_t i = 0; i < m->soft_body_count; i++)
        plush_diag_warn(diag, -1, PMX_SEC_SOFT, (int64_t)i, "soft body \"%s\" dropped (PMX 2.0 has none)",
                        nm(&m->soft_bodies[i].name));
    view->soft_body_count = 0;
    view->soft_bodies = NULL;
    return PLUSH_OK;
}
