/* SPDX-License-Identifier: MIT */
/* The build's output through every parser of the live path
 * (parse/outparse.h): each kind of line reaches the parser that reads it
 * (RUN steps, the driver line, the build metrics, the stage and context),
 * whole or in chunks of any size, on either stream; malformed lines reach
 * none that would misread them; the cap on a line's length. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/bkrun.h"
#include "parse/buildmetrics.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "parse/outparse.h"
#include "util/dbuf.h"
#include "util/macro.h"

#include "helpers/test.h"

/* The parsers of one run, as the recorder holds them; runs collects each
 * RUN step's command, one a line. */
struct rig {
        struct buildmetrics *bm;
        struct logctx *lc;
        struct outparse *op;
        struct dbuf runs;
};

static void on_run(void *userdata, const char *cmd, size_t len)
{
        struct rig *r = userdata;

        assert_int_equal(dbuf_append(&r->runs, cmd, len), 0);
        assert_int_equal(dbuf_puts(&r->runs, "\n"), 0);
}

static void rig_new(struct rig *r, bool want_runs)
{
        struct buildmetrics_config mc = {.no_history = true};
        struct logctx_config lc = {.hold_s = 1.0};

        *r = (struct rig){.runs = DBUF_INIT};
        assert_int_equal(buildmetrics_new(&mc, &r->bm), 0);
        assert_int_equal(logctx_new(&lc, &r->lc), 0);
        assert_int_equal(outparse_new(&(struct outparse_config){.metrics = r->bm,
                                                                .logctx = r->lc,
                                                                .on_run = want_runs ? on_run : NULL,
                                                                .userdata = r},
                                      &r->op),
                         0);
}

static void rig_free(struct rig *r)
{
        outparse_free(r->op);
        logctx_free(r->lc);
        buildmetrics_free(r->bm);
        dbuf_release(&r->runs);
}

static const char *runs_of(const struct rig *r)
{
        return r->runs.p ? r->runs.p : "";
}

/* OUTPARSE_DRIVER_MAX bytes */
#define LONG_DRIVER "d123456789d123456789d123456789d123456789d123456789d123456789abc"
_Static_assert(sizeof(LONG_DRIVER) - 1 == OUTPARSE_DRIVER_MAX, "LONG_DRIVER");

