/* Attaching a cage to a model as a PMX 2.1 TriMesh soft body (plush attach).
 *
 *   plush_arena arena = {0};
 *   plush_cage_mesh cage;
 *   plush_attach_read_proxy_file("cage.obj", &arena, &cage, &diag);        // OBJ or PMX, told by content
 *   plush_attach_options opt = { .cage = &cage, .auto_mask = true };
 *   plush_attach_preset("plush", &opt.soft);
 *   plush_attach_set_field(&opt.soft, "config.mt", 0.3, &diag);            // `plush info --json` names
 *   const char *pins[] = {"頭"};
 *   opt.pin_bones = pins, opt.pin_bone_count = 1;
 *   plush_pmx_model *out = NULL;
 *   plush_attach_result res;
 *   if (plush_attach(model, &opt, &out, &res, &diag) == PLUSH_OK)
 *       plush_pmx_write_file(out, &(plush_pmx_write_options){.version = PLUSH_PMX_WRITE_21}, "out.pmx", &diag);
 *   plush_pmx_free(out);       // before the model: out shares the model's unchanged sections
 *   plush_arena_free(&arena);
 *
 * The result holds everything the model holds, unchanged, plus: the cage's vertices after the model's (each
 * a copy of the skin weights of the nearest model vertex, so the cage follows the skeleton; SDEF becomes
 * BDEF2 with the same bones and weights), its faces after the model's, and for each connected piece of the
 * cage (faces joined by shared edges, numbered by their first face) one invisible material after the model's (diffuse alpha 0, no edge,
 * no shadows, not double-sided) drawing the piece's faces and one TriMesh soft body on that material after
 * the model's soft bodies, with the piece's pins and anchors. Separate pieces get separate soft bodies
 * because Bullet cannot build one from a mesh in several pieces (it never finishes its face tree). With
 * several pieces the names get " 1", " 2", ... Version 2.1.
 */
#ifndef PLUSH_ATTACH_H
#define PLUSH_ATTACH_H

#include "plush/pmx.h"
#include "plush/cage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Preset soft-body parameters: every field but name, material, anchors and pins. Group 15, mask 0xFFFF
 * (see auto_mask), B-link on at distance 2, no clusters, aero model 0 (V_Point) unless said. Cluster
 * k-values are Bullet's defaults (SRHR_CL 0.1, SKHR_CL 1, SSHR_CL 0.5, the three SPLT_CL 0.5); CHR 1,
 * KHR 0.1, SHR 1, AHR 0.7, VCF 1, iterations D 0 and C 4 in all three.
 *
 *   field            plush   jelly   cloth
 *   total_mass       1       1       0.2
 *   margin           -0.1    -0.1    -0.04  negative: in mean edges of each cage piece (see below)
 *   aero_model       0       0       1 (V_TwoSided)
 *   config.dp        0.05    0.01    0.02   damping
 *   config.dg        0       0       0.01   drag
 *   config.lf        0       0       0.05   lift
 *   config.pr        0       0       0      pressure (needs a closed cage)
 *   config.vc        0       20      0      volume conservation (needs a closed cage)
 *   config.df        0.2     0.5     0.5    dynamic friction
 *   config.mt        0.05    0.05    0      pose matching: pull back toward the rest shape
 *   iterations.v     0       1       1      velocity solver
 *   iterations.p     16      8       8      position solver
 *   material_params  0.5     0.45    0.9    lst, ast (linear, angular stiffness); vst 0.5 / 1 / 1
 *
 * "plush" keeps a stuffed shape that gives way and recovers; "jelly" wobbles and keeps its volume;
 * "cloth" hangs and folds. A negative margin is relative: attach turns it into that many mean edges of each
 * cage piece, in model units (the margin keeps the piece's faces off the model's body, see plush/physics.h).
 * Returns false (out untouched) for an unknown name. */
bool plush_attach_preset(const char *name, plush_pmx_soft_body *out);

/* Sets one numeric field by its `plush info --json` name: group, mask, flags, blink_distance, clusters,
 * total_mass, margin, aero_model, config.<vcf dp dg lf pr vc df mt chr khr shr ahr srhr_cl skhr_cl sshr_cl
 * sr_splt_cl sk_splt_cl ss_splt_cl>, iterations.<v p d c>, material_params.<lst ast vst>; the part after
 * the dot alone also works. Integer fields need a whole number in range (group 0..15, mask 0..65535, flags
 * 0..7, aero_model 0..6, the rest 0..2^31-1); float fields a finite number, at least 0 except config.pr.
 * PLUSH_E_ARGUMENT with the reason in diag otherwise. */
plush_status plush_attach_set_field(plush_pmx_soft_body *sb, const char *field, double value, plush_diag *diag);

