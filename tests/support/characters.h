/* The shared characters' soft parts as tools/soak.sh runs them, caged the way a user cages them (plush run
 * MODEL --cage MATERIAL --motion M), and the checks every run of them is held to: used by the characters
 * suite (the dances' first frames, standing still) and the slow stress suite (the hard motions). */
#ifndef PLUSH_TEST_CHARACTERS_H
#define PLUSH_TEST_CHARACTERS_H

#include "support/shared_data.h"

#include <stdbool.h>
#include <stddef.h>

#define CHARACTERS_DATA SHARED_DATA "/"
#define CHARACTERS_LONG_DANCE CHARACTERS_DATA "characters/mmd_base/サンプルモーション2.vmd"
#define CHARACTERS_SHORT_DANCE CHARACTERS_DATA "characters/blender_mmd_tools/test.vmd"

typedef struct character_case {
    const char *model, *cage;
    bool surface_bar;      /* meets the surface bar and has no piece more than half pinned */
    double most_inside;    /* the body figure reached: the worst frame's share inside, at most (or the
                              author's skinning's worst plus one point, when that is more) */
    bool short_inside;     /* on the whole short dance at most 1% inside at every frame, or no more than the
                              author's skinning at that frame (the rigid bodies are fatter than the skin: a
                              shallow contact there is one the viewer does not see, which skin_bar holds) */
    bool unfolded;         /* its cage's crease p99 stays within 120 degrees at every frame (the bar's fold) */
    bool skin_bar;         /* behind the visible skin within the bar: at every frame at most 2 points above the
                              author's model, on average 0.5 */
    bool bar_on_dances;    /* held to the surface bar (surface_bar) on the dances only: it misses it on some hard
                              motions */
    bool swing_bar;        /* where the author's part moves, plush's swing within 0.5-2 of the author's physics'
                              (the summary's ratio) on every motion */
} character_case;

extern const character_case characters_cases[];
extern const size_t characters_case_count;

bool characters_present(const char *path);
/* Column `name` of every data row of csv into out (at most cap rows); the number of rows. */
size_t characters_column(const char *csv, const char *name, double *out, size_t cap);
double characters_max_of(const double *v, size_t n);
/* The swing bar's frames in a run's summary (out) against its quality.csv (csv): the frames where the author's
 * part tears (the author_surface_strain columns past the surface bar's strain figures) as the summary counts
 * them, and plush's and the author's mean swing over the others as it gives them. Returns the frames torn. */
size_t characters_check_torn(const char *out, const char *csv);
/* What a run's motion is: a real dance; a short hard motion (tools/stress/stress_motions.c), whose body figure
 * and cage fold are printed, not held to the dances' level (docs/measured.md has them); a made-up dance
 * (stress_motions --dance), held as a hard motion is, its surface bar (the cage's fold included) printed, not
 * held. */
typedef enum characters_motion { CHARACTERS_DANCE, CHARACTERS_STRESS, CHARACTERS_MADE_UP } characters_motion;
/* One run of case c on dance (frames: --frames, or NULL for the whole motion; want: the rows it must write)
 * into the suite's temporary folder, held to the checks (characters.c says which); alive: the least mean
 * distance from bone skinning the part must keep (a dance moves it; a short motion that ends standing still
 * may not). */
void characters_run_case(const character_case *c, const char *dance, const char *frames, size_t want,
                         double alive_min, characters_motion kind);
/* The short hard motions make writes beside the binary PLUSH_BIN names (tools/stress/stress_motions.c): its
 * path into out. */
void characters_stress_motion(const char *name, char *out, size_t cap);

#endif