static const struct {
        const char *name, *in;
        const char *runs;   /* every RUN step's command, one a line */
        const char *driver; /* outparse_driver() */
        unsigned long long lines;
        const char *stage, *context; /* logctx's */
        uint32_t steps;              /* BuildKit's distinct steps */
        uint64_t ninja_done, ninja_total;
} cases[] = {
    /* BuildKit plain: RUN steps to on_run, every line to the build
     * metrics and (not rawjson) to logctx */
    {"a RUN step", "#5 [builder 2/3] RUN make -j8\n", "make -j8\n", "", 1, "builder",
     "#5 [builder 2/3] RUN make -j8", 1, 0, 0},
    {"RUN options and the exec form",
     "#6 [2/3] RUN --mount=type=cache,target=/c [\"sh\", \"-c\", \"make  all\"]\n",
     "sh -c make all\n", "", 1, "",
     "#6 [2/3] RUN --mount=type=cache,target=/c [\"sh\", \"-c\", \"make  all\"]", 1, 0, 0},
    {"a step that is no RUN", "#7 [3/3] COPY . .\n", "", "", 1, "", "#7 [3/3] COPY . .", 1, 0, 0},
    {"a RUN step's header, DONE and CR LF",
     "#5 [b 1/2] RUN cc -c x.c\r\n#5 DONE 0.1s\r\n#6 [b 2/2] RUN ld x.o\r\n", "cc -c x.c\nld x.o\n",
     "", 3, "b", "#6 [b 2/2] RUN ld x.o", 2, 0, 0},
    /* the container's output mentions RUN: no step */
    {"RUN in a step's output", "#5 0.123 RUN make\n", "", "", 1, "", "#5 0.123 RUN make", 0, 0, 0},
    /* no "#N": ninja progress that says RUN, no step */
    {"no #N before the step", "[1/2] RUN make\n", "", "", 1, "", "[1/2] RUN make", 0, 1, 2},
    /* bkrun.h: "#N" is any number of digits, buildkit's "#N " 1 to 18 */
    {"19 digits of N", "#1234567890123456789 [1/2] RUN make\n", "make\n", "", 1, "",
     "#1234567890123456789 [1/2] RUN make", 0, 0, 0},
    {"an unclosed bracket", "#5 [1/2 RUN make\n", "", "", 1, "", "#5 [1/2 RUN make", 0, 0, 0},
    {"a # without digits", "#[1/2] RUN make\n", "", "", 1, "", "#[1/2] RUN make", 0, 0, 0},

    /* rawjson: its RUN vertexes to on_run; the line to the build metrics
     * only (its vertex events reach logctx through their ctx_line) */
    {"rawjson",
     "{\"vertexes\":[{\"digest\":\"sha256:aa\",\"name\":\"[1/2] FROM alpine\"},"
     "{\"digest\":\"sha256:bb\",\"name\":\"[2/2] RUN apk add \\\"gcc\\\"\"}]}\n",
     "apk add \"gcc\"\n", "", 1, "", "", 2, 0, 0},
    {"rawjson, a string that does not end",
     "{\"vertexes\":[{\"digest\":\"sha256:bb\",\"name\":\"[2/2] RUN make\n", "", "", 1, NULL, NULL,
     0, 0, 0},

    /* the driver: the first "#0 building with" line's */
    {"the driver", "#0 building with \"default\" instance using docker-container driver\n", "",
     "docker-container", 1, NULL, NULL, 0, 0, 0},
    {"the first driver only",
     "#0 building with \"a\" instance using remote driver\r\n"
     "#0 building with \"b\" instance using docker driver\n",
     "", "remote", 2, NULL, NULL, 0, 0, 0},
    {"a driver line not #0", "#1 building with \"a\" instance using remote driver\n", "", "", 1,
     NULL, NULL, 0, 0, 0},
    {"a driver line without its driver", "#0 building with \"a\" instance using remote\n", "", "",
     1, NULL, NULL, 0, 0, 0},
    {"a 63-byte driver", "#0 building with \"x\" instance using " LONG_DRIVER " driver\n", "",
     LONG_DRIVER, 1, NULL, NULL, 0, 0, 0},
    {"a 64-byte driver, cut", "#0 building with \"x\" instance using " LONG_DRIVER "d driver\n", "",
     LONG_DRIVER, 1, NULL, NULL, 0, 0, 0},
    {"a driver line, then a RUN step",
     "#0 building with \"x\" instance using docker driver\n#1 [1/1] RUN true\n", "true\n", "docker",
     2, "", "#1 [1/1] RUN true", 1, 0, 0},

    /* other builds' progress: the build metrics and logctx */
    {"ninja", "[3/10] Building C object a.o\n[4/10] Linking CXX executable b\n", "", "", 2, "",
     "[4/10] Linking CXX executable b", 0, 4, 10},
    {"ninja, its last line without a newline", "[1/2] cc a.c\n[2/2] cc b.c", "", "", 2, "",
     "[2/2] cc b.c", 0, 2, 2},
    {"noise", "checking for gcc... yes\n", "", "", 1, "", "checking for gcc... yes", 0, 0, 0},
    {"empty lines are lines", "\n\n\r\n", "", "", 3, "", "", 0, 0, 0},
    {"nothing", "", "", "", 0, "", "", 0, 0, 0},
};

/* Each case whole and in chunks of 1, 2, 3, 7 and 64 bytes, on stdout and
 * on stderr, and line by line (outparse_line): the same results. */
