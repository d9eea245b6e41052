/* stress_motions: writes short hard motions for the standard MMD bone names, the ones a dance rarely holds
 * for long but a user's motion may: what the soft parts are tried on beside the long dances.
 *
 *   stress_motions [-o DIR] [--more] [--dance SEED]...
 *       DIR/spin.vmd, jump.vmd, head_shake.vmd, arms_cross.vmd, kneel.vmd, cut.vmd (default DIR .); --more: also the six
 *       below them; --dance SEED: also DIR/dance_SEED.vmd
 *
 * Each is 150 frames at 30 per second: the move, then the model standing still at its last pose, so the
 * part must settle. Linear curves; the same bytes on every run.
 *   spin        センター turns about the vertical at 720 degrees a second for 60 frames (four turns), keyed
 *               every 3 frames (72 degrees: the shortest way round is the way it turns)
 *   jump        センター crouches, leaves the ground 8 units (about a metre for a 20-unit character), lands
 *               and crouches again within 50 frames
 *   head_shake  頭 turns 40 degrees either way three times a second for 60 frames
 *   arms_cross  腕 (both) swing down across the front of the body and back out, twice, in 80 frames
 *   kneel       (a deep squat) センター drops 6 units and 上半身 leans 30 degrees forward within 30 frames while the feet's
 *               IK holds them (the knees bend), held 60 frames, then stands up
 * With --more, six the soft parts were not tuned on (tools/soak.sh --motion runs them; docs/measured.md):
 *   bow         上半身 bends 75 degrees forward in 20 frames, held 40, and back in 20
 *   arms_up     腕 (both) from along the shoulders to overhead and back, twice, in 80 frames
 *   turn_back   センター turns 180 degrees in 6 frames (900 degrees a second), holds 30, and back
 *   lean_side   上半身 tilts 40 degrees to either side, each 10 frames, for 60 frames
 *   glide_stop  センター and both feet's IK glide 24 units forward in 60 frames (the centre bobbing 0.8 each 5
 *               frames), then stop at once
 *   drop        センター falls from 6 units up to 3 below rest in 8 frames and comes back to rest
 *   cut         (scene cuts) センター moves 20 units aside from frame 30 to 31 and to 10 behind its rest from 60 to
 *               61, then 上半身 and 下半身 turn 179 degrees from frame 90 to 91; written by default with the first five
 * With --dance SEED (repeatable), a made-up dance of 900 frames, DIR/dance_SEED.vmd, the same bytes for a seed:
 *   every 6 to 12 frames a new pose drawn at random within what a dancer does: the centre moved up to 1.5 units
 *   aside, 2.5 down or 0.5 up and turned up to 90 degrees either way; the upper body bent up to 30 forward, 20
 *   back and 25 aside, twisted up to 30; the lower body turned up to 20; the neck and head up to 40; each arm
 *   anywhere from 70 degrees below to 60 above the shoulder line and from 20 behind to 80 in front, its elbow
 *   bent up to 110; one foot at a time stepping up to 1.5 units and lifted up to 1. Each bone keys its own
 *   times, so the moves overlap as a dance's do; held at its last pose for the last 60 frames. */
#include "plush/vmd.h"
#include "plush/sys/vmd.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FRAMES = 150, MAX_KEYS = 4096, DANCE_FRAMES = 900 };

typedef struct keys {
    plush_vmd_bone_key k[MAX_KEYS];
    size_t n;
} keys;

static void axis_angle(const float axis[3], double degrees, float q[4])
{
    double h = 0.5 * degrees * M_PI / 180.0, l = sqrt((double)axis[0] * axis[0] + (double)axis[1] * axis[1] +
                                                         (double)axis[2] * axis[2]);
    for (int i = 0; i < 3; i++)
        q[i] = (float)(sin(h) * axis[i] / l);
    q[3] = (float)cos(h);
}

