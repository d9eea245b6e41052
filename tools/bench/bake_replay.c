/* bake_replay: a run's bake replayed at every frame against the run's own frames.
 *
 *   build/plush run MODEL.pmx --cage PART --motion M.vmd --export pmx+vmd,ply -o OUT
 *   build/tools/bake_replay OUT/MODEL_plush.pmx OUT/MODEL_plush.vmd OUT/frames [--model MODEL.pmx] [--delete]
 *
 * The baked PMX + VMD are read once and posed at each frame as `plush pose` poses them without --physics
 * (tests/support/bake_replay.h); each frame is compared, vertex for vertex, with the run's
 * FRAMES_DIR/frame_NNNNN.ply (the ply export writes the baked model's vertices in its order). Per frame: the
 * RMS over all vertices and the worst vertex's distance. Printed: the worst frames, and a summary with the
 * largest RMS and the worst vertex in units and as a share of the model's height (plush_pmx_height of
 * --model, the original model, or else of the baked PMX), and how many frames exceed 0.2% RMS and 1% worst
 * (the bake's acceptance). With --half, the bake posed halfway between two consecutive frames against the
 * chord of its own poses at the two frames, on the soft part (the vertices hanging on the bake's own bones,
 * named pbNNNN as plush__bake_pseudo_name names them): how far a player showing 60 fps strays between the
 * frames where a fitted bone turns far in one frame. Not on the baked physics, which the run itself may turn
 * by half a circle in a frame (Luka's skirt bones at frame 3,832), where the chord means nothing. With
 * --soft the frames are compared on that soft part alone: a bake without --bake-physics leaves the bones
 * the rigid bodies drive to the player's simulation, which the bone pipeline without physics does not run.
 * Exit status 0 when every frame was compared (whatever the figures), 1 on bad input, with one line on
 * stderr. */
#include "../../tests/support/bake_replay.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: bake_replay BAKED.pmx BAKED.vmd FRAMES_DIR [--every K] [--model ORIGINAL.pmx] [--delete] [--worst N]\n"
    "                   [--csv OUT.csv] [--half] [--soft]\n"
    "  FRAMES_DIR holds a run's frame_NNNNN.ply (plush run --export ply); every K-th of them is compared\n"
    "  --model: the height the shares are of is the original model's (default: the baked PMX's)\n"
    "  --delete: each PLY is deleted once read; --worst N: the N worst frames are listed (default 10)\n"
    "  --csv: one row per frame compared: frame,rms,worst,worst_vertex\n"
    "  --half: also poses the bake halfway between each two consecutive frames compared and measures its soft\n"
    "          part (the vertices on the bake's bones, pbNNNN) against the chord of its own two frames\n"
    "  --soft: the frames compared on the soft part only (a bake without --bake-physics: a player simulates\n"
    "          the rest, which the bone pipeline without physics does not)\n";

#define RMS_BAR 0.002   /* of the height */
#define WORST_BAR 0.01

typedef struct replay_args {
    const char *pmx, *vmd, *dir, *model, *csv;
    uint32_t every, worst;
    bool remove, half, soft;
} replay_args;

typedef struct frame_figures {
    uint32_t frame;
    bake_replay_distance d;
} frame_figures;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bake_replay: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static bool count_arg(const char *s, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = s && *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
    if (!end || *end || errno || v == 0 || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static int parse_args(int argc, char **argv, replay_args *a)
{
    *a = (replay_args){.every = 1, .worst = 10};
    const char **pos[3] = {&a->pmx, &a->vmd, &a->dir};
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(s, "--delete") == 0) {
            a->remove = true;
        } else if (strcmp(s, "--half") == 0) {
            a->half = true;
        } else if (strcmp(s, "--soft") == 0) {
            a->soft = true;
        } else if (strcmp(s, "--every") == 0 || strcmp(s, "--worst") == 0) {
            if (!count_arg(i + 1 < argc ? argv[i + 1] : NULL, strcmp(s, "--every") == 0 ? &a->every : &a->worst))
                return fail("%s needs a whole number from 1", s);
            i++;
        } else if (strcmp(s, "--model") == 0 || strcmp(s, "--csv") == 0) {
            if (i + 1 >= argc)
                return fail("%s needs a file", s);
            *(strcmp(s, "--model") == 0 ? &a->model : &a->csv) = argv[++i];
        } else if (s[0] == '-' && s[1]) {
            return fail("unknown option '%s' (bake_replay --help)", s);
        } else if (n < 3) {
            *pos[n++] = s;
        } else {
            return fail("one argument too many: '%s' (bake_replay --help)", s);
        }
    }
    if (n < 3)
        return fail("needs BAKED.pmx BAKED.vmd FRAMES_DIR (bake_replay --help)");
    return 0;
}

