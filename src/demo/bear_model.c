/* The bear as a PMX 2.1 model: the detailed fur mesh on body bones, the cage on the hook bone, and a
 * TriMesh soft body with pressure on the cage, pinned at the top of the head. */
#include "demo/internal.h"
#include "plush/sys/core.h"

#include <math.h>
#include <string.h>

typedef struct material_look {
    const char *name, *name_en;
    float diffuse[4], specular[3], power, ambient[3];
    uint8_t flags;
    float edge[4], edge_size;
    int32_t toon;          /* shared toon number */
    const char *memo;
} material_look;

#define DRAWN (PLUSH_PMX_MATERIAL_GROUND_SHADOW | PLUSH_PMX_MATERIAL_SHADOW_CASTER | \
               PLUSH_PMX_MATERIAL_SHADOW_RECEIVER | PLUSH_PMX_MATERIAL_EDGE)
#define FUR {0.27f, 0.16f, 0.09f, 1}

static const material_look looks[BEAR_MAT_COUNT] = {
    {"体", "body", {0.62f, 0.40f, 0.22f, 1}, {0.06f, 0.05f, 0.04f}, 5, {0.34f, 0.22f, 0.12f}, DRAWN, FUR, 0.8f, 1, "fur"},
    {"頭", "head", {0.64f, 0.42f, 0.23f, 1}, {0.06f, 0.05f, 0.04f}, 5, {0.35f, 0.23f, 0.13f}, DRAWN, FUR, 0.8f, 1, "fur"},
    {"口元", "muzzle", {0.86f, 0.72f, 0.52f, 1}, {0.05f, 0.05f, 0.04f}, 5, {0.47f, 0.40f, 0.29f}, DRAWN, FUR, 0.6f, 1,
     "light fur: muzzle and inner ears"},
    {"耳", "ears", {0.58f, 0.37f, 0.20f, 1}, {0.06f, 0.05f, 0.04f}, 5, {0.32f, 0.20f, 0.11f}, DRAWN, FUR, 0.8f, 1, "fur"},
    {"腕", "arms", {0.62f, 0.40f, 0.22f, 1}, {0.06f, 0.05f, 0.04f}, 5, {0.34f, 0.22f, 0.12f}, DRAWN, FUR, 0.8f, 1, "fur"},
    {"足", "legs", {0.60f, 0.39f, 0.21f, 1}, {0.06f, 0.05f, 0.04f}, 5, {0.33f, 0.21f, 0.12f}, DRAWN, FUR, 0.8f, 1, "fur"},
    {"左目", "eye_L", {0.04f, 0.03f, 0.03f, 1}, {0.9f, 0.9f, 0.9f}, 60, {0.02f, 0.02f, 0.02f}, DRAWN, {0, 0, 0, 1}, 0.3f,
     0, "glass eye: rigid (plush_bear.im2)"},
    {"右目", "eye_R", {0.04f, 0.03f, 0.03f, 1}, {0.9f, 0.9f, 0.9f}, 60, {0.02f, 0.02f, 0.02f}, DRAWN, {0, 0, 0, 1}, 0.3f,
     0, "glass eye: rigid (plush_bear.im2)"},
    {"鼻", "nose", {0.16f, 0.09f, 0.06f, 1}, {0.4f, 0.35f, 0.3f}, 30, {0.08f, 0.05f, 0.03f}, DRAWN, {0, 0, 0, 1}, 0.4f,
     0, "stitched nose: rigid (plush_bear.im2)"},
    /* Invisible: alpha 0, no edge, no shadows. It exists only to carry the soft body. */
    {"物理プロキシ", "proxy cage", {1, 1, 1, 0}, {0, 0, 0}, 1, {0, 0, 0}, 0, {0, 0, 0, 0}, 0, 0,
     "soft-body proxy (PMX 2.1 TriMesh); plush skins the fur to it"},
};

typedef struct bone_def {
    const char *name, *name_en;
    float position[3];
    int32_t parent;
    uint16_t flags;
} bone_def;

#define MOVABLE (PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_TRANSLATABLE | PLUSH_PMX_BONE_VISIBLE | PLUSH_PMX_BONE_ENABLED)
#define ROTATING (PLUSH_PMX_BONE_ROTATABLE | PLUSH_PMX_BONE_VISIBLE | PLUSH_PMX_BONE_ENABLED)

