/* plush VMD helpers: a bone key's curves in and out of its 64-byte interpolation block.
 * Extension-level API (as libgit2's sys/): what plush's own modules, its command-line tool and its
 * tests use beside the public plush/vmd.h.
 *
 *   uint8_t curves[4][4];
 *   plush_vmd_curves_read(key->interpolation, curves);   // curves[3] eases the rotation
 *   plush_vmd_curves_write(curves, baked->interpolation);
 */
#ifndef PLUSH_SYS_VMD_H
#define PLUSH_SYS_VMD_H

#include "plush/vmd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A bone key's four curves (0 X, 1 Y, 2 Z, 3 rotation; each x1, y1, x2, y2 on MMD's 0..127 grid) read
 * from their own rows of the 64-byte block, as MMD reads them. */
void plush_vmd_curves_read(const uint8_t block[64], uint8_t curves[4][4]);
/* The 64-byte block MMD writes for four curves: the 16 bytes x1 (X Y Z R), y1, x2, y2 as the first row,
 * each further row the one before shifted by one byte with zero fill, and the first row's bytes 2 and 3
 * zero (what current writers put there; a key that sets them otherwise is what plush_vmd_key_first_row
 * counts). plush_vmd_curves_read gives the curves back. */
void plush_vmd_curves_write(const uint8_t curves[4][4], uint8_t block[64]);
/* True when reading all four curves from the first row (x1 = b[c], y1 = b[4 + c], x2 = b[8 + c],
 * y2 = b[12 + c], as some older readers do) gives other curves than the rows: the sign of a key written
 * by current tools (its bytes 2 and 3 are not curve data) and of a motion those readers play wrong. */
bool plush_vmd_key_first_row_differs(const uint8_t block[64]);

#ifdef __cplusplus
}
#endif
#endif