/* ---- the run's frames ---------------------------------------------------------------------------- */

static int by_number(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* The frame numbers of dir's frame_NNNNN.ply that are multiples of every, in order. */
static uint32_t *list_frames(const char *dir, uint32_t every, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    uint32_t *frames = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        unsigned f = 0;
        int used = 0;
        if (sscanf(e->d_name, "frame_%5u.ply%n", &f, &used) != 1 || e->d_name[used] || strlen(e->d_name) != 15 ||
            f % every)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            uint32_t *grown = realloc(frames, cap * sizeof *frames);
            if (!grown) {
                free(frames);
                closedir(d);
                return NULL;
            }
            frames = grown;
        }
        frames[n++] = f;
    }
    closedir(d);
    if (n)
        qsort(frames, n, sizeof *frames, by_number);
    *count = n;
    return frames ? frames : calloc(1, sizeof *frames);
}

static float f32le(const unsigned char *p)
{
    uint32_t x = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* A PLY as plush writes it (binary little-endian, the vertex element first, its properties floats beginning
 * with x y z): its vertices into pos (room for cap). Returns the count, or -1 with why in err. */
static long read_ply(const char *path, float (*pos)[3], size_t cap, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "cannot open: %s", strerror(errno));
        return -1;
    }
    char line[256];
    long count = -1;
    int props = 0;
    bool little = false, in_vertex = false, ended = false, xyz = true;
    static const char *const axes[3] = {"x", "y", "z"};
    for (int lines = 0; !ended && lines < 64 && fgets(line, sizeof line, f); lines++) {
        line[strcspn(line, "\r\n")] = '\0';
        char name[64], type[64];
        long n = 0;
        if (lines == 0 && strcmp(line, "ply") != 0)
            break;
        if (strcmp(line, "format binary_little_endian 1.0") == 0) {
            little = true;
        } else if (sscanf(line, "element %63s %ld", name, &n) == 2) {
            in_vertex = strcmp(name, "vertex") == 0 && count < 0;
            if (in_vertex)
                count = n;
        } else if (in_vertex && sscanf(line, "property %63s %63s", type, name) == 2) {
            xyz = xyz && strcmp(type, "float") == 0 && (props >= 3 || strcmp(name, axes[props]) == 0);
            props++;
        } else if (strcmp(line, "end_header") == 0) {
            ended = true;
        }
    }
    const char *why = !ended ? "not a PLY header plush writes"
                      : !little ? "not binary little-endian"
                      : count < 0 || props < 3 || !xyz ? "its vertices are not float x y z first"
                      : (size_t)count > cap ? "more vertices than the baked model has"
                                            : NULL;
    size_t stride = 4 * (size_t)props;
    unsigned char *row = why ? NULL : malloc(stride);
    for (long v = 0; row && v < count; v++) {
        if (fread(row, 1, stride, f) != stride) {
            why = "shorter than its header says";
            break;
        }
        for (int k = 0; k < 3; k++)
            pos[v][k] = f32le(row + 4 * k);
    }
    if (!why && !row)
        why = "out of memory";
    free(row);
    fclose(f);
    if (why) {
        snprintf(err, err_size, "%s", why);
        return -1;
    }
    return count;
}

