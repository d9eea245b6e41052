/* plush info, the PMX part: header, counts, histograms, the materials (with the bones that move each and
 * the soft body that owns it), the bones on request, and soft bodies, as text or JSON. */
#include "cli/cli.h"
#include "plush/sys/pmx.h"

#include <stdlib.h>
#include <string.h>

static const char *const weight_keys[] = {"bdef1", "bdef2", "bdef4", "sdef", "qdef"};
static const char *const weight_labels[] = {"BDEF1", "BDEF2", "BDEF4", "SDEF", "QDEF"};
enum { WEIGHT_KINDS = sizeof weight_keys / sizeof weight_keys[0] };

static const char *const morph_keys[] = {"group", "vertex", "bone", "uv", "uv1", "uv2",
                                         "uv3", "uv4", "material", "flip", "impulse"};
_Static_assert(sizeof morph_keys / sizeof morph_keys[0] == PLUSH_PMX_MORPH_KINDS, "one key per morph kind");

static const char *const joint_keys[] = {"spring_6dof", "6dof", "p2p", "cone_twist", "slider", "hinge"};
static const char *const joint_labels[] = {"spring 6DOF", "6DOF", "P2P", "cone twist", "slider", "hinge"};
enum { JOINT_KINDS = sizeof joint_keys / sizeof joint_keys[0] };

static const char *const index_keys[] = {"vertex", "texture", "material", "bone", "morph", "rigid_body"};
static const char *const index_labels[] = {"vertex", "texture", "material", "bone", "morph", "rigid body"};
_Static_assert(sizeof index_keys / sizeof index_keys[0] == PLUSH_PMX_INDEX_KINDS, "one key per index kind");

/* Histograms over the model. A kind the tables do not know (a reader given skip_validation can
 * pass one through) lands in "other" rather than being lost or indexing out of bounds. */
typedef struct pmx_stats {
    size_t weight[WEIGHT_KINDS], weight_other;
    size_t morph[PLUSH_PMX_MORPH_KINDS], morph_other;
    size_t joint[JOINT_KINDS], joint_other;
} pmx_stats;

static void count_kinds(const plush_pmx_model *m, pmx_stats *st)
{
    memset(st, 0, sizeof *st);
    _Static_assert(sizeof m->summary.weight_types / sizeof m->summary.weight_types[0] == WEIGHT_KINDS,
                   "one key per weight type");
    if (m->summary_only)
        memcpy(st->weight, m->summary.weight_types, sizeof st->weight);
    for (size_t i = 0; !m->summary_only && i < m->vertex_count; i++) {
        unsigned t = m->vertices[i].weight_type;
        if (t < WEIGHT_KINDS)
            st->weight[t]++;
        else
            st->weight_other++;
    }
    for (size_t i = 0; i < m->morph_count; i++) {
        unsigned k = m->morphs[i].kind;
        if (k < PLUSH_PMX_MORPH_KINDS)
            st->morph[k]++;
        else
            st->morph_other++;
    }
    for (size_t i = 0; i < m->joint_count; i++) {
        unsigned t = m->joints[i].type;
        if (t < JOINT_KINDS)
            st->joint[t]++;
        else
            st->joint_other++;
    }
}

/* "2.1" rather than %.9g's 2.0999999: the header holds a float, the format has two versions. */
static void version_text(float version, char *buf, size_t size)
{
    if (version == 2.0f)
        snprintf(buf, size, "2.0");
    else if (version == 2.1f)
        snprintf(buf, size, "2.1");
    else
        snprintf(buf, size, "%.9g", (double)version);
}

static const char *encoding_key(const plush_pmx_model *m)
{
    return m->encoding == PLUSH_ENC_UTF8 ? "utf8" : "utf16";
}

static const char *soft_shape_key(uint8_t shape)
{
    return shape == PLUSH_PMX_SOFT_TRIMESH ? "trimesh" : shape == PLUSH_PMX_SOFT_ROPE ? "rope" : "unknown";
}

/* ---- materials and bones: what a user names in --cage and --materials ------------------------ */

/* A material's main bones: the three heaviest, each carrying at least 1% of its weight (the first always),
 * so that a skirt reads as its waist and skirt bones and hair as its head and hair bones. */
