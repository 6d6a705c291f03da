/* SPDX-License-Identifier: MIT */
/* The rule of a run's job (model/jobname.h): the option, BUILDTEL_JOB, the
 * CI's variables, the derived name; and its file-name form. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/jobname.h"
#include "util/macro.h"

/* An environment: NULL-terminated "NAME=value" strings. */
struct env {
        const char *const *v;
};

static const char *lookup(void *userdata, const char *name)
{
        const char *const *env = ((struct env *)userdata)->v;
        size_t n = strlen(name);

        for (; env && *env; env++)
                if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
                        return *env + n + 1;
        return NULL;
}

static char *job_of(const char *option, const char *const *env, char *const *argv, const char *cwd)
{
        struct env e = {env};
        char *j = NULL;

        assert_int_equal(jobname_get(option, argv, cwd, lookup, &e, &j), 0);
        assert_non_null(j);
        return j;
}

static char make0[] = "/usr/bin/make", j8[] = "-j8", j4[] = "-j4", odd0[] = "./bu ild\n$(x)";
static char *make_argv[] = {make0, j8, NULL};

static void test_rule(void **state)
{
        static const struct {
                const char *option;
                const char *env[6];
                const char *want;
        } cases[] = {
            {"nightly", {"BUILDTEL_JOB=env", "GITHUB_WORKFLOW=ci", "GITHUB_JOB=build"}, "nightly"},
            {NULL, {"BUILDTEL_JOB=env", "GITHUB_WORKFLOW=ci", "GITHUB_JOB=build"}, "env"},
            {"", {"BUILDTEL_JOB=env"}, "env"}, /* an empty option is none */
            {NULL, {"GITHUB_WORKFLOW=CI build", "GITHUB_JOB=linux"}, "CI build/linux"},
            {NULL, {"BUILDTEL_JOB=", "GITHUB_WORKFLOW=ci", "GITHUB_JOB=build"}, "ci/build"},
            {NULL,
             {"GITHUB_WORKFLOW=ci", "GITHUB_JOB=build", "CI_PROJECT_PATH=g/p", "CI_JOB_NAME=j"},
             "ci/build"},
            {NULL,
             {"CI_PROJECT_PATH=group/proj", "CI_JOB_NAME=build: [x86]"},
             "group/proj/build: [x86]"},
            /* half of a CI's pair is none */
            {NULL,
             {"GITHUB_WORKFLOW=ci", "CI_PROJECT_PATH=group/proj", "CI_JOB_NAME=b"},
             "group/proj/b"},
            {"a\tb\nc\x7f", {NULL}, "a_b_c_"},      /* controls */
            {"caf\xc3\xa9", {NULL}, "caf\xc3\xa9"}, /* UTF-8 kept */
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *j = job_of(cases[i].option, cases[i].env, make_argv, "/src/proj");

                print_message("case %zu: %s\n", i, j);
                assert_string_equal(j, cases[i].want);
                free(j);
        }
}

static void test_cut(void **state)
{
        char big[400], *j;
        const char *env[] = {NULL};

        (void)state;
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        j = job_of(big, env, make_argv, "/");
        assert_int_equal(strlen(j), JOBNAME_MAX);
        free(j);
        /* never inside a UTF-8 sequence: 127 x then a 2-byte sequence */
        memset(big, 'x', 127);
        memcpy(big + 127, "\xc3\xa9", 3);
        j = job_of(big, env, make_argv, "/");
        assert_int_equal(strlen(j), 127);
        free(j);
}

static void test_derived(void **state)
{
        const char *env[] = {"HOME=/root", NULL};
        char *argv2[] = {make0, j4, NULL};
        char *odd[] = {odd0, NULL};
        char *a, *b, *c, *d, *e, *f;

        (void)state;
        a = job_of(NULL, env, make_argv, "/src/proj");
        b = job_of(NULL, env, make_argv, "/src/proj");
        c = job_of(NULL, env, argv2, "/src/proj");
        d = job_of(NULL, env, make_argv, "/other/proj");
        e = job_of(NULL, env, odd, "/src/my proj/");
        f = job_of(NULL, env, NULL, NULL);
        print_message("%s %s %s %s %s\n", a, c, d, e, f);
        assert_string_equal(a, b); /* stable */
        assert_int_equal(strncmp(a, "proj:make-", 10), 0);
        assert_int_equal(strlen(a), 10 + 8);
        assert_string_not_equal(a, c); /* another command */
        assert_int_equal(strncmp(c, "proj:make-", 10), 0);
        assert_string_not_equal(a, d); /* another directory of the same name */
        assert_int_equal(strncmp(e, "my_proj:bu_ild___x_-", 20), 0);
        assert_int_equal(strncmp(f, "_:_-", 4), 0);
        /* fixed: a job's history must not split when buildtel is rebuilt */
        assert_string_equal(a, "proj:make-61da4bc2");
        free(a);
        free(b);
        free(c);
        free(d);
        free(e);
        free(f);
}

static void test_file_part(void **state)
{
        char buf[JOBNAME_FILE_SIZE], big[200];
        char a[JOBNAME_FILE_SIZE];
        int n;

        (void)state;
        assert_int_equal(jobname_file_part("nightly-x86_64.v2", buf, sizeof(buf)), 17);
        assert_string_equal(buf, "nightly-x86_64.v2");
        n = jobname_file_part("ci/build", buf, sizeof(buf));
        assert_int_equal(n, 8 + 9);
        assert_int_equal(strncmp(buf, "ci_build-", 9), 0);
        assert_int_equal(jobname_file_part("ci_build-", a, sizeof(a)), 9);
        n = jobname_file_part("ci_build", a, sizeof(a));
        assert_string_not_equal(a, buf); /* "ci/build" and "ci_build" differ */
        assert_true(jobname_file_part(".hidden", buf, sizeof(buf)) > 0);
        assert_int_equal(buf[0], '_');
        assert_true(jobname_file_part("../../etc/x", buf, sizeof(buf)) > 0);
        assert_null(strchr(buf, '/'));
        assert_int_equal(strncmp(buf, "_._.._etc_x-", 12), 0);
        memset(big, 'y', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        n = jobname_file_part(big, buf, sizeof(buf));
        assert_int_equal(n, 64 + 9);
        assert_int_equal(jobname_file_part("", buf, sizeof(buf)), -EINVAL);
        assert_int_equal(jobname_file_part(NULL, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(jobname_file_part("x", buf, 10), -ENOBUFS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rule),
            cmocka_unit_test(test_cut),
            cmocka_unit_test(test_derived),
            cmocka_unit_test(test_file_part),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