/* ---- the report ----------------------------------------------------------------------------------- */

static int by_worst(const void *x, const void *y)
{
    double a = ((const frame_figures *)x)->d.worst, b = ((const frame_figures *)y)->d.worst;
    return (a < b) - (a > b);
}

static int by_rms(const void *x, const void *y)
{
    double a = ((const frame_figures *)x)->d.rms, b = ((const frame_figures *)y)->d.rms;
    return (a < b) - (a > b);
}


/* The bake's own bones: pbNNNN (src/export/bake_model.c). */
static bool bake_bone(const plush_str *name)
{
    if (name->len < 6 || !name->s || name->s[0] != 'p' || name->s[1] != 'b')
        return false;
    for (uint32_t i = 2; i < name->len; i++)
        if (name->s[i] < '0' || name->s[i] > '9')
            return false;
    return true;
}

/* Per vertex: it hangs on one of the bake's bones. */
static bool *soft_part(const plush_pmx_model *m)
{
    bool *soft = calloc(m->vertex_count ? m->vertex_count : 1, sizeof *soft);
    for (size_t v = 0; soft && v < m->vertex_count; v++)
        for (int k = 0; k < 4; k++) {
            int32_t b = m->vertices[v].bones[k];
            soft[v] |= b >= 0 && (size_t)b < m->bone_count && m->vertices[v].weights[k] > 0 &&
                       bake_bone(&m->bones[b].name);
        }
    return soft;
}