static const bone_def bone_defs[BEAR_BONE_COUNT] = {
    {"全ての親", "master", {0, 0, 0}, -1, MOVABLE},
    {"フック", "hook", {0, 0, 0}, BEAR_BONE_MASTER, MOVABLE}, /* position: plush__demo_hook_position */
    {"センター", "center", {0, 4.2f, 0}, BEAR_BONE_HOOK, MOVABLE},
    {"下半身", "lower body", {0, 4.6f, 0}, BEAR_BONE_CENTER, ROTATING},
    {"上半身", "upper body", {0, 4.6f, 0}, BEAR_BONE_CENTER, ROTATING},
    {"頭", "head", {0, 6.8f, 0}, BEAR_BONE_UPPER, ROTATING},
    {"左耳", "ear_L", {1.35f, 9.5f, 0.1f}, BEAR_BONE_HEAD, ROTATING},
    {"右耳", "ear_R", {-1.35f, 9.5f, 0.1f}, BEAR_BONE_HEAD, ROTATING},
    {"左腕", "arm_L", {1.6f, 6.2f, -0.45f}, BEAR_BONE_UPPER, ROTATING},
    {"右腕", "arm_R", {-1.6f, 6.2f, -0.45f}, BEAR_BONE_UPPER, ROTATING},
    {"左足", "leg_L", {1.15f, 2.4f, -0.3f}, BEAR_BONE_LOWER, ROTATING},
    {"右足", "leg_R", {-1.15f, 2.4f, -0.3f}, BEAR_BONE_LOWER, ROTATING},
};

static plush_str text(const char *s)
{
    return (plush_str){.s = s, .len = (uint32_t)strlen(s)};
}

static float smoothstep01(float t)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return t * t * (3.0f - 2.0f * t);
}

static void set_weights(plush_pmx_vertex *v, const bear_piece *pc, float local_y)
{
    v->bones[1] = v->bones[2] = v->bones[3] = -1;
    v->weights[1] = v->weights[2] = v->weights[3] = 0;
    v->sdef = -1;
    float s = pc->bone_a == pc->bone_b ? 0 : smoothstep01((local_y - pc->blend_lo) / (pc->blend_hi - pc->blend_lo));
    if (s <= 0 || s >= 1) {
        v->weight_type = PLUSH_PMX_BDEF1;
        v->bones[0] = s >= 1 ? pc->bone_b : pc->bone_a;
        v->weights[0] = 1;
        return;
    }
    /* The reader gives weights[1] = 1 - weights[0]: compute it the same way so a read-back compares equal. */
    v->weight_type = PLUSH_PMX_BDEF2;
    v->bones[0] = pc->bone_a;
    v->bones[1] = pc->bone_b;
    v->weights[0] = 1.0f - s;
    v->weights[1] = 1.0f - v->weights[0];
}

static void to_model(const bear_piece *pc, const float q[3], float out[3], bool translate)
{
    for (int a = 0; a < 3; a++)
        out[a] = pc->rot[a][0] * q[0] + pc->rot[a][1] * q[1] + pc->rot[a][2] * q[2] + (translate ? pc->center[a] : 0);
}

/* One vertex per pole, rings - 1 rows of segments + 1 (the seam column repeats column 0 with u = 1). */
static size_t piece_vertices(const bear_piece *pc)
{
    return 2 + (size_t)(pc->rings - 1) * (size_t)(pc->segments + 1);
}

static size_t piece_indices(const bear_piece *pc)
{
    /* Two triangles per grid quad, one on each pole row. */
    return 3 * (size_t)pc->segments * (2 * (size_t)pc->rings - 2);
}

/* The vertex at ring i (0: top pole, rings: bottom pole) and column j, relative to the piece. */
static uint32_t grid_vertex(const bear_piece *pc, int i, int j)
{
    if (i == 0)
        return 0;
    if (i == pc->rings)
        return (uint32_t)piece_vertices(pc) - 1;
    return 1 + (uint32_t)((i - 1) * (pc->segments + 1) + j);
}

