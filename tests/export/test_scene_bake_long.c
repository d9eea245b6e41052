/* The bake of a long motion (tests/support/bake_long.h), short here: 300 frames of the demo bear, the hook
 * swinging, dropping and settling, then again with other amplitudes. The baked PMX + VMD, read back and
 * posed by plush's own bone pipeline, lie within 0.1% of the bear's height (RMS over vertices) and 0.5%
 * (worst vertex) of plush's frames at every frame; the motion and the GLB fit MMD's key limit and 60 MB.
 * The full 7,200 frames and the time the fit takes are measured in make bench (tools/bench/bench_bake.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/bake_long.h"
#include "support/cli_run.h"

enum { FRAMES = 300 };

static void test_bake_long_within_tolerance(void **state)
{
    (void)state;
    assert_int_equal(cli_tmp_setup("bake_long"), 0);
    bake_long_result r;
    assert_true(bake_long_measure(FRAMES, cli_tmp_dir(), &r));
    print_message("%u frames: %zu bones, %zu keys of %zu, VMD %.2f MB, GLB %.2f MB; fit %.2f s, keys %.2f s; "
           "RMS %.4g (frame %u), worst %.4g (frame %u), height %.4g\n",
           r.frames, r.bones, r.keys, r.keys_recorded, r.vmd_bytes / 1e6, r.glb_bytes / 1e6, r.fit_seconds,
           r.keys_seconds, r.rms, r.rms_frame, r.worst, r.worst_frame, r.height);
    assert_true(r.bones < r.triangles);
    assert_true(r.keys <= 600000);
    assert_true(r.keys < r.keys_recorded / 20);
    assert_true(r.vmd_bytes > 0 && r.vmd_bytes <= 60000000);
    assert_true(r.glb_bytes > 0 && r.glb_bytes <= 60000000);
    assert_true(r.rms <= 0.001 * r.height);
    assert_true(r.worst <= 0.005 * r.height);
    assert_int_equal(cli_tmp_teardown(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bake_long_within_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
