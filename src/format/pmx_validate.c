/* The PMX rules: every index in range (or -1 where the format allows it), material face counts
 * that add up, values that decide behaviour within their enumerations: the structure. Non-finite and
 * out-of-range values are the reader's warnings (pmx_read_values.c), refused or left out by what uses
 * them. The reader and the writer both run this one pass. */
#include "pmx_internal.h"
#include "plush/sys/core.h"

typedef struct checker {
    const plush_pmx_model *m;
    const pmx_unkept *unkept; /* summary-only model: what its reader learned of the unkept arrays */
    plush_diag *diag;
} checker;

#define FAIL(k, st, sec, i, ...)                                                                    \
    do {                                                                                            \
        plush_diag_fail((k)->diag, st, -1, sec, (int64_t)(i), __VA_ARGS__);                         \
        return false;                                                                               \
    } while (0)

/* idx must lie in [lo, count). */
static bool in_range(checker *k, const char *sec, size_t item, const char *what, int64_t idx, int64_t lo,
                     size_t count, const char *of)
{
    if (idx >= lo && idx < (int64_t)count)
        return true;
    FAIL(k, PLUSH_E_RANGE, sec, item, "%s index %lld out of range (%zu %s)", what, (long long)idx, count, of);
}

static bool check_header(checker *k, bool as_21)
{
    const plush_pmx_model *m = k->m;
    (void)as_21;
    if (m->version != PMX_V20 && m->version != PMX_V21)
        FAIL(k, PLUSH_E_VERSION, PMX_SEC_HEADER, -1, "version %g is not 2.0 or 2.1", (double)m->version);
    if (m->encoding > 1)
        FAIL(k, PLUSH_E_FORMAT, PMX_SEC_HEADER, -1, "text encoding %d is not 0 or 1", m->encoding);
    if (m->additional_uv > 4)
        FAIL(k, PLUSH_E_FORMAT, PMX_SEC_HEADER, -1, "additional UV count %d is not 0-4", m->additional_uv);
    for (int i = 0; i < PLUSH_PMX_INDEX_KINDS; i++) {
        uint8_t s = m->index_sizes[i];
        if (s != 0 && s != 1 && s != 2 && s != 4)
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_HEADER, -1, "index size %d is not 1, 2 or 4", s);
    }
    return true;
}

/* Inlined into the per-vertex loop below: a call per vertex costs a measurable share of a read. */
static inline bool check_vertex(checker *k, const plush_pmx_vertex *v, size_t i)
{
    static const int used[] = {1, 2, 4, 2, 4};
    const plush_pmx_model *m = k->m;
    /* QDEF is a 2.1 type, yet real 2.0 files carry it; a 2.1 -> 2.0 write decides (plush__pmx_downgrade). */
    if (v->weight_type > PLUSH_PMX_QDEF)
        FAIL(k, PLUSH_E_FORMAT, PMX_SEC_VERTEX, i, "weight type %d is not 0-4", v->weight_type);
    for (int b = 0; b < used[v->weight_type]; b++)
        if (!in_range(k, PMX_SEC_VERTEX, i, "bone", v->bones[b], -1, m->bone_count, "bones"))
            return false;
    if (v->weight_type == PLUSH_PMX_SDEF &&
        !in_range(k, PMX_SEC_VERTEX, i, "SDEF", v->sdef, 0, m->sdef_count, "SDEF entries"))
        return false;
    return true;
}

/* check_vertex as the reader's second walk calls it (plush__pmx_recheck_vertices). */
static bool recheck_vertex(void *ctx, const plush_pmx_vertex *v, size_t i)
{
    return check_vertex(ctx, v, i);
}

static bool check_vertices(checker *k)
{
    const plush_pmx_model *m = k->m;
    if (k->unkept) {
        /* Only a bone index outside [-1, bone_count) can fail here (the reader admits weight types
         * 0-4 and numbers SDEF entries itself); then find the first vertex at fault as a full read would. */
        const pmx_unkept *u = k->unkept;
        if (u->bone_min >= -1 && u->bone_max < (int64_t)m->bone_count)
            return true;
        return plush__pmx_recheck_vertices(u, m, recheck_vertex, k, k->diag);
    }
    for (size_t i = 0; i < m->vertex_count; i++)
        if (!check_vertex(k, &m->vertices[i], i))
            return false;
    return true;
}