/* The bones a baked vertex hangs from, "name weight, ...". */
static void vertex_bones(const plush_pmx_model *m, size_t v, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const plush_pmx_vertex *x = &m->vertices[v];
    for (int k = 0; k < 4 && used < size; k++) {
        int32_t b = x->bones[k];
        if (b < 0 || (size_t)b >= m->bone_count || x->weights[k] <= 0)
            continue;
        int w = snprintf(out + used, size - used, "%s%.*s %.2f", used ? ", " : "", (int)m->bones[b].name.len,
                         m->bones[b].name.s ? m->bones[b].name.s : "", x->weights[k]);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* One line per frame: its RMS and its farthest vertex, with the bones that carry that vertex. */
static void print_frames(const frame_figures *order, size_t shown, const plush_pmx_model *baked, double height)
{
    for (size_t i = 0; i < shown; i++) {
        const frame_figures *f = &order[i];
        char bones[512];
        vertex_bones(baked, f->d.worst_vertex, bones, sizeof bones);
        printf("  frame %5u: RMS %.4g (%.4f%%), worst %.4g (%.3f%%) at vertex %zu (%s)\n", f->frame, f->d.rms,
               100 * f->d.rms / height, f->d.worst, 100 * f->d.worst / height, f->d.worst_vertex, bones);
    }
}

static void report(const frame_figures *fig, size_t n, const replay_args *a, const plush_pmx_model *baked,
                   double height, const frame_figures *half, size_t halves)
{
    frame_figures *order = malloc(n * sizeof *order);
    size_t over_rms = 0, over_worst = 0, rms_at = 0, worst_at = 0;
    for (size_t i = 0; i < n; i++) {
        over_rms += fig[i].d.rms > RMS_BAR * height;
        over_worst += fig[i].d.worst > WORST_BAR * height;
        rms_at = fig[i].d.rms > fig[rms_at].d.rms ? i : rms_at;
        worst_at = fig[i].d.worst > fig[worst_at].d.worst ? i : worst_at;
    }
    size_t shown = n < a->worst ? n : a->worst;
    if (order) {
        memcpy(order, fig, n * sizeof *order);
        qsort(order, n, sizeof *order, by_worst);
        printf("the %zu frames with the farthest vertex:\n", shown);
        print_frames(order, shown, baked, height);
        qsort(order, n, sizeof *order, by_rms);
        printf("the %zu frames with the largest RMS:\n", shown);
        print_frames(order, shown, baked, height);
        free(order);
    }
    printf("%zu frames (%u .. %u, every %u), %zu vertices each%s; height %.4g (%s): RMS at most %.4g (frame %u) = "
           "%.4f%%, worst vertex %.4g (frame %u, vertex %zu) = %.3f%%; frames over %.1f%% RMS: %zu, over %.0f%% worst: "
           "%zu: %s\n",
           n, fig[0].frame, fig[n - 1].frame, a->every, fig[0].d.count, a->soft ? " (the soft part)" : "", height,
           a->model ? "the original model's" : "the baked PMX's", fig[rms_at].d.rms, fig[rms_at].frame,
           100 * fig[rms_at].d.rms / height, fig[worst_at].d.worst, fig[worst_at].frame, fig[worst_at].d.worst_vertex,
           100 * fig[worst_at].d.worst / height, 100 * RMS_BAR, over_rms, 100 * WORST_BAR, over_worst,
           over_rms || over_worst ? "BEYOND the bars" : "within the bars");
    if (a->half) {
        size_t far = 0, rms_far = 0;
        for (size_t i = 0; i < halves; i++) {
            far = half[i].d.worst > half[far].d.worst ? i : far;
            rms_far = half[i].d.rms > half[rms_far].d.rms ? i : rms_far;
        }
        char bones[512] = "";
        if (halves)
            vertex_bones(baked, half[far].d.worst_vertex, bones, sizeof bones);
        if (halves)
            printf("%zu half frames, the soft part: from the chord of the bake's own frames around them RMS at most "
                   "%.4g (%u.5) = %.4f%%, "
                   "worst vertex %.4g (%u.5, vertex %zu: %s) = %.3f%%\n",
                   halves, half[rms_far].d.rms, half[rms_far].frame, 100 * half[rms_far].d.rms / height,
                   half[far].d.worst, half[far].frame, half[far].d.worst_vertex, bones,
                   100 * half[far].d.worst / height);
        else
            printf("no half frames: no two consecutive frames were compared\n");
    }
}

int main(int argc, char **argv)
{
    replay_args a;
    if (parse_args(argc, argv, &a))
        return 1;
    size_t count = 0;
    uint32_t *frames = list_frames(a.dir, a.every, &count);
    if (!frames)
        return fail("%s: cannot list: %s", a.dir, strerror(errno));
    if (!count) {
        free(frames);
        return fail("%s: no frame_NNNNN.ply%s", a.dir, a.every > 1 ? " at a multiple of --every" : "");
    }
    plush_diag d = {.offset = -1, .index = -1};
    bake_replay r;
    double height = 0;
    plush_pmx_model *original = NULL;
    if (a.model) {
        d.file = a.model;
        if (plush_pmx_read_file(a.model, NULL, &original, &d) == PLUSH_OK)
            height = plush_pmx_height(original);
        plush_pmx_free(original);
    }
    if (d.status == PLUSH_OK)
        bake_replay_open(&r, a.pmx, a.vmd, &d);
    else
        r = (bake_replay){0};
    if (d.status != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        bake_replay_close(&r);
        free(frames);
        return fail("%s", line);
    }
    if (!a.model)
        height = plush_pmx_height(r.model);
    if (!(height > 0)) {
        bake_replay_close(&r);
        free(frames);
        return fail("%s: the model has no height to measure against", a.model ? a.model : a.pmx);
    }
    size_t nv = r.model->vertex_count;
    float(*ply)[3] = malloc((nv ? nv : 1) * sizeof *ply), (*before)[3] = NULL;
    frame_figures *fig = calloc(count, sizeof *fig), *half = NULL;
    size_t halves = 0;
    bool *soft = NULL;
    size_t *soft_vertex = NULL, soft_count = 0; /* the soft part's vertices in order */
    float(*mid_soft)[3] = NULL, (*packed)[3] = NULL;
    if (a.half || a.soft) {
        before = malloc((nv ? nv : 1) * sizeof *before);
        packed = malloc((nv ? nv : 1) * sizeof *packed);
        half = calloc(count, sizeof *half);
        soft = soft_part(r.model);
        soft_vertex = malloc((nv ? nv : 1) * sizeof *soft_vertex);
        mid_soft = malloc((nv ? nv : 1) * sizeof *mid_soft);
        for (size_t v = 0; soft && soft_vertex && v < nv; v++)
            if (soft[v])
                soft_vertex[soft_count++] = v;
    }
    FILE *csv = a.csv ? fopen(a.csv, "w") : NULL;
    bool lacking = (a.half || a.soft) && (!soft_vertex || !before || !packed || !half || !soft || !mid_soft);
    int rc = !ply || !fig || lacking ? fail("out of memory") : 0;
    if (!rc && a.csv && !csv)
        rc = fail("%s: cannot write: %s", a.csv, strerror(errno));
    if (csv)
        fputs("frame,rms,worst,worst_vertex\n", csv);
    for (size_t i = 0; !rc && i < count; i++) {
        char path[4200], err[128];
        snprintf(path, sizeof path, "%s/frame_%05u.ply", a.dir, frames[i]);
        long got = read_ply(path, ply, nv, err, sizeof err);
        if (got < 0) {
            rc = fail("%s: %s", path, err);
            break;
        }
        if (a.remove && unlink(path) != 0) {
            rc = fail("%s: cannot delete: %s", path, strerror(errno));
            break;
        }
        const float(*posed)[3] = bake_replay_pose(&r, frames[i], &d);
        if (!posed)
            break;
        fig[i].frame = frames[i];
        if ((size_t)got != nv) {
            rc = fail("%s: %ld vertices where the baked model has %zu", path, got, nv);
            break;
        }
        if (a.soft) {
            for (size_t k = 0; k < soft_count; k++) /* the run's soft part, packed as compared */
                memcpy(packed[k], ply[soft_vertex[k]], sizeof *packed);
            bake_replay_compare(posed, soft, nv, (const float(*)[3])packed, soft_count, &fig[i].d);
            fig[i].d.worst_vertex = soft_count ? soft_vertex[fig[i].d.worst_vertex] : 0;
        } else {
            bake_replay_compare((const float(*)[3])ply, NULL, nv, posed, nv, &fig[i].d);
        }
        if (csv)
            fprintf(csv, "%u,%.6g,%.6g,%zu\n", fig[i].frame, fig[i].d.rms, fig[i].d.worst, fig[i].d.worst_vertex);
        if (a.half) {
            /* the soft part: its chord's middle from the frame before's pose (kept in mid_soft) and this one's,
             * then the pose halfway */
            bool pair = i && frames[i - 1] + 1 == frames[i];
            for (size_t k = 0; k < soft_count; k++)
                for (int c = 0; c < 3; c++) {
                    float now = posed[soft_vertex[k]][c];
                    before[k][c] = pair ? 0.5f * (mid_soft[k][c] + now) : now;
                    mid_soft[k][c] = now;
                }
            const float(*mid)[3] = pair ? bake_replay_pose(&r, frames[i] - 0.5, &d) : NULL;
            if (pair && !mid)
                break;
            if (pair) {
                frame_figures *h = &half[halves++];
                h->frame = frames[i - 1];
                bake_replay_compare(mid, soft, nv, (const float(*)[3])before, soft_count, &h->d);
                h->d.worst_vertex = soft_count ? soft_vertex[h->d.worst_vertex] : 0;
            }
        }
    }
    if (!rc && d.status != PLUSH_OK) {
        char line[600];
        plush_diag_format(&d, line, sizeof line);
        rc = fail("%s", line);
    }
    if (csv && fclose(csv) != 0 && !rc)
        rc = fail("%s: cannot write: %s", a.csv, strerror(errno));
    if (!rc)
        report(fig, count, &a, r.model, height, half, halves);
    free(packed);
    free(mid_soft);
    free(soft_vertex);
    free(soft);
    free(half);
    free(before);
    free(fig);
    free(ply);
    free(frames);
    bake_replay_close(&r);
    return rc;
}