static void key(keys *ks, const char *bone, uint32_t frame, float x, float y, float z, const float q[4])
{
    static const uint8_t straight[4][4] = {
        {20, 20, 107, 107}, {20, 20, 107, 107}, {20, 20, 107, 107}, {20, 20, 107, 107}};
    if (ks->n >= MAX_KEYS)
        abort(); /* the motions below are fixed: a count over the array is a bug here */
    plush_vmd_bone_key *k = &ks->k[ks->n++];
    memset(k, 0, sizeof *k);
    k->name = (plush_str){.s = bone, .len = (uint32_t)strlen(bone)};
    k->frame = frame;
    k->translation[0] = x, k->translation[1] = y, k->translation[2] = z;
    static const float identity[4] = {0, 0, 0, 1};
    memcpy(k->rotation, q ? q : identity, sizeof k->rotation);
    plush_vmd_curves_write(straight, k->interpolation);
}

static const float up[3] = {0, 1, 0}, side[3] = {1, 0, 0};

static void spin(keys *ks)
{
    float q[4];
    for (uint32_t f = 0; f <= 60; f += 3) {
        axis_angle(up, 24.0 * f, q); /* 720 degrees a second at 30 frames a second */
        key(ks, "センター", f, 0, 0, 0, q);
    }
    key(ks, "センター", FRAMES, 0, 0, 0, q);
}

static void jump(keys *ks)
{
    static const struct { uint32_t f; float y; } at[] = {{0, 0}, {10, -2}, {25, 8}, {38, 0}, {44, -2}, {50, 0}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        key(ks, "センター", at[i].f, 0, at[i].y, 0, NULL);
    key(ks, "センター", FRAMES, 0, 0, 0, NULL);
}

static void head_shake(keys *ks)
{
    float q[4];
    key(ks, "頭", 0, 0, 0, 0, NULL);
    for (uint32_t f = 5, i = 0; f <= 55; f += 5, i++) { /* a swing each 5 frames: three shakes a second */
        axis_angle(up, i % 2 ? -40 : 40, q);
        key(ks, "頭", f, 0, 0, 0, q);
    }
    key(ks, "頭", 60, 0, 0, 0, NULL);
    key(ks, "頭", FRAMES, 0, 0, 0, NULL);
}

/* The turn taking unit direction a onto unit direction b (the shortest one). */
static void from_to(const double a[3], const double b[3], float q[4])
{
    double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    double w = 1 + a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    double l = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + w * w);
    for (int i = 0; i < 3; i++)
        q[i] = (float)(c[i] / l);
    q[3] = (float)(w / l);
}

/* Each arm from along the shoulders (+x for the left, the way MMD's arm bones point) to down, in front
 * (the model faces -z) and past the middle of the body. */
static void arms_cross(keys *ks)
{
    for (int a = 0; a < 2; a++) {
        const char *bone = a ? "右腕" : "左腕";
        double s = a ? -1 : 1, l = sqrt(0.25 * 0.25 + 0.55 * 0.55 + 0.8 * 0.8);
        double along[3] = {s, 0, 0}, across[3] = {-0.25 * s / l, -0.55 / l, -0.8 / l};
        float cross[4];
        from_to(along, across, cross);
        static const uint32_t out_at[] = {0, 40, 80}, cross_at[] = {20, 60};
        for (size_t i = 0; i < 3; i++)
            key(ks, bone, out_at[i], 0, 0, 0, NULL);
        for (size_t i = 0; i < 2; i++)
            key(ks, bone, cross_at[i], 0, 0, 0, cross);
        key(ks, bone, FRAMES, 0, 0, 0, NULL);
    }
}

static void kneel(keys *ks)
{
    float lean[4];
    axis_angle(side, -30, lean); /* forward: the model faces -z */
    key(ks, "センター", 0, 0, 0, 0, NULL);
    key(ks, "センター", 30, 0, -6, 0, NULL);
    key(ks, "センター", 90, 0, -6, 0, NULL);
    key(ks, "センター", 115, 0, 0, 0, NULL);
    key(ks, "上半身", 0, 0, 0, 0, NULL);
    key(ks, "上半身", 30, 0, 0, 0, lean);
    key(ks, "上半身", 90, 0, 0, 0, lean);
    key(ks, "上半身", 115, 0, 0, 0, NULL);
    for (int a = 0; a < 2; a++) { /* the feet stay where they stand: their IK keyed at rest */
        key(ks, a ? "右足ＩＫ" : "左足ＩＫ", 0, 0, 0, 0, NULL);
        key(ks, a ? "右足ＩＫ" : "左足ＩＫ", FRAMES, 0, 0, 0, NULL);
    }
}