static bool check_faces_materials(checker *k)
{
    const plush_pmx_model *m = k->m;
    if (m->index_count % 3)
        FAIL(k, PLUSH_E_FORMAT, PMX_SEC_FACE, -1, "face index count %zu is not a multiple of 3", m->index_count);
    /* The first face index >= vertex_count: found here, or by a summary-only read as it streamed. */
    int64_t bad = -1;
    uint32_t vertex = 0;
    if (k->unkept) {
        bad = k->unkept->bad_face;
        vertex = k->unkept->bad_face_vertex;
    }
    for (size_t i = 0; !k->unkept && i < m->index_count; i++)
        if (m->indices[i] >= m->vertex_count) {
            bad = (int64_t)i;
            vertex = m->indices[i];
            break;
        }
    if (bad >= 0)
        FAIL(k, PLUSH_E_RANGE, PMX_SEC_FACE, bad, "vertex index %u out of range (%zu vertices)", vertex,
             m->vertex_count);
    size_t sum = 0;
    for (size_t i = 0; i < m->material_count; i++) {
        const plush_pmx_material *mt = &m->materials[i];
        if (!in_range(k, PMX_SEC_MATERIAL, i, "texture", mt->texture, -1, m->texture_count, "textures") ||
            !in_range(k, PMX_SEC_MATERIAL, i, "sphere texture", mt->sphere_texture, -1, m->texture_count, "textures"))
            return false;
        /* Sphere modes beyond 3 occur in real files (nanoem's fixtures hold 255); players read them as
         * "off", and they are kept as stored. */
        if (mt->toon_shared > 1)
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_MATERIAL, i, "toon flag %d is not 0 or 1", mt->toon_shared);
        if (mt->toon_shared && (mt->toon < 0 || mt->toon > 255))
            FAIL(k, PLUSH_E_RANGE, PMX_SEC_MATERIAL, i, "shared toon %d is not 0-255", (int)mt->toon);
        if (!mt->toon_shared && !in_range(k, PMX_SEC_MATERIAL, i, "toon texture", mt->toon, -1, m->texture_count,
                                          "textures"))
            return false;
        if (mt->index_count < 0 || mt->index_count % 3)
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_MATERIAL, i, "face index count %d is not a non-negative multiple of 3",
                 (int)mt->index_count);
        sum += (size_t)mt->index_count;
    }
    if (sum != m->index_count)
        FAIL(k, PLUSH_E_RANGE, PMX_SEC_MATERIAL, -1, "materials draw %zu face indices but the model has %zu", sum,
             m->index_count);
    return true;
}

static bool check_bones(checker *k)
{
    const plush_pmx_model *m = k->m;
    const size_t n = m->bone_count;
    for (size_t i = 0; i < n; i++) {
        const plush_pmx_bone *b = &m->bones[i];
        if (!in_range(k, PMX_SEC_BONE, i, "parent", b->parent, -1, n, "bones"))
            return false;
        if ((b->flags & PLUSH_PMX_BONE_TAIL_IS_BONE) && !in_range(k, PMX_SEC_BONE, i, "tail", b->tail_bone, -1, n, "bones"))
            return false;
        if ((b->flags & (PLUSH_PMX_BONE_APPEND_ROTATE | PLUSH_PMX_BONE_APPEND_TRANSLATE)) &&
            !in_range(k, PMX_SEC_BONE, i, "append parent", b->append_parent, -1, n, "bones"))
            return false;
        if (!(b->flags & PLUSH_PMX_BONE_IK))
            continue;
        if (!in_range(k, PMX_SEC_BONE, i, "IK target", b->ik_target, -1, n, "bones"))
            return false;
        if (b->ik_link_count && !b->ik_links)
            FAIL(k, PLUSH_E_ARGUMENT, PMX_SEC_BONE, i, "IK links missing");
        for (uint32_t l = 0; l < b->ik_link_count; l++)
            if (!in_range(k, PMX_SEC_BONE, i, "IK link bone", b->ik_links[l].bone, 0, n, "bones"))
                return false;
    }
    return true;
}