enum { MAIN_BONES = 3 };
static size_t main_bones(const plush_pmx_model *m, size_t material, plush_pmx_bone_share *out)
{
    size_t n = 0;
    plush_diag d;
    cli_diag_init(&d, NULL);
    if (plush_pmx_material_bones(m, material, out, MAIN_BONES, &n, &d) != PLUSH_OK)
        return 0;
    size_t kept = n ? 1 : 0;
    while (kept < n && out[kept].share >= 0.01f)
        kept++;
    return kept;
}

static const plush_str *texture_of(const plush_pmx_model *m, const plush_pmx_material *mat)
{
    return mat->texture >= 0 && (size_t)mat->texture < m->texture_count ? &m->textures[mat->texture] : NULL;
}

/* Per bone: the rigid body that drives it (a dynamic one before one that follows the bone; the first of
 * each kind), or -1. NULL when out of memory. */
static int32_t *bone_bodies(const plush_pmx_model *m)
{
    int32_t *body = malloc((m->bone_count ? m->bone_count : 1) * sizeof *body);
    for (size_t b = 0; body && b < m->bone_count; b++)
        body[b] = -1;
    for (size_t r = 0; body && r < m->rigid_body_count; r++) {
        int32_t b = m->rigid_bodies[r].bone;
        if (b < 0 || (size_t)b >= m->bone_count)
            continue;
        bool dynamic = m->rigid_bodies[r].mode != PLUSH_PMX_RIGID_FOLLOW_BONE;
        if (body[b] < 0 || (dynamic && m->rigid_bodies[body[b]].mode == PLUSH_PMX_RIGID_FOLLOW_BONE))
            body[b] = (int32_t)r;
    }
    return body;
}

static const char *rigid_mode_key(uint8_t mode)
{
    return mode == PLUSH_PMX_RIGID_FOLLOW_BONE ? "follow_bone"
           : mode == PLUSH_PMX_RIGID_PHYSICS   ? "physics"
           : mode == PLUSH_PMX_RIGID_PHYSICS_BONE ? "physics_bone"
                                                  : "unknown";
}

static const char *rigid_mode_text(uint8_t mode)
{
    return mode == PLUSH_PMX_RIGID_FOLLOW_BONE ? "follows the bone"
           : mode == PLUSH_PMX_RIGID_PHYSICS   ? "physics"
           : mode == PLUSH_PMX_RIGID_PHYSICS_BONE ? "physics, bone position"
                                                  : "unknown mode";
}

/* ---- text ------------------------------------------------------------------------------------ */

/* Values that run past one line (histograms, pin lists) wrap under the value column. */
enum { TEXT_WIDTH = 100 };

typedef struct text_list {
    int column;      /* current output column */
    int indent;      /* column where values start */
    bool empty;
} text_list;

static void list_begin(text_list *l, const char *label)
{
    int n = printf("  %-*s ", INFO_LABEL_WIDTH, label);
    l->column = n > 0 ? n : 0;
    l->indent = l->column;
    l->empty = true;
}

static void list_item(text_list *l, const char *sep, const char *item)
{
    int len = (int)strlen(item);
    if (!l->empty) {
        if (l->column + (int)strlen(sep) + len > TEXT_WIDTH) {
            fputs(sep[0] == ',' ? ",\n" : "\n", stdout);
            printf("%*s", l->indent, "");
            l->column = l->indent;
        } else {
            fputs(sep, stdout);
            l->column += (int)strlen(sep);
        }
    }
    fputs(item, stdout);
    l->column += len;
    l->empty = false;
}

static void list_end(text_list *l, const char *if_empty)
{
    if (l->empty)
        fputs(if_empty, stdout);
    fputc('\n', stdout);
}

/* "BDEF1 8858, BDEF2 10121": only the kinds that occur. */
static void histogram_line(const char *label, const char *const *names, const size_t *counts, size_t kinds,
                           size_t other)
{
    text_list l;
    list_begin(&l, label);
    char item[64];
    for (size_t i = 0; i < kinds; i++) {
        if (counts[i] == 0)
            continue;
        snprintf(item, sizeof item, "%s %zu", names[i], counts[i]);
        list_item(&l, ", ", item);
    }
    if (other) {
        snprintf(item, sizeof item, "other %zu", other);
        list_item(&l, ", ", item);
    }
    list_end(&l, "none");
}