#define BY_LINE SIZE_MAX

static void feed(struct rig *r, const char *in, size_t step, int stream)
{
        size_t len = strlen(in);

        if (step == BY_LINE) {
                for (const char *p = in, *nl; *p; p = nl ? nl + 1 : in + len) {
                        nl = strchr(p, '\n');
                        outparse_line(r->op, p, nl ? (size_t)(nl - p) : strlen(p), 3.0);
                }
                return;
        }
        for (size_t off = 0; off < len; off += step ? step : len) {
                size_t n = MIN(step ? step : len, len - off);
                char *c = malloc(n);

                /* a chunk of its own, gone after the call, as a read
                 * buffer's is: no parser may keep a line in it */
                assert_non_null(c);
                memcpy(c, in + off, n);
                outparse_chunk(r->op, stream, c, n, 2.0);
                memset(c, 'Z', n);
                free(c);
        }
        outparse_eof(r->op, stream, 3.0);
}

TEST(cases)
{
        static const size_t steps[] = {0, 1, 2, 3, 7, 64, BY_LINE};

        FOREACH_ROW(i, cases) {
                for (size_t s = 0; s < 2 * ARRAY_SIZE(steps); s++) {
                        size_t step = steps[s / 2];
                        int stream = 1 + (int)(s % 2);
                        const struct targets *ts;
                        struct rig r;

                        test_row("%s, step %zu, stream %d", cases[i].name, step, stream);
                        rig_new(&r, true);
                        feed(&r, cases[i].in, step, stream);
                        assert_string_equal(runs_of(&r), cases[i].runs);
                        assert_string_equal(outparse_driver(r.op), cases[i].driver);
                        /* the builder with the first driver only */
                        if (strcmp(cases[i].name, "the first driver only") == 0)
                                assert_string_equal(outparse_builder(r.op), "a");
                        assert_int_equal(outparse_lines(r.op), cases[i].lines);
                        if (cases[i].stage)
                                assert_string_equal(logctx_stage(r.lc), cases[i].stage);
                        if (cases[i].context)
                                assert_string_equal(logctx_context(r.lc), cases[i].context);
                        buildmetrics_finish(r.bm);
                        ts = buildmetrics_model(r.bm);
                        assert_int_equal(ts->steps, cases[i].steps);
                        assert_int_equal(ts->ninja_done, cases[i].ninja_done);
                        assert_int_equal(ts->ninja_total, cases[i].ninja_total);
                        rig_free(&r);
                }
        }
}

static void chunk(struct rig *r, int stream, const char *s, double now)
{
        outparse_chunk(r->op, stream, s, strlen(s), now);
}

/* on_run NULL: RUN steps are not looked for, and the rest is as before. */
TEST(no_on_run)
{
        struct rig r;

        rig_new(&r, false);
        chunk(&r, 1, "#5 [b 1/1] RUN make\n", 1.0);
        assert_string_equal(runs_of(&r), "");
        assert_int_equal(outparse_lines(r.op), 1);
        buildmetrics_finish(r.bm);
        assert_int_equal(buildmetrics_model(r.bm)->steps, 1);
        assert_string_equal(logctx_stage(r.lc), "b");
        rig_free(&r);
}

/* Each stream is split on its own: a line of stdout cut by a chunk of
 * stderr is still one line, and EOF flushes only its own stream's. */