/* A point of the ellipsoid at local q, its normal from the gradient (q / r^2). */
static void surface_vertex(const bear_piece *pc, const float q[3], float u, float v, plush_pmx_vertex *x)
{
    float nq[3];
    for (int a = 0; a < 3; a++)
        nq[a] = q[a] / (pc->radii[a] * pc->radii[a]);
    to_model(pc, q, x->position, true);
    to_model(pc, nq, x->normal, false);
    float len = sqrtf(x->normal[0] * x->normal[0] + x->normal[1] * x->normal[1] + x->normal[2] * x->normal[2]);
    for (int a = 0; a < 3; a++)
        x->normal[a] /= len;
    x->uv[0] = u;
    x->uv[1] = v;
    x->edge_scale = 1.0f;
    set_weights(x, pc, q[1] / pc->radii[1]);
}

/* A UV sphere stretched onto the ellipsoid; the seam (u = 0 = 1) runs down the back and repeats the exact
 * same positions, so the surface is watertight by position. */
static void piece_mesh(const bear_piece *pc, plush_pmx_vertex *v, uint32_t first, uint32_t *idx)
{
    const float pi = 3.14159265358979f;
    const int rings = pc->rings, segs = pc->segments;
    surface_vertex(pc, (float[3]){0, pc->radii[1], 0}, 0.5f, 0, &v[grid_vertex(pc, 0, 0)]);
    surface_vertex(pc, (float[3]){0, -pc->radii[1], 0}, 0.5f, 1, &v[grid_vertex(pc, rings, 0)]);
    for (int i = 1; i < rings; i++) {
        float theta = pi * (float)i / (float)rings;
        float st = sinf(theta), ct = cosf(theta);
        for (int j = 0; j < segs; j++) {
            float phi = 0.5f * pi + 2.0f * pi * (float)j / (float)segs;
            float q[3] = {pc->radii[0] * st * cosf(phi), pc->radii[1] * ct, pc->radii[2] * st * sinf(phi)};
            surface_vertex(pc, q, (float)j / (float)segs, (float)i / (float)rings, &v[grid_vertex(pc, i, j)]);
        }
        plush_pmx_vertex *seam = &v[grid_vertex(pc, i, segs)];
        *seam = v[grid_vertex(pc, i, 0)];
        seam->uv[0] = 1.0f;
    }
    /* Corners a (i, j), b (i, j+1), c (i+1, j), d (i+1, j+1): (a, b, c) and (b, d, c) face outward; on the
     * pole rows a = b (top) or c = d (bottom), and only the other triangle is drawn. */
    size_t n = 0;
    for (int i = 0; i < rings; i++)
        for (int j = 0; j < segs; j++) {
            uint32_t a = first + grid_vertex(pc, i, j), b = first + grid_vertex(pc, i, j + 1);
            uint32_t c = first + grid_vertex(pc, i + 1, j), d = first + grid_vertex(pc, i + 1, j + 1);
            if (i != 0)
                idx[n++] = a, idx[n++] = b, idx[n++] = c;
            if (i != rings - 1)
                idx[n++] = b, idx[n++] = d, idx[n++] = c;
        }
}

static void set_materials(plush_pmx_model *m, plush_pmx_material *mat)
{
    for (int k = 0; k < BEAR_MAT_COUNT; k++) {
        const material_look *l = &looks[k];
        plush_pmx_material *x = &mat[k];
        x->name = text(l->name);
        x->name_en = text(l->name_en);
        memcpy(x->diffuse, l->diffuse, sizeof x->diffuse);
        memcpy(x->specular, l->specular, sizeof x->specular);
        x->specular_power = l->power;
        memcpy(x->ambient, l->ambient, sizeof x->ambient);
        x->flags = l->flags;
        memcpy(x->edge_color, l->edge, sizeof x->edge_color);
        x->edge_size = l->edge_size;
        x->texture = x->sphere_texture = -1;
        x->sphere_mode = PLUSH_PMX_SPHERE_OFF;
        x->toon_shared = 1;
        x->toon = l->toon;
        x->memo = text(l->memo);
    }
    m->materials = mat;
    m->material_count = BEAR_MAT_COUNT;
}

static void set_bones(plush_pmx_bone *b)
{
    for (int k = 0; k < BEAR_BONE_COUNT; k++) {
        const bone_def *d = &bone_defs[k];
        plush_pmx_bone *x = &b[k];
        x->name = text(d->name);
        x->name_en = text(d->name_en);
        memcpy(x->position, d->position, sizeof x->position);
        if (k == BEAR_BONE_HOOK)
            plush__demo_hook_position(x->position);
        x->parent = d->parent;
        x->flags = d->flags;
        x->tail_bone = -1;
        x->tail_offset[1] = k == BEAR_BONE_HOOK ? -0.6f : 0.8f;
        x->append_parent = -1;
        x->ik_target = -1;
    }
}