static void soft_flags_text(uint8_t flags, char *buf, size_t size)
{
    const char *names[] = {"B-link", "clusters", "link randomize"};
    int n = snprintf(buf, size, "0x%02x", flags);
    const char *sep = " (";
    for (int i = 0; i < 3 && n >= 0 && (size_t)n < size; i++) {
        if (flags & (1u << i)) {
            n += snprintf(buf + n, size - (size_t)n, "%s%s", sep, names[i]);
            sep = ", ";
        }
    }
    if (sep[0] == ',' && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ")");
}

static void soft_body_text(const plush_pmx_soft_body *sb, size_t index)
{
    char label[32], flags[80];
    snprintf(label, sizeof label, "soft body %zu", index);
    info_name_line(label, &sb->name);
    info_name_line("  English name", &sb->name_en);
    soft_flags_text(sb->flags, flags, sizeof flags);
    const char *shape = sb->shape == PLUSH_PMX_SOFT_TRIMESH ? "TriMesh" : sb->shape == PLUSH_PMX_SOFT_ROPE ? "Rope" : "unknown";
    info_line("  shape", "%s, material %d, group %u, mask 0x%04x", shape, (int)sb->material, (unsigned)sb->group,
              (unsigned)sb->mask);
    info_line("  flags", "%s", flags);
    info_line("  B-link", "distance %d, clusters %d", (int)sb->blink_distance, (int)sb->cluster_count);
    info_line("  mass", "total %g, margin %g, aero model %d", (double)sb->total_mass, (double)sb->margin,
              (int)sb->aero_model);
    const plush_pmx_soft_config *c = &sb->config;
    info_line("  config", "VCF %g, DP %g, DG %g, LF %g, PR %g, VC %g", (double)c->vcf, (double)c->dp,
              (double)c->dg, (double)c->lf, (double)c->pr, (double)c->vc);
    info_line("", "DF %g, MT %g, CHR %g, KHR %g, SHR %g, AHR %g", (double)c->df, (double)c->mt,
              (double)c->chr, (double)c->khr, (double)c->shr, (double)c->ahr);
    info_line("  cluster", "SRHR_CL %g, SKHR_CL %g, SSHR_CL %g", (double)c->srhr_cl, (double)c->skhr_cl,
              (double)c->sshr_cl);
    info_line("", "SR_SPLT_CL %g, SK_SPLT_CL %g, SS_SPLT_CL %g", (double)c->sr_splt_cl,
              (double)c->sk_splt_cl, (double)c->ss_splt_cl);
    info_line("  iterations", "V %d, P %d, D %d, C %d", (int)sb->v_iterations, (int)sb->p_iterations,
              (int)sb->d_iterations, (int)sb->c_iterations);
    info_line("  material", "LST %g, AST %g, VST %g", (double)sb->lst, (double)sb->ast, (double)sb->vst);

    char item[96];
    text_list l;
    snprintf(label, sizeof label, "  anchors (%u)", (unsigned)sb->anchor_count);
    list_begin(&l, label);
    for (uint32_t i = 0; i < sb->anchor_count; i++) {
        const plush_pmx_soft_anchor *a = &sb->anchors[i];
        snprintf(item, sizeof item, "body %d vertex %d%s", (int)a->rigid_body, (int)a->vertex,
                 a->near_mode ? " near" : "");
        list_item(&l, ", ", item);
    }
    list_end(&l, "none");
    snprintf(label, sizeof label, "  pins (%u)", (unsigned)sb->pin_count);
    list_begin(&l, label);
    for (uint32_t i = 0; i < sb->pin_count; i++) {
        snprintf(item, sizeof item, "%d", (int)sb->pins[i]);
        list_item(&l, " ", item);
    }
    list_end(&l, "none");
}

static void name_text(const plush_str *name)
{
    json_write_escaped(stdout, name->s ? name->s : "", name->s ? name->len : 0);
}

/* material 17      "材質18" (Material18); 1234 faces; texture "hair.png"; bones "頭" 62%, "髪1" 20%; soft body
 * 0 "..." -- the English name is what a user on an English keyboard gives --cage */