static const float fwd_axis[3] = {1, 0, 0}, roll_axis[3] = {0, 0, 1};

/* Keys bone at frames at[0 .. n) turned by turns[i] (NULL: its rest), then at rest at the motion's end. */
static void key_turns(keys *ks, const char *bone, size_t n, const uint32_t at[], const float *const turns[])
{
    for (size_t i = 0; i < n; i++)
        key(ks, bone, at[i], 0, 0, 0, turns[i]);
    key(ks, bone, FRAMES, 0, 0, 0, NULL);
}

static void bow(keys *ks)
{
    float q[4];
    axis_angle(fwd_axis, -75, q);
    static const uint32_t at[] = {0, 20, 60, 80};
    const float *const turns[] = {NULL, q, q, NULL};
    key_turns(ks, "上半身", 4, at, turns);
}

/* Each arm from along the shoulders to overhead (a little forward and outward) and back, twice. */
static void arms_up(keys *ks)
{
    for (int a = 0; a < 2; a++) {
        const char *bone = a ? "右腕" : "左腕";
        double s = a ? -1 : 1, l = sqrt(0.15 * 0.15 + 0.98 * 0.98 + 0.1 * 0.1);
        double along[3] = {s, 0, 0}, upward[3] = {0.15 * s / l, 0.98 / l, -0.1 / l};
        float raised[4];
        from_to(along, upward, raised);
        static const uint32_t at[] = {0, 20, 40, 60, 80};
        const float *const turns[] = {NULL, raised, NULL, raised, NULL};
        key_turns(ks, bone, 5, at, turns);
    }
}

static void turn_back(keys *ks)
{
    float q[4], h[4];
    axis_angle(up, 90, h);
    axis_angle(up, 179, q); /* 179: the shortest way round is the way it turns */
    static const uint32_t at[] = {0, 3, 6, 36, 39, 42};
    const float *const turns[] = {NULL, h, q, q, h, NULL};
    key_turns(ks, "センター", 6, at, turns);
}

/* Scene cuts, as real dances have between takes: the whole model moved 20 units aside from one frame to the next,
 * then 22 units back and behind, then its upper and lower body turned half round from one frame to the next. */
static void cut(keys *ks)
{
    float q[4];
    axis_angle(up, 179, q);
    key(ks, "センター", 0, 0, 0, 0, NULL);
    key(ks, "センター", 30, 0, 0, 0, NULL);
    key(ks, "センター", 31, 20, 0, 0, NULL);
    key(ks, "センター", 60, 20, 0, 0, NULL);
    key(ks, "センター", 61, 0, 0, -10, NULL);
    key(ks, "センター", FRAMES, 0, 0, -10, NULL);
    static const char *const halves[] = {"上半身", "下半身"};
    for (int b = 0; b < 2; b++) {
        key(ks, halves[b], 0, 0, 0, 0, NULL);
        key(ks, halves[b], 90, 0, 0, 0, NULL);
        key(ks, halves[b], 91, 0, 0, 0, q);
        key(ks, halves[b], FRAMES, 0, 0, 0, q);
    }
}

static void lean_side(keys *ks)
{
    float l[4], r[4];
    axis_angle(roll_axis, 40, l);
    axis_angle(roll_axis, -40, r);
    key(ks, "上半身", 0, 0, 0, 0, NULL);
    for (uint32_t f = 10, i = 0; f <= 60; f += 10, i++)
        key(ks, "上半身", f, 0, 0, 0, i % 2 ? r : l);
    key(ks, "上半身", 70, 0, 0, 0, NULL);
    key(ks, "上半身", FRAMES, 0, 0, 0, NULL);
}

static void glide_stop(keys *ks)
{
    for (uint32_t f = 0; f <= 60; f += 5)
        key(ks, "センター", f, 0, (f / 5) % 2 ? 0.8f : 0.0f, -0.4f * (float)f, NULL);
    key(ks, "センター", FRAMES, 0, 0, -24.0f, NULL);
    for (int a = 0; a < 2; a++) { /* the feet go along: the body glides forward and stops */
        key(ks, a ? "右足ＩＫ" : "左足ＩＫ", 0, 0, 0, 0, NULL);
        key(ks, a ? "右足ＩＫ" : "左足ＩＫ", 60, 0, 0, -24.0f, NULL);
        key(ks, a ? "右足ＩＫ" : "左足ＩＫ", FRAMES, 0, 0, -24.0f, NULL);
    }
}

