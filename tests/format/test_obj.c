/* OBJ and binary PLY writers: exact text and bytes for a small mesh, float round trips, bad meshes
 * refused without touching the buffer or the file system. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/obj.h"
#include "plush/sys/core.h"
#include "support/cli_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const float POS[4][3] = {{0, 0, 0}, {1.5f, -2, 0.25f}, {0.1f, 1e-7f, -3e8f}, {1, 1, 1}};
static const float NRM[4][3] = {{0, 1, 0}, {0, 0, -1}, {1, 0, 0}, {0.6f, 0.8f, 0}};
static const uint32_t IDX[6] = {0, 1, 2, 2, 3, 0};

static plush_obj_mesh mesh(bool normals)
{
    return (plush_obj_mesh){.vertex_count = 4, .positions = POS, .normals = normals ? NRM : NULL,
                            .index_count = 6, .indices = IDX, .comment = "made by\ntest"};
}

static void test_obj_text(void **state)
{
    (void)state;
    plush_diag diag = {0};
    plush_buf out = {0};
    plush_obj_mesh m = mesh(false);
    assert_int_equal(plush_obj_write(&m, &out, &diag), PLUSH_OK);
    const char want[] = "# made by\n"
                        "v 0 0 0\nv 1.5 -2 0.25\nv 0.100000001 1.00000001e-07 -300000000\nv 1 1 1\n"
                        "f 1 2 3\nf 3 4 1\n";
    assert_int_equal(out.size, strlen(want));
    assert_memory_equal(out.data, want, out.size);
    plush_buf_free(&out);

    m = mesh(true);
    m.comment = NULL;
    assert_int_equal(plush_obj_write(&m, &out, &diag), PLUSH_OK);
    const char want_n[] = "v 0 0 0\nv 1.5 -2 0.25\nv 0.100000001 1.00000001e-07 -300000000\nv 1 1 1\n"
                          "vn 0 1 0\nvn 0 0 -1\nvn 1 0 0\nvn 0.600000024 0.800000012 0\n"
                          "f 1//1 2//2 3//3\nf 3//3 4//4 1//1\n";
    assert_int_equal(out.size, strlen(want_n));
    assert_memory_equal(out.data, want_n, out.size);
    /* Nine digits read back as the same float. */
    assert_true(strtof("0.100000001", NULL) == POS[2][0]);
    assert_true(strtof("1.00000001e-07", NULL) == POS[2][1]);
    plush_buf_free(&out);
}