/* Root and 表情 (the two frames every PMX has), then the hook and the body. */
static bool set_frames(plush_pmx_model *m, plush_arena *arena)
{
    plush_pmx_display_frame *f = plush_arena_array(arena, 4, sizeof *f);
    plush_pmx_frame_element *e = plush_arena_array(arena, BEAR_BONE_COUNT, sizeof *e);
    if (!f || !e)
        return false;
    for (int k = 0; k < BEAR_BONE_COUNT; k++)
        e[k] = (plush_pmx_frame_element){0, k};
    f[0] = (plush_pmx_display_frame){text("Root"), text("Root"), 1, 1, &e[BEAR_BONE_MASTER]};
    f[1] = (plush_pmx_display_frame){text("表情"), text("Exp"), 1, 0, NULL};
    f[2] = (plush_pmx_display_frame){text("フック"), text("hook"), 0, 1, &e[BEAR_BONE_HOOK]};
    f[3] = (plush_pmx_display_frame){text("体"), text("body"), 0, BEAR_BONE_COUNT - BEAR_BONE_CENTER,
                                     &e[BEAR_BONE_CENTER]};
    m->display_frames = f;
    m->display_frame_count = 4;
    return true;
}

/* A plush toy: soft links, bending links, pressure that keeps it round, pose matching for the stuffing
 * that pulls it back into shape (without it the cage creases by the pins), some damping so it settles. */
static bool set_soft_body(plush_pmx_model *m, const bear_cage *cage, uint32_t cage_first, plush_arena *arena)
{
    plush_pmx_soft_body *s = plush_arena_alloc(arena, sizeof *s);
    if (!s)
        return false;
    float hold[3];
    plush__demo_hold_point(hold);
    uint32_t pins = 0;
    for (size_t v = 0; v < cage->node_count; v++) {
        float d[3] = {cage->nodes[v][0] - hold[0], cage->nodes[v][1] - hold[1], cage->nodes[v][2] - hold[2]};
        pins += d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= BEAR_PIN_RADIUS * BEAR_PIN_RADIUS;
    }
    s->pins = plush_arena_array(arena, pins ? pins : 1, sizeof *s->pins);
    if (!s->pins)
        return false;
    for (size_t v = 0; v < cage->node_count; v++) {
        float d[3] = {cage->nodes[v][0] - hold[0], cage->nodes[v][1] - hold[1], cage->nodes[v][2] - hold[2]};
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= BEAR_PIN_RADIUS * BEAR_PIN_RADIUS)
            s->pins[s->pin_count++] = (int32_t)(cage_first + v);
    }
    s->name = text("ぬいぐるみ");
    s->name_en = text("plush");
    s->shape = 0;
    s->material = BEAR_MAT_CAGE;
    s->group = 0;
    s->mask = 0xffff;
    s->flags = PLUSH_PMX_SOFT_BLINK;
    s->blink_distance = BEAR_SOFT_BLINK_DISTANCE;
    s->cluster_count = 0;
    s->total_mass = BEAR_SOFT_TOTAL_MASS;
    s->margin = 0.05f;
    s->aero_model = 0;
    /* Bullet's defaults where plush needs nothing else (VCF 1, DF 0.2, the contact hardnesses and the
     * cluster values), with damping and pressure added. */
    s->config = (plush_pmx_soft_config){
        .vcf = 1, .dp = 0.1f, .dg = 0, .lf = 0, .pr = BEAR_SOFT_PRESSURE, .vc = 0, .df = 0.2f, .mt = BEAR_SOFT_MT,
        .chr = 1, .khr = 0.1f, .shr = 1, .ahr = 0.7f,
        .srhr_cl = 0.1f, .skhr_cl = 1, .sshr_cl = 0.5f, .sr_splt_cl = 0.5f, .sk_splt_cl = 0.5f, .ss_splt_cl = 0.5f,
    };
    s->v_iterations = 0;
    s->p_iterations = BEAR_SOFT_P_ITERATIONS;
    s->d_iterations = 0;
    s->c_iterations = BEAR_SOFT_C_ITERATIONS;
    s->lst = BEAR_SOFT_LST;
    s->ast = BEAR_SOFT_LST;
    s->vst = 0.5f;
    m->soft_bodies = s;
    m->soft_body_count = 1;
    return true;
}

