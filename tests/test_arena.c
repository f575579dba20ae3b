/* support/arena.h: zeroed, aligned storage that never overlaps; blocks that grow; a reset that
 * keeps one block and hands out zeroed storage again. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "support/arena.h"
#include "tests/check_main.h"

/* Fills `n` allocations of growing sizes with a byte each, then checks each still holds it (no
 * two overlap) and that each started zeroed and max-aligned. */
static void fill_and_check(Arena *a, size_t n) {
    unsigned char *p[64];
    size_t size[64];
    for (size_t i = 0; i < n; i++) {
        size[i] = 1 + i * i * 300; /* up to 1.2 MB: several blocks, one larger than the next */
        p[i] = arena_alloc(a, size[i]);
        ck_assert_uint_eq((uintptr_t)p[i] % _Alignof(max_align_t), 0);
        unsigned char any = 0;
        for (size_t j = 0; j < size[i]; j++) any |= p[i][j];
        ck_assert_uint_eq(any, 0);
        memset(p[i], (int)(i + 1), size[i]);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < size[i]; j += 1 + size[i] / 64) ck_assert_uint_eq(p[i][j], (unsigned char)(i + 1));
}

START_TEST(test_alloc_and_reset) {
    Arena a;
    arena_init(&a);
    fill_and_check(&a, 64);
    size_t before = a.bytes_in_use;
    ck_assert_uint_gt(before, 0);
    arena_reset(&a); /* storage handed out again must be zeroed, though the block was written */
    ck_assert_uint_eq(a.bytes_in_use, 0);
    fill_and_check(&a, 64);
    ck_assert_uint_eq(a.bytes_in_use, before);
    arena_reset(&a);
    arena_reset(&a); /* twice, and on an empty arena */
    arena_free(&a);
    arena_reset(&a);
    char *s = arena_printf(&a, "%s-%d", "x", 42);
    ck_assert_str_eq(s, "x-42");
    arena_free(&a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, test_alloc_and_reset);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