static void material_text(const plush_pmx_model *m, size_t i)
{
    const plush_pmx_material *mat = &m->materials[i];
    char label[32];
    snprintf(label, sizeof label, "material %zu", i);
    printf("  %-*s ", INFO_LABEL_WIDTH, label);
    name_text(&mat->name);
    const plush_str *english = plush_pmx_material_english(m, i);
    if (english) {
        fputs(" (", stdout);
        text_write_escaped(stdout, english->s, english->len, false);
        fputc(')', stdout);
    }
    printf("; %ld faces; ", (long)(mat->index_count / 3));
    const plush_str *tex = texture_of(m, mat);
    if (tex) {
        fputs("texture ", stdout);
        name_text(tex);
    } else {
        fputs("no texture", stdout);
    }
    plush_pmx_bone_share b[MAIN_BONES];
    size_t n = main_bones(m, i, b);
    for (size_t k = 0; k < n; k++) {
        fputs(k ? ", " : "; bones ", stdout);
        name_text(&m->bones[b[k].bone].name);
        printf(" %.0f%%", 100.0 * b[k].share);
    }
    int32_t soft = plush_pmx_material_soft_body(m, i);
    if (soft >= 0) {
        printf("; soft body %ld ", (long)soft);
        name_text(&m->soft_bodies[soft].name);
    }
    fputc('\n', stdout);
}

/* bone 5           "髪1"; parent 4 "頭"; rigid body 12 "髪1", physics */
static void bone_text(const plush_pmx_model *m, size_t i, const int32_t *bodies)
{
    const plush_pmx_bone *b = &m->bones[i];
    char label[32];
    snprintf(label, sizeof label, "bone %zu", i);
    printf("  %-*s ", INFO_LABEL_WIDTH, label);
    name_text(&b->name);
    if (b->parent >= 0 && (size_t)b->parent < m->bone_count) {
        printf("; parent %ld ", (long)b->parent);
        name_text(&m->bones[b->parent].name);
    } else {
        fputs("; no parent", stdout);
    }
    int32_t r = bodies ? bodies[i] : -1;
    if (r >= 0) {
        printf("; rigid body %ld ", (long)r);
        name_text(&m->rigid_bodies[r].name);
        printf(", %s", rigid_mode_text(m->rigid_bodies[r].mode));
    }
    fputc('\n', stdout);
}

static void bones_text(const plush_pmx_model *m)
{
    int32_t *bodies = bone_bodies(m);
    for (size_t i = 0; i < m->bone_count; i++)
        bone_text(m, i, bodies);
    free(bodies);
}

void info_pmx_text(const plush_pmx_model *m, bool bones, const plush_diag *diag)
{
    pmx_stats st;
    count_kinds(m, &st);
    char version[32];
    version_text(m->version, version, sizeof version);
    info_line("format", "PMX %s, %s, %u additional UV%s", version,
              m->encoding == PLUSH_ENC_UTF8 ? "UTF-8" : "UTF-16LE", (unsigned)m->additional_uv,
              m->additional_uv == 1 ? "" : "s");

    text_list l;
    char item[48];
    list_begin(&l, "index sizes");
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++) {
        snprintf(item, sizeof item, "%s %u", index_labels[k], (unsigned)m->index_sizes[k]);
        list_item(&l, ", ", item);
    }
    list_end(&l, "");

    info_name_line("name", &m->name);
    info_name_line("English name", &m->name_en);
    info_line("vertices", "%zu", m->vertex_count);
    info_line("faces", "%zu", m->index_count / 3);
    info_line("textures", "%zu", m->texture_count);
    info_line("materials", "%zu", m->material_count);
    info_line("bones", "%zu", m->bone_count);
    info_line("morphs", "%zu", m->morph_count);
    info_line("display frames", "%zu", m->display_frame_count);
    info_line("rigid bodies", "%zu", m->rigid_body_count);
    info_line("joints", "%zu", m->joint_count);
    info_line("soft bodies", "%zu", m->soft_body_count);
    histogram_line("weight types", weight_labels, st.weight, WEIGHT_KINDS, st.weight_other);
    histogram_line("morph types", morph_keys, st.morph, PLUSH_PMX_MORPH_KINDS, st.morph_other);
    histogram_line("joint types", joint_labels, st.joint, JOINT_KINDS, st.joint_other);
    for (size_t i = 0; i < m->material_count; i++)
        material_text(m, i);
    if (bones)
        bones_text(m);
    for (size_t i = 0; i < m->soft_body_count; i++)
        soft_body_text(&m->soft_bodies[i], i);
    info_warnings_text(diag);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_str(json_writer *w, const char *key, const plush_str *s)
{
    json_string_n(w, key, s->s, s->s ? s->len : 0);
}

