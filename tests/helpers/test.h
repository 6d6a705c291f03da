/* SPDX-License-Identifier: MIT */
#pragma once
/* TEST(name) { ... } registers itself; RUN_TESTS() is the file's main. A
 * table test is the table and one loop, whose failing row is printed with
 * cmocka's error (systemd's src/shared/tests.h, on cmocka):
 *     FOREACH_ROW(i, cases) {
 *             test_row("%s", cases[i].in);
 *             assert_int_equal(f(cases[i].in), cases[i].want);
 *     } */
#include <stdarg.h> /* cmocka.h needs these four first */
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/macro.h"

#define TEST_MAX 64

/* A test program's registry and the row being checked: its only globals. */
static struct CMUnitTest test_list[TEST_MAX];
static size_t test_count;
static long test_row_index = -1;
static char test_row_text[512];

/* cmocka runs a test's teardown after its failure too (an assert's or a
 * crash's), and a test that returned has forgotten its row (TEST()). */
static inline int test_row_report(_unused_ void **state)
{
        if (test_row_index >= 0)
                print_error("[   ROW    ] --- %ld%s%s\n", test_row_index,
                            test_row_text[0] ? ": " : "", test_row_text);
        test_row_index = -1;
        return 0;
}

static inline void test_register(const char *name, CMUnitTestFunction fn)
{
        if (test_count < TEST_MAX)
                test_list[test_count] = (struct CMUnitTest){
                    .name = name, .test_func = fn, .teardown_func = test_row_report};
        test_count++; /* past TEST_MAX: tests_run() fails */
}

/* The constructors' priorities run them in source order. */
#define TEST(name)                                                                                 \
        static void test_##name(void);                                                             \
        static void test_run_##name(_unused_ void **state)                                         \
        {                                                                                          \
                test_##name();                                                                     \
                test_row_index = -1;                                                               \
        }                                                                                          \
        __attribute__((constructor(101 + __COUNTER__))) static void test_register_##name(void)     \
        {                                                                                          \
                test_register("test_" #name, test_run_##name);                                     \
        }                                                                                          \
        static void test_##name(void)

/* Each index i below n, or of the array table: the row is i (and
 * test_row()'s text) until the loop ends (a break keeps it). */
static inline bool test_rows_left(size_t i, size_t n)
{
        test_row_index = i < n ? (long)i : -1;
        test_row_text[0] = '\0';
        return i < n;
}
#define FOREACH_ROW_N(i, n) for (size_t i = 0; test_rows_left(i, (n)); i++)
#define FOREACH_ROW(i, table) FOREACH_ROW_N(i, ARRAY_SIZE(table))

/* What the row is, printf-style, printed only if it fails (cut at 511
 * bytes: only a message). */
#define test_row(...) (void)snprintf(test_row_text, sizeof(test_row_text), __VA_ARGS__)

/* 1 when a test failed: a failure count would read as a skip at 77. */
static inline int tests_run(void)
{
        if (test_count > TEST_MAX)
                return print_error("more than TEST_MAX tests\n"), 1;
        return _cmocka_run_group_tests("tests", test_list, test_count, NULL, NULL) ? 1 : 0;
}
#define RUN_TESTS()                                                                                \
        int main(void)                                                                             \
        {                                                                                          \
                return tests_run();                                                                \
        }
