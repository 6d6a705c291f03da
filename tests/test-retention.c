/* SPDX-License-Identifier: MIT */
/* The retention policy (model/retention): which runs `prune` and the end
 * of `run` remove, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "model/retention.h"
#include "util/macro.h"

#define NOW 1000000.0
#define H 3600.0
#define MB (1024ULL * 1024)

/* Runs newest first: 'r' running (pinned), 'f' finished; ages in hours
 * since they ended, sizes in MiB. */
struct tcase {
        const char *name;
        struct retention_policy p;
        const char *kinds;
        double age_h[8];
        unsigned size_mb[8];
        const char *want; /* '1' removed, '0' kept */
};

static const struct tcase cases[] = {
    {"no limit keeps all", {0}, "ffff", {1, 2, 3, 4}, {1, 1, 1, 1}, "0000"},
    {"keep 2 of 4", {.keep = 2}, "ffff", {1, 2, 3, 4}, {1, 1, 1, 1}, "0011"},
    {"keep 2 of 2", {.keep = 2}, "ff", {1, 2}, {1, 1}, "00"},
    {"keep 1 of 1", {.keep = 1}, "f", {1}, {1}, "0"},
    {"keep 2, a running run in the middle counts and stays",
     {.keep = 2},
     "frff",
     {1, 2, 3, 4},
     {1, 1, 1, 1},
     "0011"},
    {"keep 1, the newest running: it stays, the finished go",
     {.keep = 1},
     "rff",
     {0, 2, 3},
     {1, 1, 1},
     "011"},
    {"keep 1, running old ones never go", {.keep = 1}, "frr", {1, 50, 60}, {1, 1, 1}, "000"},
    {"older than 24h", {.older_than_s = 24 * H}, "ffff", {1, 23, 25, 100}, {1, 1, 1, 1}, "0011"},
    {"older than 24h, a running one of 100h stays",
     {.older_than_s = 24 * H},
     "frf",
     {1, 100, 100},
     {1, 1, 1},
     "001"},
    {"max 10 MiB: the oldest go first",
     {.max_bytes = 10 * MB},
     "ffff",
     {1, 2, 3, 4},
     {4, 4, 3, 1},
     "0011"},
    {"max 10 MiB, 10 in all: none go",
     {.max_bytes = 10 * MB},
     "ffff",
     {1, 2, 3, 4},
     {4, 4, 1, 1},
     "0000"},
    {"max 10 MiB exactly fills", {.max_bytes = 10 * MB}, "fff", {1, 2, 3}, {4, 6, 1}, "001"},
    {"max 10 MiB, one run bigger than the limit goes with the older",
     {.max_bytes = 10 * MB},
     "fff",
     {1, 2, 3},
     {2, 20, 1},
     "011"},
    {"max 10 MiB, a big running run counts: the finished behind it go",
     {.max_bytes = 10 * MB},
     "frf",
     {1, 2, 3},
     {1, 20, 1},
     "001"},
    {"keep 3 and max 10 MiB: the stricter wins",
     {.keep = 3, .max_bytes = 10 * MB},
     "fffff",
     {1, 2, 3, 4, 5},
     {6, 6, 1, 1, 1},
     "01111"},
    {"keep 3 and older than 24h",
     {.keep = 3, .older_than_s = 24 * H},
     "fffff",
     {1, 30, 2, 3, 4},
     {1, 1, 1, 1, 1},
     "01001"},
    {"all three, running in the middle",
     {.keep = 4, .older_than_s = 48 * H, .max_bytes = 100 * MB},
     "ffrfff",
     {1, 2, 3, 4, 50, 5},
     {10, 10, 10, 10, 10, 10},
     "000011"},
};

static void test_cases(void **state)
{
        (void)state;
        for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
                const struct tcase *t = &cases[c];
                size_t n = strlen(t->kinds), marked, want_n = 0;
                struct retention_run runs[8];
                bool go[8];

                for (size_t i = 0; i < n; i++) {
                        runs[i] = (struct retention_run){
                            .end_epoch = t->kinds[i] == 'r' ? NAN : NOW - t->age_h[i] * H,
                            .start_epoch = NOW - t->age_h[i] * H - 60,
                            .bytes = t->size_mb[i] * MB,
                            .pinned = t->kinds[i] == 'r'};
                        want_n += t->want[i] == '1';
                }
                marked = retention_decide(&t->p, runs, n, NOW, go);
                for (size_t i = 0; i < n; i++)
                        if (go[i] != (t->want[i] == '1'))
                                fail_msg("%s: run %zu %s", t->name, i, go[i] ? "removed" : "kept");
                if (marked != want_n)
                        fail_msg("%s: %zu marked, not %zu", t->name, marked, want_n);
        }
}

static void test_any(void **state)
{
        (void)state;
        assert_false(retention_policy_any(&(struct retention_policy){0}));
        assert_true(retention_policy_any(&(struct retention_policy){.keep = 1}));
        assert_true(retention_policy_any(&(struct retention_policy){.older_than_s = 1}));
        assert_true(retention_policy_any(&(struct retention_policy){.max_bytes = 1}));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_any),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
