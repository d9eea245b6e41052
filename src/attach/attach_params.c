/* Attach's soft-body parameters: the presets and the fields set by their `plush info --json` names. */
#include "plush/attach.h"
#include "plush/sys/core.h"
#include "plush/sys/attach.h"
#include "attach/attach_internal.h"
#include "plush/physics.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- presets ----------------------------------------------------------------------------------- */

typedef struct preset {
    const char *name;
    float total_mass, margin;
    int32_t aero_model;
    float dp, dg, lf, pr, vc, df, mt;
    int32_t v_iterations, p_iterations;
    float lst, ast, vst;
    int32_t blink_distance;
} preset;

static const preset presets[] = {
    /* v 0: after a velocity pass Bullet rebuilds positions from velocities, which undoes the pose matching
     * (kMT) that keeps the rest shape; with v 1 this preset had no shape memory and open sheets (skirts,
     * capes) folded up under gravity (cage crease p99 80-100 deg hanging at rest). kMT 0.05 per step keeps
     * the shape and leaves it free to sway (0.2 held skirts almost rigid). p 16 for closed toys. */
    /* margin: negative, in mean cage edges (attach turns it into model units per piece): a tenth of an edge
     * keeps a face off the body by about what a coarse face sags between its nodes, at any model scale */
    /* B-links 3 steps apart: with 2 a cage folded onto itself between rows of nodes where a limb pushed it
     * or a swing whipped it (a pleated skirt's cage creased 165 deg, and the surface bound across the fold
     * stretched twice over); 3 resists that fold, in the file's own field (docs/attach.md) */
    {"plush", 1.0f, -0.1f, 0, 0.05f, 0, 0, 0, 0, 0.2f, 0.05f, 0, 16, 0.5f, 0.5f, 0.5f, 3},
    {"jelly", 1.0f, -0.1f, 0, 0.01f, 0, 0, 0, 20.0f, 0.5f, 0.05f, 1, 8, 0.45f, 0.45f, 1.0f, 2},
    {"cloth", 0.2f, -0.04f, 1, 0.02f, 0.01f, 0.05f, 0, 0, 0.5f, 0, 1, 8, 0.9f, 0.9f, 1.0f, 2},
};

bool plush_attach_preset(const char *name, plush_pmx_soft_body *out)
{
    for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++) {
        const preset *p = &presets[i];
        if (strcmp(name, p->name) != 0)
            continue;
        *out = (plush_pmx_soft_body){
            .group = 15, .mask = 0xFFFF, .flags = PLUSH_PMX_SOFT_BLINK, .blink_distance = p->blink_distance, .cluster_count = 0,
            .total_mass = p->total_mass, .margin = p->margin, .aero_model = p->aero_model,
            .config = {.vcf = 1, .dp = p->dp, .dg = p->dg, .lf = p->lf, .pr = p->pr, .vc = p->vc, .df = p->df,
                       .mt = p->mt, .chr = 1, .khr = 0.1f, .shr = 1, .ahr = 0.7f, .srhr_cl = 0.1f, .skhr_cl = 1,
                       .sshr_cl = 0.5f, .sr_splt_cl = 0.5f, .sk_splt_cl = 0.5f, .ss_splt_cl = 0.5f},
            .v_iterations = p->v_iterations, .p_iterations = p->p_iterations, .d_iterations = 0, .c_iterations = 4,
            .lst = p->lst, .ast = p->ast, .vst = p->vst, .material = -1};
        return true;
    }
    return false;
}

/* ---- fields by name ---------------------------------------------------------------------------- */

enum { F_U8, F_U16, F_I32, F_FLOAT };

typedef struct field {
    const char *name;             /* as plush info --json nests it */
    size_t offset;
    int type;
    double lo, hi;
} field;

