/* What every Check test executable's main does: run the suite (forking per test, as Check does
 * by default) and exit non-zero when any test failed. */
#ifndef RASPCC_TESTS_CHECK_MAIN_H
#define RASPCC_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s) {
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