static void cage_vertices(const bear_cage *cage, plush_pmx_vertex *v)
{
    for (size_t i = 0; i < cage->node_count; i++) {
        plush_pmx_vertex *x = &v[i];
        memcpy(x->position, cage->nodes[i], sizeof x->position);
        memcpy(x->normal, cage->normals[i], sizeof x->normal);
        /* Every cage vertex on the hook: the pinned ones must follow it, and the others start (and are
         * reset) where the hook holds the toy. */
        x->weight_type = PLUSH_PMX_BDEF1;
        x->bones[0] = BEAR_BONE_HOOK;
        x->bones[1] = x->bones[2] = x->bones[3] = -1;
        x->weights[0] = 1;
        x->edge_scale = 0;
        x->sdef = -1;
    }
}

plush_status plush__demo_model_build(const bear_cage *cage, plush_pmx_model **out, plush_diag *diag)
{
    *out = NULL;
    plush_pmx_model *m = plush_pmx_create();
    if (!m)
        return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "model", -1, "out of memory");
    plush_arena *arena = plush_pmx_arena(m);
    const bear_piece *pc = plush__demo_pieces();
    m->version = 2.1f;
    m->encoding = PLUSH_ENC_UTF16LE;
    m->name = text("くまのぬいぐるみ");
    m->name_en = text("plush bear");
    m->comment = text("plush のデモ用テディベア。体は物理プロキシ(PMX 2.1 ソフトボディ)に追従します。\r\n"
                      "tools/demo/gen_bear.c が生成。");
    m->comment_en = text("The plush demo teddy bear: the fur follows a PMX 2.1 soft-body proxy cage held by "
                         "the hook bone.\r\nGenerated by tools/demo/gen_bear.c.");

    size_t vcount = cage->node_count, icount = 3 * cage->triangle_count;
    for (int i = 0; i < BEAR_PIECE_COUNT; i++)
        vcount += piece_vertices(&pc[i]), icount += piece_indices(&pc[i]);
    plush_pmx_vertex *v = plush_arena_array(arena, vcount, sizeof *v);
    uint32_t *idx = plush_arena_array(arena, icount, sizeof *idx);
    plush_pmx_material *mat = plush_arena_array(arena, BEAR_MAT_COUNT, sizeof *mat);
    plush_pmx_bone *bones = plush_arena_array(arena, BEAR_BONE_COUNT, sizeof *bones);
    if (!v || !idx || !mat || !bones)
        goto nomem;
    set_materials(m, mat);
    /* Faces are drawn material by material, so the pieces go in material order. */
    size_t vn = 0, in = 0;
    for (int k = 0; k < BEAR_MAT_CAGE; k++) {
        size_t first_index = in;
        for (int i = 0; i < BEAR_PIECE_COUNT; i++) {
            if (pc[i].material != k)
                continue;
            piece_mesh(&pc[i], &v[vn], (uint32_t)vn, &idx[in]);
            vn += piece_vertices(&pc[i]);
            in += piece_indices(&pc[i]);
        }
        mat[k].index_count = (int32_t)(in - first_index);
    }
    uint32_t cage_first = (uint32_t)vn;
    cage_vertices(cage, &v[vn]);
    for (size_t t = 0; t < cage->triangle_count; t++)
        for (int c = 0; c < 3; c++)
            idx[in++] = cage_first + cage->triangles[t][c];
    mat[BEAR_MAT_CAGE].index_count = (int32_t)(3 * cage->triangle_count);
    m->vertices = v;
    m->vertex_count = vcount;
    m->indices = idx;
    m->index_count = icount;
    set_bones(bones);
    m->bones = bones;
    m->bone_count = BEAR_BONE_COUNT;
    if (!set_frames(m, arena) || !set_soft_body(m, cage, cage_first, arena))
        goto nomem;
    plush_status st = plush_pmx_validate(m, diag);
    if (st != PLUSH_OK) {
        plush_pmx_free(m);
        return st;
    }
    *out = m;
    return PLUSH_OK;
nomem:
    plush_pmx_free(m);
    return plush_diag_fail(diag, PLUSH_E_NOMEM, -1, "model", -1, "out of memory");
}