static bool check_morphs(checker *k, bool as_21)
{
    const plush_pmx_model *m = k->m;
    for (size_t i = 0; i < m->morph_count; i++) {
        const plush_pmx_morph *mo = &m->morphs[i];
        if (mo->kind >= PLUSH_PMX_MORPH_KINDS || (mo->kind >= PLUSH_PMX_MORPH_FLIP && !as_21))
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_MORPH, i, "morph kind %d is not valid in PMX %s", mo->kind,
                 as_21 ? "2.1" : "2.0");
        if (mo->offset_count && !mo->offsets.group)
            FAIL(k, PLUSH_E_ARGUMENT, PMX_SEC_MORPH, i, "offsets missing");
        for (uint32_t j = 0; j < mo->offset_count; j++) {
            bool ok = true;
            switch (mo->kind) {
            case PLUSH_PMX_MORPH_GROUP:
            case PLUSH_PMX_MORPH_FLIP:
                ok = in_range(k, PMX_SEC_MORPH, i, "member morph", mo->offsets.group[j].morph, 0, m->morph_count, "morphs");
                break;
            case PLUSH_PMX_MORPH_VERTEX:
                ok = in_range(k, PMX_SEC_MORPH, i, "vertex", mo->offsets.vertex[j].vertex, 0, m->vertex_count, "vertices");
                break;
            case PLUSH_PMX_MORPH_BONE:
                ok = in_range(k, PMX_SEC_MORPH, i, "bone", mo->offsets.bone[j].bone, 0, m->bone_count, "bones");
                break;
            case PLUSH_PMX_MORPH_MATERIAL:
                ok = in_range(k, PMX_SEC_MORPH, i, "material", mo->offsets.material[j].material, -1, m->material_count,
                              "materials");
                if (ok && mo->offsets.material[j].operation > 1)
                    FAIL(k, PLUSH_E_FORMAT, PMX_SEC_MORPH, i, "material operation %d is not 0 or 1",
                         mo->offsets.material[j].operation);
                break;
            case PLUSH_PMX_MORPH_IMPULSE:
                ok = in_range(k, PMX_SEC_MORPH, i, "rigid body", mo->offsets.impulse[j].rigid_body, 0,
                              m->rigid_body_count, "rigid bodies");
                break;
            default:
                ok = in_range(k, PMX_SEC_MORPH, i, "vertex", mo->offsets.uv[j].vertex, 0, m->vertex_count, "vertices");
                break;
            }
            if (!ok)
                return false;
        }
    }
    return true;
}

static bool check_frames(checker *k)
{
    const plush_pmx_model *m = k->m;
    for (size_t i = 0; i < m->display_frame_count; i++) {
        const plush_pmx_display_frame *f = &m->display_frames[i];
        for (uint32_t j = 0; j < f->element_count; j++) {
            const plush_pmx_frame_element *e = &f->elements[j];
            if (e->is_morph > 1)
                FAIL(k, PLUSH_E_FORMAT, PMX_SEC_FRAME, i, "element type %d is not 0 or 1", e->is_morph);
            bool ok = e->is_morph ? in_range(k, PMX_SEC_FRAME, i, "morph", e->index, 0, m->morph_count, "morphs")
                                  : in_range(k, PMX_SEC_FRAME, i, "bone", e->index, 0, m->bone_count, "bones");
            if (!ok)
                return false;
        }
    }
    return true;
}