#define SB(member) offsetof(plush_pmx_soft_body, member)
#define CF(member) (offsetof(plush_pmx_soft_body, config) + offsetof(plush_pmx_soft_config, member))
#define FLOAT_FIELD(n, off) {n, off, F_FLOAT, 0, 3.0e38}
/* A k-value Bullet documents as 0..1 (plush run clamps others with a warning: attach refuses them) */
#define UNIT_FIELD(n, off) {n, off, F_FLOAT, 0, 1}
static const field fields[] = {
    {"group", SB(group), F_U8, 0, 15},
    {"mask", SB(mask), F_U16, 0, 65535},
    {"flags", SB(flags), F_U8, 0, 7},
    {"blink_distance", SB(blink_distance), F_I32, 0, INT32_MAX / 2},
    {"clusters", SB(cluster_count), F_I32, 0, INT32_MAX},
    {"total_mass", SB(total_mass), F_FLOAT, 1e-30, 3.0e38},
    FLOAT_FIELD("margin", SB(margin)),
    {"aero_model", SB(aero_model), F_I32, 0, 4},
    FLOAT_FIELD("config.vcf", CF(vcf)),
    UNIT_FIELD("config.dp", CF(dp)),
    FLOAT_FIELD("config.dg", CF(dg)),
    FLOAT_FIELD("config.lf", CF(lf)),
    {"config.pr", CF(pr), F_FLOAT, -3.0e38, 3.0e38},
    FLOAT_FIELD("config.vc", CF(vc)),
    UNIT_FIELD("config.df", CF(df)),
    UNIT_FIELD("config.mt", CF(mt)),
    UNIT_FIELD("config.chr", CF(chr)),
    UNIT_FIELD("config.khr", CF(khr)),
    UNIT_FIELD("config.shr", CF(shr)),
    UNIT_FIELD("config.ahr", CF(ahr)),
    UNIT_FIELD("config.srhr_cl", CF(srhr_cl)),
    UNIT_FIELD("config.skhr_cl", CF(skhr_cl)),
    UNIT_FIELD("config.sshr_cl", CF(sshr_cl)),
    UNIT_FIELD("config.sr_splt_cl", CF(sr_splt_cl)),
    UNIT_FIELD("config.sk_splt_cl", CF(sk_splt_cl)),
    UNIT_FIELD("config.ss_splt_cl", CF(ss_splt_cl)),
    {"iterations.v", SB(v_iterations), F_I32, 0, 1000},
    {"iterations.p", SB(p_iterations), F_I32, 0, 1000},
    {"iterations.d", SB(d_iterations), F_I32, 0, 1000},
    {"iterations.c", SB(c_iterations), F_I32, 0, 1000},
    UNIT_FIELD("material_params.lst", SB(lst)),
    UNIT_FIELD("material_params.ast", SB(ast)),
    UNIT_FIELD("material_params.vst", SB(vst)),
};
#undef SB
#undef CF
#undef FLOAT_FIELD
#undef UNIT_FIELD

enum { FIELD_COUNT = sizeof fields / sizeof fields[0] };

const char *const *plush_attach_field_names(size_t *count)
{
    static const char *const names[] = {
        "group", "mask", "flags", "blink_distance", "clusters", "total_mass", "margin", "aero_model",
        "config.vcf", "config.dp", "config.dg", "config.lf", "config.pr", "config.vc", "config.df", "config.mt",
        "config.chr", "config.khr", "config.shr", "config.ahr", "config.srhr_cl", "config.skhr_cl",
        "config.sshr_cl", "config.sr_splt_cl", "config.sk_splt_cl", "config.ss_splt_cl", "iterations.v",
        "iterations.p", "iterations.d", "iterations.c", "material_params.lst", "material_params.ast",
        "material_params.vst"};
    _Static_assert(sizeof names / sizeof names[0] == FIELD_COUNT, "one name per field");
    *count = FIELD_COUNT;
    return names;
}

/* The full name, or the part after the dot when that is unique. */
static const field *find_field(const char *name)
{
    const field *found = NULL;
    for (size_t i = 0; i < FIELD_COUNT; i++) {
        const char *full = fields[i].name, *dot = strchr(full, '.');
        if (strcmp(name, full) == 0)
            return &fields[i];
        if (dot && strcmp(name, dot + 1) == 0)
            found = &fields[i];
    }
    return found;
}

plush_status plush_attach_set_field(plush_pmx_soft_body *sb, const char *name, double value, plush_diag *diag)
{
    const field *f = name ? find_field(name) : NULL;
    if (!f)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1,
                               "no soft-body field named \"%s\" (names as plush info --json shows them)",
                               name ? name : "");
    if (!isfinite(value) || value < f->lo || value > f->hi)
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "%s: %g is out of range (%g to %g)", f->name,
                               value, f->lo, f->hi);
    if (f->type != F_FLOAT && value != floor(value))
        return plush_diag_fail(diag, PLUSH_E_ARGUMENT, -1, NULL, -1, "%s: needs a whole number, not %g", f->name,
                               value);
    unsigned char *at = (unsigned char *)sb + f->offset;
    if (f->type == F_U8) {
        uint8_t v = (uint8_t)value;
        memcpy(at, &v, sizeof v);
    } else if (f->type == F_U16) {
        uint16_t v = (uint16_t)value;
        memcpy(at, &v, sizeof v);
    } else if (f->type == F_I32) {
        int32_t v = (int32_t)value;
        memcpy(at, &v, sizeof v);
    } else {
        float v = (float)value;
        memcpy(at, &v, sizeof v);
    }
    return PLUSH_OK;
}

/* Every parameter zero (padding aside): the caller chose none. */
bool plush__attach_soft_unset(const plush_pmx_soft_body *sb)
{
    static const unsigned char zeros[4];
    for (size_t i = 0; i < FIELD_COUNT; i++) {
        size_t width = fields[i].type == F_U8 ? 1 : fields[i].type == F_U16 ? 2 : 4;
        if (memcmp((const unsigned char *)sb + fields[i].offset, zeros, width) != 0)
            return false;
    }
    return true;
}

float plush__attach_shape_memory(float given, float free_length)
{
    /* Bullet's pose matching pulls a node mt of the way to its goal each step: a spring whose angular
     * frequency is sqrt(mt) / dt; a pendulum of length L swings at sqrt(g / L): equal at mt = g dt^2 / L, with
     * MMD's gravity (98 units/s^2) and step (60 Hz), which plush's world takes by default */
    double dt = 1.0 / PLUSH_WORLD_DEFAULT_HZ, pendulum = 98.0 * dt * dt / free_length;
    return free_length > 0 && pendulum < given ? (float)pendulum : given;
}
