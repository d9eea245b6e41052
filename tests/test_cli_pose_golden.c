/* plush pose must stay byte for byte what it was before the frame pipeline moved into the scene (issue 12):
 * bones CSV and PLY mesh on the shared models and motions, with and without physics, fractional frames
 * included, and the demo bear's soft bodies. The hashes (FNV-1a 64 of each output file) were taken from
 * the plush pose that still ran its own pipeline (commit c872529). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/cli_run.h"
#include "support/shared_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct golden {
    const char *model, *motion, *frame;
    int physics;
    uint64_t bones, mesh;
} golden;

/* "@demo" and "@shake" are the demo bear files make builds in proxies/. */
static const golden cases[] = {
    {"alicia/Alicia_solid.pmx", "", "0", 0, 0xa43687f252ccb476ull, 0x757bb818053cf067ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", "0", 0, 0xfe6ced19701b00f2ull, 0xd2cae33fbffd5496ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", "12.5", 0, 0xfe6ced19701b00f2ull, 0xbd0a0afa2cbbdaf2ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", "40", 0, 0xfe6ced19701b00f2ull, 0xd24d83f1fd5ad354ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション3.vmd", "20", 0, 0x2b8dc9c2da6fb79cull, 0x7951c851bf4cfeefull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション4.vmd", "33.25", 0, 0xcb34c3e851872947ull, 0xd8786f61b0e3d274ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", "0", 1, 0xfe6ced19701b00f2ull, 0xc435e5921cca3d09ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", "10", 1, 0x40a5d20d8d6c2b64ull, 0xd8efe97fc1ef1582ull},
    {"alicia/Alicia_solid.pmx", "mmd_base/サンプルモーション_0046.vmd", "7.5", 1, 0xfd9ff5e6cb38f155ull, 0x0c234b903f031969ull},
    {"mmd_base/曲げ柱tex.pmx", "mmd_base/曲げ柱tex01.vmd", "15", 0, 0xf6b5ed19160ff6f2ull, 0x8e32f1965b2e1e3dull},
    {"mmd_base/曲げ柱tex.pmx", "mmd_base/曲げ柱tex02.vmd", "7.5", 0, 0x93285640b86bf779ull, 0xb44e13e41b6499ffull},
    {"mmd_base/平面3つ.pmx", "mmd_base/平面3つ02.vmd", "5", 0, 0xee778297129cb528ull, 0xe56a9fcb1788efe8ull},
    {"mmd_base/平面3つ.pmx", "mmd_base/平面3つ03.vmd", "2.5", 1, 0x292aeb02b265eb99ull, 0x882fefdd24e2174dull},
    {"unity-mmd-loader/mixed-deform-types.pmx", "", "0", 0, 0x19736210653285f7ull, 0xbf949985748b46e3ull},
    {"blender2pmxem/sample_finish.pmx", "mmd_base/サンプルモーション_0046.vmd", "25", 0, 0x5017988c2a4c3b07ull, 0xc366bdcfb5a83881ull},
    {"blender2pmxem/sample_finish.pmx", "mmd_base/サンプルモーション_0046.vmd", "6", 1, 0xa8759a89e39a6d43ull, 0xc7268747b82f8751ull},
    {"pmx_tailor/01_基本の使い方.pmx", "mmd_base/サンプルモーション3.vmd", "30", 0, 0x78241cf609477ccaull, 0xf1380e19db375dcaull},
    {"pmx_tailor/01_基本の使い方.pmx", "mmd_base/サンプルモーション3.vmd", "5", 1, 0x78241cf609477ccaull, 0x5afcac6ef0da8a41ull},
    {"@demo", "@shake", "0", 1, 0x6d4d3a78d0904f7eull, 0xe8ae8743b00cc246ull},
    {"@demo", "@shake", "10", 1, 0x6d4d3a78d0904f7eull, 0xd60817b45b7aa933ull},
    {"@demo", "@shake", "20.5", 1, 0x381733c74ab6a5b2ull, 0x2526923621fa8201ull},
};

static uint64_t fnv1a(const char *path)
{
    size_t n = 0;
    char *data = cli_read_all(path, &n);
    assert_non_null(data);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)data[i]) * 0x100000001b3ull;
    free(data);
    return h;
}

static const char *input_path(char *buf, size_t size, const char *name)
{
    if (strcmp(name, "@demo") == 0)
        return "proxies/plush_bear.pmx";
    if (strcmp(name, "@shake") == 0)
        return "proxies/plush_bear_shake.vmd";
    snprintf(buf, size, "%s/%s", SHARED_MMD, name);
    return buf;
}

static void test_pose_unchanged(void **state)
{
    (void)state;
    char bones[512], mesh[512], model[512], motion[512];
    cli_tmp_path(bones, sizeof bones, "bones.csv");
    cli_tmp_path(mesh, sizeof mesh, "mesh.ply");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const golden *g = &cases[i];
        const char *args[12] = {"pose", input_path(model, sizeof model, g->model), "--frame", g->frame, "--bones",
                                bones, "--mesh", mesh};
        size_t n = 8;
        if (*g->motion)
            args[n++] = "--motion", args[n++] = input_path(motion, sizeof motion, g->motion);
        if (g->physics)
            args[n++] = "--physics";
        args[n] = NULL;
        cli_result r;
        cli_run_list(&r, args);
        if (r.code != 0)
            fprintf(stderr, "case %zu (%s %s frame %s): %s", i, g->model, g->motion, g->frame, r.err);
        cli_expect_code(&r, 0);
        cli_result_free(&r);
        uint64_t hb = fnv1a(bones), hm = fnv1a(mesh);
        if (hb != g->bones || hm != g->mesh)
            fprintf(stderr, "case %zu (%s %s frame %s physics %d): bones %016llx mesh %016llx\n", i, g->model,
                    g->motion, g->frame, g->physics, (unsigned long long)hb, (unsigned long long)hm);
        assert_true(hb == g->bones);
        assert_true(hm == g->mesh);
    }
}

static int setup(void **state)
{
    (void)state;
    return cli_tmp_setup("plush_pose_golden");
}

static int teardown(void **state)
{
    (void)state;
    return cli_tmp_teardown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pose_unchanged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