static void histogram_json(json_writer *w, const char *key, const char *const *names, const size_t *counts,
                           size_t kinds, size_t other)
{
    json_object_begin(w, key);
    for (size_t i = 0; i < kinds; i++)
        json_uint(w, names[i], counts[i]);
    if (other)
        json_uint(w, "other", other);
    json_object_end(w);
}

static void soft_config_json(json_writer *w, const plush_pmx_soft_config *c)
{
    json_object_begin(w, "config");
    json_float(w, "vcf", c->vcf);
    json_float(w, "dp", c->dp);
    json_float(w, "dg", c->dg);
    json_float(w, "lf", c->lf);
    json_float(w, "pr", c->pr);
    json_float(w, "vc", c->vc);
    json_float(w, "df", c->df);
    json_float(w, "mt", c->mt);
    json_float(w, "chr", c->chr);
    json_float(w, "khr", c->khr);
    json_float(w, "shr", c->shr);
    json_float(w, "ahr", c->ahr);
    json_float(w, "srhr_cl", c->srhr_cl);
    json_float(w, "skhr_cl", c->skhr_cl);
    json_float(w, "sshr_cl", c->sshr_cl);
    json_float(w, "sr_splt_cl", c->sr_splt_cl);
    json_float(w, "sk_splt_cl", c->sk_splt_cl);
    json_float(w, "ss_splt_cl", c->ss_splt_cl);
    json_object_end(w);
}

static void soft_body_json(json_writer *w, const plush_pmx_soft_body *sb)
{
    json_object_begin(w, NULL);
    json_str(w, "name", &sb->name);
    json_str(w, "name_en", &sb->name_en);
    json_string(w, "shape", soft_shape_key(sb->shape));
    json_int(w, "material", sb->material);
    json_uint(w, "group", sb->group);
    json_uint(w, "mask", sb->mask);
    json_uint(w, "flags", sb->flags);
    json_int(w, "blink_distance", sb->blink_distance);
    json_int(w, "clusters", sb->cluster_count);
    json_float(w, "total_mass", sb->total_mass);
    json_float(w, "margin", sb->margin);
    json_int(w, "aero_model", sb->aero_model);
    soft_config_json(w, &sb->config);
    json_object_begin(w, "iterations");
    json_int(w, "v", sb->v_iterations);
    json_int(w, "p", sb->p_iterations);
    json_int(w, "d", sb->d_iterations);
    json_int(w, "c", sb->c_iterations);
    json_object_end(w);
    json_object_begin(w, "material_params");
    json_float(w, "lst", sb->lst);
    json_float(w, "ast", sb->ast);
    json_float(w, "vst", sb->vst);
    json_object_end(w);
    json_array_begin(w, "anchors");
    for (uint32_t i = 0; i < sb->anchor_count; i++) {
        json_object_begin(w, NULL);
        json_int(w, "rigid_body", sb->anchors[i].rigid_body);
        json_int(w, "vertex", sb->anchors[i].vertex);
        json_bool(w, "near", sb->anchors[i].near_mode != 0);
        json_object_end(w);
    }
    json_array_end(w);
    json_array_begin(w, "pins");
    for (uint32_t i = 0; i < sb->pin_count; i++)
        json_int(w, NULL, sb->pins[i]);
    json_array_end(w);
    json_object_end(w);
}