/* Reads a proxy cage: a PMX (every material's faces) or anything else as OBJ. Vertices at exactly the same
 * position are joined and vertices no face uses dropped; cage vertex k is then the k-th remaining vertex in
 * file order (so for a file plush proxy wrote, vertex k of the file). Faces naming one vertex twice after
 * joining are dropped with a warning. out->normals is NULL; out->source gives the file's vertex index.
 * Errors: the reader's (line or section and byte offset), a proxy with no faces (PLUSH_E_ARGUMENT). */
plush_status plush_attach_read_proxy(const uint8_t *data, size_t size, plush_arena *arena, plush_cage_mesh *out,
                                     plush_diag *diag);
/* plush_attach_read_proxy on the file's bytes; sets diag->file to path when it is NULL. */
plush_status plush_attach_read_proxy_file(const char *path, plush_arena *arena, plush_cage_mesh *out,
                                          plush_diag *diag);

/* Zero fields mean the defaults. */
typedef struct plush_attach_options {
    const plush_cage_mesh *cage;          /* required: at least one face, finite positions */
    const char *name;                     /* material and soft body name (Japanese and English); NULL: "plush cage" */
    plush_pmx_soft_body soft;             /* parameters (a preset, then fields); name, material, anchors and
                                           * pins are ignored. All zero: the "plush" preset */
    bool auto_mask;                       /* replace soft.mask: every group but the soft body's own and the groups
                                           * of rigid bodies whose shape at rest holds a free cage vertex (they
                                           * stand inside the part and would push the cage from inside); the
                                           * body (legs, hips, torso) is collided with */
    const char *const *pin_bones;         /* bone names: a cage vertex whose copied weights give these bones
                                           * together at least pin_share is pinned */
    size_t pin_bone_count;
    float pin_share;                      /* 0: 0.5 */
    const uint32_t *pin_vertices;         /* cage vertex numbers, pinned as well */
    size_t pin_vertex_count;
    const char *const *anchors;           /* rigid body names: cage vertices inside the body's shape (sphere,
                                           * box, capsule at its PMX pose) are anchored to it; a pinned vertex is
                                           * not anchored, and a vertex inside several bodies goes to the first */
    size_t anchor_count;
    bool auto_pins;                       /* pin each piece where it attaches (see below), on top of pin_bones
                                           * and pin_vertices */
    float pin_band;                       /* auto_pins: the band pinned, a share of the piece's extent along its
                                           * up direction from its top; 0: 0.15, and at most 40% of the piece's
                                           * vertices (a band given here has no such cap) */
    const char *const *materials;         /* the materials the cage covers (auto_pins), each a name, English
                                           * name or number as plush info lists them; NULL: every material
                                           * at least half of whose vertices lie within the cage's mean edge
                                           * length of a cage vertex */
    size_t material_count;
    bool require_hold;                    /* fail (PLUSH_E_UNHELD) when a piece has no pinned or anchored
                                           * vertex, instead of the warning "it falls freely" */
    void (*progress)(void *user, size_t done, size_t total); /* NULL: none. Called now and then while cage
                                           * and model vertices are matched to their nearest (the long part
                                           * for a large cage), done rising to total */
    void *progress_user;
} plush_attach_options;

/* What holds one piece (plush_attach_result.piece_info). */
typedef struct plush_attach_piece {
    size_t triangles, vertices;           /* the piece's faces and new model vertices */
    size_t pinned, anchored;
    bool spins;                           /* fewer than three non-collinear pinned vertices and no anchor: a
                                           * warning says so */
    size_t auto_pinned;                   /* of pinned: set by auto_pins */
    size_t fitted;                        /* of auto_pinned: where the piece fits the body (see below) */
    bool physics;                         /* no held bone reaches it: its automatic pins follow the bone its
                                           * chain hangs from, which physics moves */
    bool from_contact;                    /* its top touches nothing of the model: its automatic pins are where
                                           * it does (a tail or a tuft standing up from the body or the head) */
    int32_t bones[4];                     /* the bones its automatic pins follow, most used first */
    size_t bone_count;
    float free_length;                    /* the longest distance along the cage's edges from a pinned or
                                           * anchored vertex to a vertex of the piece (0: none held) */
} plush_attach_piece;

typedef struct plush_attach_result {
    size_t first_vertex;                  /* the first new model vertex */
    size_t vertex_count;                  /* new model vertices: the cage's, piece by piece, each piece's in
                                           * increasing cage order (a vertex shared by two pieces is copied) */
    const uint32_t *cage_vertex;          /* per new vertex: the cage vertex it is (owned by *out) */
    size_t material;                      /* the first new material */
    size_t soft_body;                     /* the first new soft body */
    size_t pieces;                        /* new materials and soft bodies: one per connected piece */
    size_t pinned, anchored;              /* cage vertices pinned / anchored */
    uint16_t mask;                        /* the soft body's collision mask */
    const plush_attach_piece *piece_info; /* per piece (owned by *out) */
    size_t auto_pinned;                   /* cage vertices pinned by auto_pins */
} plush_attach_result;