TEST(streams)
{
        struct rig r;

        rig_new(&r, true);
        chunk(&r, 1, "#5 [b 1/2] RU", 1.0);
        chunk(&r, 2, "warning: x\n[1/2] cc", 1.0);
        assert_int_equal(outparse_lines(r.op), 1);
        chunk(&r, 1, "N make\n#6 [b 2/2] RUN", 1.0);
        assert_string_equal(runs_of(&r), "make\n");
        assert_int_equal(outparse_lines(r.op), 2);
        outparse_eof(r.op, 2, 2.0);
        assert_int_equal(outparse_lines(r.op), 3);
        assert_int_equal(buildmetrics_model(r.bm)->ninja_done, 1);
        assert_string_equal(runs_of(&r), "make\n"); /* stdout's "#6 [b 2/2] RUN" waits */
        outparse_eof(r.op, 1, 2.0);
        assert_int_equal(outparse_lines(r.op), 4);
        /* "RUN" and nothing after it is no command */
        assert_string_equal(runs_of(&r), "make\n");
        outparse_eof(r.op, 1, 2.0); /* nothing left */
        assert_int_equal(outparse_lines(r.op), 4);
        rig_free(&r);
}

/* The lines are the parsers' at the time their chunk came: a step's first
 * line is the time of the chunk that completed it, EOF's for a last line
 * without a newline, outparse_line's own. */
TEST(now)
{
        struct rig r;
        const struct targets *ts;

        rig_new(&r, true);
        assert_true(outparse_now(r.op) == 0.0);
        chunk(&r, 1, "#1 [1/3] RUN a\n#2 [2/3] RU", 1.5);
        assert_true(outparse_now(r.op) == 1.5);
        chunk(&r, 1, "N b\n#3 [3/3] RUN c", 2.5);
        outparse_eof(r.op, 1, 4.0);
        assert_true(outparse_now(r.op) == 4.0);
        outparse_line(r.op, "#4 [internal] load", 18, 7.25);
        assert_true(outparse_now(r.op) == 7.25);
        buildmetrics_finish(r.bm);
        ts = buildmetrics_model(r.bm);
        assert_int_equal(ts->nstepv, 4);
        assert_true(ts->stepv[0].start_s == 1.5);
        assert_true(ts->stepv[1].start_s == 2.5);
        assert_true(ts->stepv[2].start_s == 4.0);
        assert_true(ts->stepv[3].start_s == 7.25);
        assert_string_equal(runs_of(&r), "a\nb\nc\n");
        rig_free(&r);
}

/* A line of LINEBUF_MAX bytes is whole; a longer one is cut there and its
 * rest dropped: one line either way, and the next line is parsed as
 * itself. A RUN step's command is cut at BKRUN_CMD_MAX bytes. */
TEST(long_lines)
{
        static const size_t lens[] = {LINEBUF_MAX - 1, LINEBUF_MAX, LINEBUF_MAX + 1,
                                      3 * LINEBUF_MAX};
        static const char next[] = "\n#6 [2/2] RUN make\n";
        static const char head[] = "#5 [1/2] RUN ";
        char want[BKRUN_CMD_MAX + sizeof("\nmake\n")];

        memset(want, 'x', BKRUN_CMD_MAX);
        memcpy(want + BKRUN_CMD_MAX, "\nmake\n", sizeof("\nmake\n"));
        FOREACH_ROW(i, lens) {
                static const size_t steps[] = {0, 4096, 999};
                size_t len = lens[i] + sizeof(next) - 1;
                char *buf = malloc(len + 1);

                assert_non_null(buf);
                memcpy(buf, head, sizeof(head) - 1);
                memset(buf + sizeof(head) - 1, 'x', lens[i] - (sizeof(head) - 1));
                memcpy(buf + lens[i], next, sizeof(next));
                for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
                        struct rig r;

                        test_row("a RUN line of %zu bytes, step %zu", lens[i], steps[s]);
                        rig_new(&r, true);
                        feed(&r, buf, steps[s], 1);
                        assert_int_equal(outparse_lines(r.op), 2);
                        assert_string_equal(runs_of(&r), want);
                        buildmetrics_finish(r.bm);
                        assert_int_equal(buildmetrics_model(r.bm)->steps, 2);
                        rig_free(&r);
                }
                free(buf);
        }
}

TEST(free_null)
{
        outparse_free(NULL);
}

RUN_TESTS()
