/* support/term.h and the styles of support/diag.h: colour and progress only where asked, -q
 * leaving out warnings but never errors. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/diag.h"
#include "support/term.h"
#include "tests/check_main.h"

static char *buf;
static size_t len;

static FILE *mem(void) {
    buf = NULL;
    len = 0;
    return open_memstream(&buf, &len);
}

START_TEST(test_progress_bar) {
    FILE *f = mem();
    Progress p;
    progress_start(&p, f, true, "work");
    progress_update(&p, 0, 4);
    progress_update(&p, 1, 4);
    progress_update(&p, 1, 4); /* the same percentage: not redrawn */
    progress_update(&p, 9, 4); /* clipped to 100% */
    progress_end(&p);
    fclose(f);
    ck_assert_str_eq(buf, "\rwork [                                        ]   0%"
                          "\rwork [##########                              ]  25%"
                          "\rwork [########################################] 100%"
                          "\r\033[K");
    free(buf);
    /* off (a pipe, or -q): nothing at all */
    f = mem();
    progress_start(&p, f, false, "work");
    progress_update(&p, 1, 2);
    progress_end(&p);
    fclose(f);
    ck_assert_uint_eq(len, 0);
    free(buf);
}
END_TEST

START_TEST(test_ticker) {
    FILE *f = mem();
    Ticker t;
    ticker_start(&t, f, true, "compiling", 0.0);
    struct timespec pause = {0, 250000000L};
    nanosleep(&pause, NULL);
    ticker_stop(&t);
    fclose(f);
    ck_assert_msg(strncmp(buf, "\rcompiling 0.", 13) == 0, "%s", buf);
    ck_assert(len >= 4 && !strcmp(buf + len - 4, "\r\033[K"));
    free(buf);
    /* work shorter than the delay draws nothing; so does a ticker that is off */
    f = mem();
    ticker_start(&t, f, true, "compiling", 10.0);
    ticker_stop(&t);
    ticker_start(&t, f, false, "compiling", 0.0);
    nanosleep(&pause, NULL);
    ticker_stop(&t);
    fclose(f);
    ck_assert_uint_eq(len, 0);
    free(buf);
}
END_TEST

START_TEST(test_no_color_off_a_terminal) {
    FILE *f = mem();
    unsetenv("NO_COLOR");
    ck_assert(!term_use_color(f)); /* not a terminal */
    ck_assert(!term_is_tty(f));
    fclose(f);
    free(buf);
}
END_TEST

static void diags(DiagList *d, Arena *a, const SourceFile *src) {
    diag_init(d, a);
    diag_add(d, DIAG_WARNING, (SrcLoc){src, 1, 5}, "unused");
    diag_add(d, DIAG_NOTE, (SrcLoc){src, 1, 1}, "of the warning");
    diag_add(d, DIAG_ERROR, (SrcLoc){src, 1, 9}, "bad");
    diag_add(d, DIAG_NOTE, (SrcLoc){0}, "of the error");
}

START_TEST(test_diag_styles) {
    Arena a;
    arena_init(&a);
    SourceFile *src = source_from_string(&a, "p.rasp", "x = y + ;\n");
    DiagList d;
    diags(&d, &a, src);
    FILE *f = mem();
    diag_render_from(f, &d, 0, (DiagStyle){.quiet = true});
    fclose(f);
    ck_assert_str_eq(buf, "p.rasp:1:9: error: bad\n  x = y + ;\n          ^\n<unknown>: note: of the error\n");
    free(buf);
    f = mem();
    diag_render_from(f, &d, 2, (DiagStyle){.color = true});
    fclose(f);
    ck_assert_str_eq(buf, "\033[1mp.rasp:1:9:\033[m \033[1;31merror:\033[m bad\n  x = y + ;\n          \033[1;32m^\033[m\n"
                          "\033[1m<unknown>:\033[m \033[1;36mnote:\033[m of the error\n");
    free(buf);
    /* unstyled, as before: everything */
    f = mem();
    diag_render_all(f, &d);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "p.rasp:1:5: warning: unused\n"));
    ck_assert_ptr_nonnull(strstr(buf, "p.rasp:1:1: note: of the warning\n"));
    ck_assert_ptr_null(strchr(buf, '\033'));
    free(buf);
    arena_free(&a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("term");
    TCase *tc = tcase_create("term");
    tcase_add_test(tc, test_progress_bar);
    tcase_add_test(tc, test_ticker);
    tcase_add_test(tc, test_no_color_off_a_terminal);
    tcase_add_test(tc, test_diag_styles);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