static void drop(keys *ks)
{
    key(ks, "センター", 0, 0, 6, 0, NULL);
    key(ks, "センター", 20, 0, 6, 0, NULL);
    key(ks, "センター", 28, 0, -3, 0, NULL);
    key(ks, "センター", 40, 0, 0, 0, NULL);
    key(ks, "センター", FRAMES, 0, 0, 0, NULL);
}

/* A small fixed generator (xorshift64*), so a seed gives the same dance everywhere. */
static uint64_t dance_state;

static double uniform(double lo, double hi)
{
    dance_state ^= dance_state >> 12, dance_state ^= dance_state << 25, dance_state ^= dance_state >> 27;
    double u = (double)((dance_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
    return lo + (hi - lo) * u;
}

/* The turn of the x-pitch, y-yaw and z-roll angles in degrees, applied yaw, then pitch, then roll. */
static void euler(double pitch, double yaw, double roll, float q[4])
{
    float a[4], b[4], c[4];
    axis_angle(fwd_axis, pitch, a);
    axis_angle(up, yaw, b);
    axis_angle(roll_axis, roll, c);
    float ab[4] = {b[3] * a[0] + b[0] * a[3] + b[1] * a[2] - b[2] * a[1], b[3] * a[1] - b[0] * a[2] + b[1] * a[3] + b[2] * a[0],
                   b[3] * a[2] + b[0] * a[1] - b[1] * a[0] + b[2] * a[3], b[3] * a[3] - b[0] * a[0] - b[1] * a[1] - b[2] * a[2]};
    q[0] = ab[3] * c[0] + ab[0] * c[3] + ab[1] * c[2] - ab[2] * c[1];
    q[1] = ab[3] * c[1] - ab[0] * c[2] + ab[1] * c[3] + ab[2] * c[0];
    q[2] = ab[3] * c[2] + ab[0] * c[1] - ab[1] * c[0] + ab[2] * c[3];
    q[3] = ab[3] * c[3] - ab[0] * c[0] - ab[1] * c[1] - ab[2] * c[2];
}

/* One bone's keys of the dance: a pose drawn every 6 to 12 frames until the hold, the last one held. */
static void dance_bone(keys *ks, const char *bone, int kind)
{
    uint32_t last = DANCE_FRAMES - 60;
    float q[4] = {0, 0, 0, 1}, t[3] = {0, 0, 0};
    for (uint32_t f = 0;; f += (uint32_t)uniform(6, 13)) {
        f = f > last ? last : f;
        memset(t, 0, sizeof t);
        double s = kind == 4 ? 1 : -1; /* the left arm (+x) or the right */
        switch (kind) {
        case 0: /* the centre */
            t[0] = (float)uniform(-1.5, 1.5), t[1] = (float)uniform(-2.5, 0.5), t[2] = (float)uniform(-1.5, 1.5);
            euler(0, uniform(-90, 90), 0, q);
            break;
        case 1: euler(uniform(-30, 20), uniform(-30, 30), uniform(-25, 25), q); break; /* the upper body */
        case 2: euler(0, uniform(-20, 20), uniform(-8, 8), q); break;                  /* the lower body */
        case 3: euler(uniform(-25, 25), uniform(-40, 40), uniform(-15, 15), q); break; /* the neck, the head */
        case 4:
        case 5: { /* an arm: a direction from along the shoulder line */
            double e = uniform(-70, 60) * M_PI / 180, a = uniform(-20, 80) * M_PI / 180;
            double along[3] = {s, 0, 0}, to[3] = {s * cos(e) * cos(a), sin(e), -cos(e) * sin(a)};
            from_to(along, to, q);
            break;
        }
        case 6: case 7: euler(0, (kind == 6 ? 1 : -1) * uniform(0, 110), 0, q); break; /* an elbow: forward */
        default: { /* a foot's IK: a step now and then, lifted while it moves */
            bool steps = uniform(0, 1) < 0.5;
            static float at[2][3];
            float *p = at[kind - 8];
            if (f == 0)
                p[0] = p[1] = p[2] = 0;
            if (steps)
                p[0] = (float)uniform(-0.8, 0.8), p[2] = (float)uniform(-1.5, 1.5);
            memcpy(t, p, sizeof t);
            t[1] = steps ? (float)uniform(0, 1) : 0;
            break;
        }
        }
        key(ks, bone, f, t[0], t[1], t[2], q);
        if (f == last)
            break;
    }
    key(ks, bone, DANCE_FRAMES, t[0], kind >= 8 ? 0 : t[1], t[2], q);
}

static void dance(keys *ks)
{
    static const struct { const char *bone; int kind; } bones[] = {
        {"センター", 0}, {"上半身", 1}, {"下半身", 2}, {"首", 3}, {"頭", 3}, {"左腕", 4}, {"右腕", 5},
        {"左ひじ", 6}, {"右ひじ", 7}, {"左足ＩＫ", 8}, {"右足ＩＫ", 9}};
    for (size_t i = 0; i < sizeof bones / sizeof bones[0]; i++)
        dance_bone(ks, bones[i].bone, bones[i].kind);
}

static int write_one(const char *dir, const char *name, void (*make)(keys *))
{
    static keys ks;
    ks.n = 0;
    make(&ks);
    plush_vmd_motion *m = plush_vmd_create();
    if (!m) {
        fprintf(stderr, "stress_motions: out of memory\n");
        return 1;
    }
    m->bone_keys = ks.k;
    m->bone_key_count = ks.n;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.vmd", dir, name);
    plush_diag diag = {0};
    plush_diag_reset(&diag);
    plush_status st = plush_vmd_write_file(m, NULL, path, &diag);
    m->bone_keys = NULL;
    m->bone_key_count = 0;
    plush_vmd_free(m);
    if (st != PLUSH_OK) {
        char line[600];
        plush_diag_format(&diag, line, sizeof line);
        fprintf(stderr, "stress_motions: %s: %s\n", path, line);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = ".";
    bool more = false;
    uint64_t seeds[64];
    size_t seed_count = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: stress_motions [-o DIR] [--more] [--dance SEED]...\nwrites DIR/spin.vmd, jump.vmd, head_shake.vmd, "
                   "arms_cross.vmd, kneel.vmd and cut.vmd: 150-frame hard motions for the standard MMD bone names (default DIR: .); "
                   "--more: also bow.vmd, arms_up.vmd, turn_back.vmd, lean_side.vmd, glide_stop.vmd and drop.vmd; "
                   "--dance SEED (up to 64): also dance_SEED.vmd, a made-up 900-frame dance, the same for a seed\n");
            return 0;
        }
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--more"))
            more = true;
        else if (!strcmp(argv[i], "--dance") && i + 1 < argc && seed_count < 64) {
            char *end = NULL;
            seeds[seed_count++] = strtoull(argv[++i], &end, 10);
            if (!end || *end || end == argv[i] || argv[i][0] == '-') {
                fprintf(stderr, "stress_motions: --dance %s: not a seed (a whole number)\n", argv[i]);
                return 2;
            }
        }
        else {
            fprintf(stderr, "usage: stress_motions [-o DIR] [--more] [--dance SEED]...\n");
            return 2;
        }
    }
    static const struct { const char *name; void (*make)(keys *); } motions[] = {
        {"spin", spin}, {"jump", jump}, {"head_shake", head_shake}, {"arms_cross", arms_cross}, {"kneel", kneel},
        {"cut", cut}, {"bow", bow}, {"arms_up", arms_up}, {"turn_back", turn_back}, {"lean_side", lean_side},
        {"glide_stop", glide_stop}, {"drop", drop}};
    size_t count = more ? sizeof motions / sizeof motions[0] : 6;
    int rc = 0;
    for (size_t i = 0; i < count; i++)
        rc |= write_one(dir, motions[i].name, motions[i].make);
    for (size_t i = 0; i < seed_count; i++) {
        char name[64];
        snprintf(name, sizeof name, "dance_%llu", (unsigned long long)seeds[i]);
        dance_state = seeds[i] * 0x9E3779B97F4A7C15ull + 1; /* never 0 */
        rc |= write_one(dir, name, dance);
    }
    return rc;
}
