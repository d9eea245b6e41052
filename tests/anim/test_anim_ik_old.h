/* test_anim_ik: which knee solves the IK solver before commit c872529 brought within 1e-3 of
 * the goal, one character per solve in test_shared_knees' order. Made by compiling test_anim_ik.c
 * against that commit's library and running it with PLUSH_IK_PRINT=1. */
#define OLD_0 "01010101"
#define OLD_1 "0101010101010101010101010101010101010101010101010101"
#define OLD_2 "00000000"
#define OLD_3 "01010101"
#define OLD_4 "0101010101010101010101010101010101010101010101010101"
#define OLD_5 "0101010101010101010101010101010101010101010101010101"
#define OLD_6 "00000000"