static uint32_t get_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float get_f32le(const uint8_t *p)
{
    uint32_t x = get_u32le(p);
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static void test_ply_bytes(void **state)
{
    (void)state;
    for (int with_normals = 0; with_normals < 2; with_normals++) {
        plush_diag diag = {0};
        plush_buf out = {0};
        plush_obj_mesh m = mesh(with_normals);
        assert_int_equal(plush_ply_write(&m, &out, &diag), PLUSH_OK);
        const char *head = with_normals
                               ? "ply\nformat binary_little_endian 1.0\ncomment made by\nelement vertex 4\n"
                                 "property float x\nproperty float y\nproperty float z\n"
                                 "property float nx\nproperty float ny\nproperty float nz\n"
                                 "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
                               : "ply\nformat binary_little_endian 1.0\ncomment made by\nelement vertex 4\n"
                                 "property float x\nproperty float y\nproperty float z\n"
                                 "element face 2\nproperty list uchar int vertex_indices\nend_header\n";
        size_t hn = strlen(head), stride = with_normals ? 24 : 12;
        assert_int_equal(out.size, hn + 4 * stride + 2 * 13);
        assert_memory_equal(out.data, head, hn);
        const uint8_t *p = out.data + hn;
        for (int v = 0; v < 4; v++, p += stride)
            for (int k = 0; k < 3; k++) {
                assert_true(get_f32le(p + 4 * k) == POS[v][k]);
                if (with_normals)
                    assert_true(get_f32le(p + 12 + 4 * k) == NRM[v][k]);
            }
        for (int f = 0; f < 2; f++, p += 13) {
            assert_int_equal(p[0], 3);
            for (int k = 0; k < 3; k++)
                assert_int_equal(get_u32le(p + 1 + 4 * k), IDX[3 * f + k]);
        }
        plush_buf_free(&out);
    }
}

static void expect_refused(const plush_obj_mesh *m, plush_status want)
{
    plush_buf out = {0};
    assert_true(plush_buf_append(&out, "keep", 4));
    plush_diag diag = {0};
    assert_int_equal(plush_obj_write(m, &out, &diag), want);
    assert_int_equal(diag.status, want);
    assert_int_equal(out.size, 4);
    diag = (plush_diag){0};
    assert_int_equal(plush_ply_write(m, &out, &diag), want);
    assert_int_equal(out.size, 4);
    plush_buf_free(&out);
}

static void test_bad_meshes(void **state)
{
    (void)state;
    plush_obj_mesh m = mesh(true);
    m.index_count = 5;
    expect_refused(&m, PLUSH_E_ARGUMENT);
    uint32_t bad[3] = {0, 4, 1};
    m = mesh(true);
    m.indices = bad;
    m.index_count = 3;
    expect_refused(&m, PLUSH_E_RANGE);
    float nan_pos[4][3];
    memcpy(nan_pos, POS, sizeof nan_pos);
    nan_pos[3][1] = NAN;
    m = mesh(false);
    m.positions = (const float(*)[3])nan_pos;
    expect_refused(&m, PLUSH_E_RANGE);
    float inf_nrm[4][3];
    memcpy(inf_nrm, NRM, sizeof inf_nrm);
    inf_nrm[0][2] = -INFINITY;
    m = mesh(true);
    m.normals = (const float(*)[3])inf_nrm;
    expect_refused(&m, PLUSH_E_RANGE);
    m = mesh(true);
    m.positions = NULL;
    expect_refused(&m, PLUSH_E_ARGUMENT);

    /* An empty mesh is a valid (empty) file. */
    plush_obj_mesh empty = {0};
    plush_buf out = {0};
    plush_diag diag = {0};
    assert_int_equal(plush_obj_write(&empty, &out, &diag), PLUSH_OK);
    assert_int_equal(out.size, 0);
    assert_int_equal(plush_ply_write(&empty, &out, &diag), PLUSH_OK);
    assert_true(out.size > 0);
    plush_buf_free(&out);
}

static void test_files(void **state)
{
    (void)state;
    assert_int_equal(cli_tmp_setup("plush_obj"), 0);
    char obj[512], ply[512];
    cli_tmp_path(obj, sizeof obj, "m.obj");
    cli_tmp_path(ply, sizeof ply, "m.ply");
    plush_obj_mesh m = mesh(true);
    plush_diag diag = {0};
    assert_int_equal(plush_obj_write_file(&m, obj, &diag), PLUSH_OK);
    diag = (plush_diag){0};
    assert_int_equal(plush_ply_write_file(&m, ply, &diag), PLUSH_OK);
    size_t n = 0;
    char *text = cli_read_all(obj, &n);
    assert_non_null(text);
    assert_non_null(strstr(text, "f 3//3 4//4 1//1\n"));
    free(text);
    char *bin = cli_read_all(ply, &n);
    assert_non_null(bin);
    assert_int_equal(memcmp(bin, "ply\n", 4), 0);
    free(bin);

    /* A refused mesh leaves the earlier file as it was and creates no new one. */
    uint32_t bad[3] = {0, 9, 1};
    m.indices = bad;
    m.index_count = 3;
    diag = (plush_diag){0};
    assert_int_equal(plush_obj_write_file(&m, obj, &diag), PLUSH_E_RANGE);
    text = cli_read_all(obj, &n);
    assert_non_null(strstr(text, "f 3//3 4//4 1//1\n"));
    free(text);
    char fresh[512];
    cli_tmp_path(fresh, sizeof fresh, "new.ply");
    diag = (plush_diag){0};
    assert_int_equal(plush_ply_write_file(&m, fresh, &diag), PLUSH_E_RANGE);
    assert_false(cli_exists(fresh));
    /* A directory that does not exist is an I/O error. */
    char nowhere[600];
    snprintf(nowhere, sizeof nowhere, "%s/no/such/dir/m.obj", cli_tmp_dir());
    m = mesh(false);
    diag = (plush_diag){0};
    assert_int_equal(plush_obj_write_file(&m, nowhere, &diag), PLUSH_E_IO);
    assert_int_equal(cli_tmp_teardown(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obj_text),
        cmocka_unit_test(test_ply_bytes),
        cmocka_unit_test(test_bad_meshes),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
