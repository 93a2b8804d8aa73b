/*
 * check_run.h — how every Check test program of tests/ ends: run the suite,
 * free the runner, and turn the failure count into the exit status CTest
 * reads.
 */
#ifndef TOPOML_TESTS_CHECK_RUN_H
#define TOPOML_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int topoml_check_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