static bool check_bodies_joints(checker *k, bool as_21)
{
    const plush_pmx_model *m = k->m;
    for (size_t i = 0; i < m->rigid_body_count; i++) {
        const plush_pmx_rigid_body *b = &m->rigid_bodies[i];
        if (!in_range(k, PMX_SEC_RIGID, i, "bone", b->bone, -1, m->bone_count, "bones"))
            return false;
        if (b->group > 15)
            FAIL(k, PLUSH_E_RANGE, PMX_SEC_RIGID, i, "group %d is not 0-15", b->group);
        if (b->shape > PLUSH_PMX_RIGID_CAPSULE)
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_RIGID, i, "shape %d is not 0 (sphere), 1 (box) or 2 (capsule)", b->shape);
        if (b->mode > PLUSH_PMX_RIGID_PHYSICS_BONE)
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_RIGID, i, "physics mode %d is not 0-2", b->mode);
    }
    for (size_t i = 0; i < m->joint_count; i++) {
        const plush_pmx_joint *j = &m->joints[i];
        if (j->type > PLUSH_PMX_JOINT_HINGE || (j->type != PLUSH_PMX_JOINT_SPRING_6DOF && !as_21))
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_JOINT, i, "joint type %d is not valid in PMX %s", j->type,
                 as_21 ? "2.1" : "2.0");
        if (!in_range(k, PMX_SEC_JOINT, i, "rigid body A", j->body_a, -1, m->rigid_body_count, "rigid bodies") ||
            !in_range(k, PMX_SEC_JOINT, i, "rigid body B", j->body_b, -1, m->rigid_body_count, "rigid bodies"))
            return false;
    }
    return true;
}

static bool check_soft_bodies(checker *k, bool as_21)
{
    const plush_pmx_model *m = k->m;
    if (m->soft_body_count && !as_21)
        FAIL(k, PLUSH_E_FORMAT, PMX_SEC_SOFT, 0, "soft bodies need PMX 2.1");
    for (size_t i = 0; i < m->soft_body_count; i++) {
        const plush_pmx_soft_body *s = &m->soft_bodies[i];
        if (s->shape > PLUSH_PMX_SOFT_ROPE)
            FAIL(k, PLUSH_E_FORMAT, PMX_SEC_SOFT, i, "shape %d is not 0 (TriMesh) or 1 (Rope)", s->shape);
        if (!in_range(k, PMX_SEC_SOFT, i, "material", s->material, -1, m->material_count, "materials"))
            return false;
        for (uint32_t a = 0; a < s->anchor_count; a++)
            if (!in_range(k, PMX_SEC_SOFT, i, "anchor rigid body", s->anchors[a].rigid_body, 0, m->rigid_body_count,
                          "rigid bodies") ||
                !in_range(k, PMX_SEC_SOFT, i, "anchor vertex", s->anchors[a].vertex, 0, m->vertex_count, "vertices"))
                return false;
        for (uint32_t p = 0; p < s->pin_count; p++)
            if (!in_range(k, PMX_SEC_SOFT, i, "pinned vertex", s->pins[p], 0, m->vertex_count, "vertices"))
                return false;
    }
    return true;
}

plush_status plush__pmx_validate_read(const plush_pmx_model *m, bool as_21, const pmx_unkept *u, plush_diag *diag)
{
    plush_diag local = {0};
    checker k = {.m = m, .unkept = u, .diag = diag ? diag : &local};
    if (k.diag->status != PLUSH_OK) /* keep the first error, but report this pass on its own */
        return k.diag->status;
    if (m->summary_only && !u)
        return plush__pmx_require_kept(m, k.diag);
    if (check_header(&k, as_21) && check_vertices(&k) && check_faces_materials(&k) && check_bones(&k) &&
        check_morphs(&k, as_21) && check_frames(&k) && check_bodies_joints(&k, as_21) && check_soft_bodies(&k, as_21))
        return PLUSH_OK;
    return k.diag->status;
}

plush_status plush__pmx_validate_as(const plush_pmx_model *m, bool as_21, plush_diag *diag)
{
    return plush__pmx_validate_read(m, as_21, NULL, diag);
}

plush_status plush_pmx_validate(const plush_pmx_model *model, plush_diag *diag)
{
    return plush__pmx_validate_as(model, model->version == PMX_V21, diag);
}
