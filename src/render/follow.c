/* The camera that follows a box (render.h, plush_render_follow_update).
 *
 * Each axis on its own: the smoothed half-size decays towards the current half-size plus the slack, but
 * never below the current half-size (it grows at once as far as it must, no further: a box that grows
 * steadily is zoomed out steadily, not in steps); the smoothed centre decays towards the current centre and
 * is then clamped so that the smoothed box holds the current one. The clamp cannot fail, since the
 * half-size is never below the current one's. Jitter smaller than the slack moves neither. Exponential decay with the time step in the exponent makes the result independent of
 * how finely the same seconds are cut into frames (up to the clamp), so a 60 fps run is framed as a 30 fps
 * one. A critically damped spring would ease the start of a pan as well, but it lags twice as far behind a
 * moving box for the same time constant, and the clamp is what follows a moving box here anyway. */
#include "plush/sys/render.h"

#include <math.h>
#include <string.h>

static bool finite_box(const float lo[3], const float hi[3])
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(lo[k]) || !isfinite(hi[k]) || lo[k] > hi[k])
            return false;
    return true;
}

static void follow_step(plush_render_follow *f, const float lo[3], const float hi[3], float seconds)
{
    float center[3], half[3], side = 0;
    for (int k = 0; k < 3; k++) {
        center[k] = 0.5f * lo[k] + 0.5f * hi[k];
        half[k] = 0.5f * hi[k] - 0.5f * lo[k];
        side = fmaxf(side, hi[k] - lo[k]);
    }
    float room = 0.5f * PLUSH_RENDER_FOLLOW_SLACK * side;
    if (!f->started) {
        for (int k = 0; k < 3; k++)
            f->center[k] = center[k], f->half[k] = half[k] + room;
        f->started = true;
        return;
    }
    float dt = seconds > 0 && isfinite(seconds) ? seconds : 0;
    float a = 1.0f - expf(-dt / PLUSH_RENDER_FOLLOW_SECONDS);
    for (int k = 0; k < 3; k++) {
        float eased = f->half[k] + a * (half[k] + room - f->half[k]);
        f->half[k] = fmaxf(eased, half[k]);
        float c = f->center[k] + a * (center[k] - f->center[k]);
        c = fmaxf(c, hi[k] - f->half[k]);
        f->center[k] = fminf(c, lo[k] + f->half[k]);
    }
}

void plush_render_follow_update(plush_render_follow *f, const float lo[3], const float hi[3], float seconds,
                                float aspect, plush_render_view *out)
{
    if (lo && hi && finite_box(lo, hi))
        follow_step(f, lo, hi, seconds);
    if (!f->started) {
        plush_render_view_fit_box(NULL, NULL, aspect, out);
        return;
    }
    float slo[3], shi[3];
    for (int k = 0; k < 3; k++)
        slo[k] = f->center[k] - f->half[k], shi[k] = f->center[k] + f->half[k];
    /* the direction, target and field of view as the fitted front view has them; only the distance differs */
    plush_render_view_fit_box(slo, shi, aspect, out);
    if (!(aspect > 0) || !isfinite(aspect))
        aspect = 1;
    float t = tanf(0.5f * out->fov_degrees * (float)(M_PI / 180.0));
    /* the distance from the box's centre plane at which its cross-section touches the frame */
    float touch = fmaxf(f->half[1] / t, f->half[0] / (t * aspect));
    float d = fmaxf(touch / PLUSH_RENDER_FOLLOW_FILL, touch + f->half[2]);
    if (d > 0 && isfinite(d))
        out->eye[2] = f->center[2] - d;
}