static void materials_json(json_writer *w, const plush_pmx_model *m)
{
    json_array_begin(w, "materials");
    for (size_t i = 0; i < m->material_count; i++) {
        const plush_pmx_material *mat = &m->materials[i];
        json_object_begin(w, NULL);
        json_uint(w, "index", i);
        json_str(w, "name", &mat->name);
        json_str(w, "name_en", &mat->name_en);
        json_int(w, "faces", mat->index_count / 3);
        const plush_str *tex = texture_of(m, mat);
        if (tex)
            json_str(w, "texture", tex);
        else
            json_null(w, "texture");
        plush_pmx_bone_share b[MAIN_BONES];
        size_t n = main_bones(m, i, b);
        json_array_begin(w, "bones");
        for (size_t k = 0; k < n; k++) {
            json_object_begin(w, NULL);
            json_int(w, "index", b[k].bone);
            json_str(w, "name", &m->bones[b[k].bone].name);
            json_float(w, "share", b[k].share);
            json_object_end(w);
        }
        json_array_end(w);
        int32_t soft = plush_pmx_material_soft_body(m, i);
        if (soft >= 0) {
            json_object_begin(w, "soft_body");
            json_int(w, "index", soft);
            json_str(w, "name", &m->soft_bodies[soft].name);
            json_object_end(w);
        } else {
            json_null(w, "soft_body");
        }
        json_object_end(w);
    }
    json_array_end(w);
}

static void bones_json(json_writer *w, const plush_pmx_model *m)
{
    int32_t *bodies = bone_bodies(m);
    json_array_begin(w, "bones");
    for (size_t i = 0; i < m->bone_count; i++) {
        const plush_pmx_bone *b = &m->bones[i];
        json_object_begin(w, NULL);
        json_uint(w, "index", i);
        json_str(w, "name", &b->name);
        json_str(w, "name_en", &b->name_en);
        json_int(w, "parent", b->parent);
        int32_t r = bodies ? bodies[i] : -1;
        if (r >= 0) {
            json_object_begin(w, "rigid_body");
            json_int(w, "index", r);
            json_str(w, "name", &m->rigid_bodies[r].name);
            json_string(w, "mode", rigid_mode_key(m->rigid_bodies[r].mode));
            json_object_end(w);
        } else {
            json_null(w, "rigid_body");
        }
        json_object_end(w);
    }
    json_array_end(w);
    free(bodies);
}

void info_pmx_json(json_writer *w, const plush_pmx_model *m, bool bones, const plush_diag *diag)
{
    pmx_stats st;
    count_kinds(m, &st);
    char version[32];
    version_text(m->version, version, sizeof version);
    json_string(w, "format", "pmx");
    json_number_text(w, "version", version);
    json_string(w, "encoding", encoding_key(m));
    json_uint(w, "additional_uv", m->additional_uv);
    json_object_begin(w, "index_sizes");
    for (int k = 0; k < PLUSH_PMX_INDEX_KINDS; k++)
        json_uint(w, index_keys[k], m->index_sizes[k]);
    json_object_end(w);
    json_str(w, "name", &m->name);
    json_str(w, "name_en", &m->name_en);

    json_object_begin(w, "counts");
    json_uint(w, "vertices", m->vertex_count);
    json_uint(w, "faces", m->index_count / 3);
    json_uint(w, "textures", m->texture_count);
    json_uint(w, "materials", m->material_count);
    json_uint(w, "bones", m->bone_count);
    json_uint(w, "morphs", m->morph_count);
    json_uint(w, "display_frames", m->display_frame_count);
    json_uint(w, "rigid_bodies", m->rigid_body_count);
    json_uint(w, "joints", m->joint_count);
    json_uint(w, "soft_bodies", m->soft_body_count);
    json_object_end(w);

    histogram_json(w, "weight_types", weight_keys, st.weight, WEIGHT_KINDS, st.weight_other);
    histogram_json(w, "morph_types", morph_keys, st.morph, PLUSH_PMX_MORPH_KINDS, st.morph_other);
    histogram_json(w, "joint_types", joint_keys, st.joint, JOINT_KINDS, st.joint_other);
    materials_json(w, m);
    if (bones)
        bones_json(w, m);

    json_array_begin(w, "soft_bodies");
    for (size_t i = 0; i < m->soft_body_count; i++)
        soft_body_json(w, &m->soft_bodies[i]);
    json_array_end(w);
    info_warnings_json(w, diag);
}