/* Automatic pins (options.auto_pins): each piece is pinned where it attaches, not where it is weighted (real
 * models weight a skirt, a cape or hair to the body bones they hang from, all of it). A bone is held when no
 * dynamic rigid body (mode 1 or 2) drives it or any of its ancestors. Each vertex of the covered materials
 * goes to its nearest cage vertex. A piece whose covered vertices give weight to held bones hangs from its
 * top: the cage vertices within pin_band of its height (+Y, MMD's up) below its highest are pinned, and each
 * follows the held bones of the covered vertices around it (strongest four, renormalised; with none, the
 * piece's held bones). Its other cage vertices that lie on the body (at rest inside a rigid body that follows a
 * bone carrying the covered vertices around them: the nearest bone up each carrying bone's chain with such a body)
 * with every covered vertex around them carried by held bones alone are pinned too, each following those bones
 * (plush_attach_piece.fitted): a garment is moved by the body it fits (a top, a stocking, hair lying on the
 * skull), and the rest of the piece hangs from it. When no vertex of that band lies within the cage's mean edge
 * of the rest of the model (the vertices the cage does not cover) while other vertices of the piece do, at most
 * half of them and lying more below its centre than beside it, the piece stands up from where it touches the model (a tail, a
 * tuft of hair): the band is measured from its end towards those vertices (plush_attach_piece.from_contact).
 * A piece no held bone reaches (a braid on physics bones) hangs from the bone its chain
 * hangs from (of the bones with a tenth of its weight, the one nearest the skeleton's root): the band is
 * measured from the piece's point nearest that bone, and its pins follow it. A piece whose pins are fewer
 * than three non-collinear vertices grows them over its edges (the highest neighbour first) until they are,
 * so it cannot spin about them. */

/* Builds *out from model and the cage. *out shares model's unchanged arrays: free it first, and do not change
 * model while out lives. Fails, with *out NULL, on: no cage or a cage without faces, a cage index out of range
 * or a non-finite position (PLUSH_E_ARGUMENT / PLUSH_E_RANGE); an unknown bone, material or rigid body name, a pin
 * bone that pins no cage vertex, an anchor body that holds no cage vertex, a pin vertex out of range
 * (PLUSH_E_ARGUMENT); an ambiguous material English name or number (PLUSH_E_AMBIGUOUS); a model that does not
 * validate; counts beyond what PMX indices can hold (vertices, face indices, materials, soft bodies past
 * 2^31 - 1: PLUSH_E_RANGE); with require_hold a piece with no pinned or anchored vertex (PLUSH_E_UNHELD). When
 * the new counts outgrow the model's index sizes the writer widens them: a warning in diag says so (the values
 * are unchanged, the bytes of sections holding such indices are not). */
plush_status plush_attach(const plush_pmx_model *model, const plush_attach_options *options, plush_pmx_model **out,
                          plush_attach_result *result, plush_diag *diag);

/* The default triangle count of plush_attach_make_cage. */
enum { PLUSH_ATTACH_CAGE_TRIANGLES = 300 };

/* The details a made cage leaves out: the surface's pieces under a twentieth of its largest piece's size
 * (strand ends, beads, tufts, a braid's tie). Those lying within one mean cage edge of the caged surface are
 * bound to the cage beside them (bound_triangles faces); the others' welded positions are listed, and their
 * vertices are meant to stay on bone skinning (plush_scene_bound_options.left_out; triangles faces). */
typedef struct plush_attach_details {
    float (*positions)[3];        /* in the arena */
    size_t count, triangles;
    size_t bound_triangles;
} plush_attach_details;

/* The cage `plush run --cage` makes for some materials (NULL or count 0: every material): their faces
 * welded (plush_scene_cage_weld) and simplified toward `triangles` (0: PLUSH_ATTACH_CAGE_TRIANGLES) by
 * plush_cage_simplify with plush proxy's defaults; a surface of several closed pieces (no border edge) is
 * wrapped into one closed piece first (options.wrap), open sheets are not (a wrap would fill the head they
 * surround), and their details are left out (*details, may be NULL). Errors: those of the weld and the
 * simplifier. */
plush_status plush_attach_make_cage(const plush_pmx_model *model, const char *const *materials, size_t material_count,
                                    size_t triangles, plush_arena *arena, plush_cage_mesh *out,
                                    plush_cage_result *result, plush_attach_details *details, plush_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
