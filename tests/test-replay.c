/* SPDX-License-Identifier: MIT */
/* A recorded run through the pipeline (pipeline/replay.h), on real files:
 * a CSV written by the run files' own writer (runfiles/samplecsv, with its
 * run.json), opened by path and by run id in its log directory; two real
 * `buildtel run`s of `sh -c 'echo hi'` (the binary meson names in
 * $BUILDTEL) into a temp --log-dir and --db, opened by run id, by the
 * start of one, as the latest, and by their CSV path; each through a probe
 * sink, the model handed back checked (samples, peak, run id). And the one
 * set of words for what is not there: a run id, a CSV, a CSV that is not
 * one, a run record missing, an id that names several runs. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"
#include "pipeline/replay.h"
#include "runfiles/runjson.h"
#include "runfiles/samplecsv.h"
#include "sinks/sink.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#include "helpers/test.h"

#define T0 1767225600.0

extern char **environ;

static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

/* ---- the temp directory ---- */

static char dir[64];

static int rm_one(const char *path, _unused_ const struct stat *st, _unused_ int flag,
                  _unused_ struct FTW *ftw)
{
        return remove(path) < 0 ? -1 : 0;
}

/* dir/name in one of four static buffers. */
static const char *at(int slot, const char *name)
{
        static char paths[4][200];

        snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", dir, name);
        return paths[slot];
}

static void put_file(const char *path, const char *buf, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, buf, len), 0);
        close(fd);
}

/* ---- a probe sink: what a replay hands its sinks ---- */

struct probe {
        int open_result; /* what open returns */
        int opened, finished, closed;
        size_t nsamples;
        double mem_peak_bytes;       /* the largest sample's mem_used_bytes */
        const struct run_model *fin; /* the model at finish */
        char fin_run_id[64];
};

static int probe_open(const struct sink_ctx *ctx, void **ret)
{
        struct probe *p = ctx->userdata;

        p->opened++;
        if (p->open_result < 0)
                return p->open_result;
        assert_null(ctx->log_dir); /* a replay writes no files of the run */
        *ret = p;
        return 0;
}

static void probe_sample(void *state, const struct sample *s, _unused_ const struct run_model *m)
{
        struct probe *p = state;

        p->nsamples++;
        if (isfinite(s->mem_used_bytes) && !(s->mem_used_bytes <= p->mem_peak_bytes))
                p->mem_peak_bytes = s->mem_used_bytes;
}

static int probe_finish(void *state, const struct run_model *m)
{
        struct probe *p = state;

        p->finished++;
        p->fin = m;
        snprintf(p->fin_run_id, sizeof(p->fin_run_id), "%s",
                 m->run && m->run->run_id ? m->run->run_id : "(none)");
        return 0;
}

static void probe_close(void *state)
{
        struct probe *p = state;

        p->closed++;
}

static const struct sink_ops sink_probe = {
    .name = "probe",
    .open = probe_open,
    .sample = probe_sample,
    .finish = probe_finish,
    .close = probe_close,
};
static const struct sink_ops *const probe_list[] = {&sink_probe, NULL};

/* ---- a CSV written by the run files' writer ---- */

#define CSV_ROWS 5
static const double csv_mem_mib[CSV_ROWS] = {100, 350, 2048, 1200, 7}; /* peak: row 2 */

/* dir/resources-<id>.csv and, with_record, its run.json. */
static void write_csv(const char *id, bool with_record)
{
        char *argv[] = {M("make"), M("-j2"), NULL};
        struct run_info ri = {.run_id = M(id),
                              .kind = M("run"),
                              .argv = argv,
                              .host = M("h"),
                              .start_epoch = T0,
                              .end_epoch = T0 + CSV_ROWS,
                              .finished = true,
                              .exit_code = 3,
                              .ncpu = 2,
                              .interval = 1};
        struct dbuf b = DBUF_INIT;
        char name[128];

        assert_int_equal(samplecsv_header(&b), 0);
        for (size_t i = 0; i < CSV_ROWS; i++) {
                struct sample s;

                sample_clear(&s);
                s.epoch = T0 + (double)i;
                s.elapsed_s = (double)i;
                s.mem_used_bytes = csv_mem_mib[i] * SAMPLE_MIB;
                s.mem_avail_bytes = 8192.0 * SAMPLE_MIB - s.mem_used_bytes;
                s.disk_avail_bytes = 100.0 * 1024 * SAMPLE_MIB;
                assert_int_equal(samplecsv_format(&s, &b), 0);
        }
        snprintf(name, sizeof(name), "resources-%s.csv", id);
        put_file(at(0, name), b.p, b.len);
        dbuf_reset(&b);
        if (with_record) {
                assert_int_equal(runjson_format(&ri, &b), 0);
                snprintf(name, sizeof(name), "resources-%s.run.json", id);
                put_file(at(0, name), b.p, b.len);
        }
        dbuf_release(&b);
}

/* ---- real runs of the built binary ---- */

/* $BUILDTEL run --quiet --db DB --log-dir L --run-id id -- sh -c 'echo hi'. */
static void buildtel_run(const char *id)
{
        const char *bin = getenv("BUILDTEL");
        char *argv[] = {M(bin ? bin : "buildtel"),
                        M("run"),
                        M("--quiet"),
                        M("--db"),
                        M(at(0, "h.db")),
                        M("--log-dir"),
                        M(at(1, "logs")),
                        M("--run-id"),
                        M(id),
                        M("--interval"),
                        M("0.1"),
                        M("--"),
                        M("sh"),
                        M("-c"),
                        M("echo hi"),
                        NULL};
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status;

        if (!bin)
                fail_msg("$BUILDTEL must name the built binary (tests/meson.build sets it)");
        /* its exports stay in the temp directory, never the machine's */
        assert_int_equal(setenv("BUILDTEL_TEXTFILE_DIR", at(2, "textfile"), 1), 0);
        assert_int_equal(setenv("XDG_STATE_HOME", at(3, "state"), 1), 0);
        unsetenv("GITHUB_STEP_SUMMARY");
        assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
        assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0), 0);
        assert_int_equal(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("buildtel run --run-id %s: status %#x", id, (unsigned)status);
}

/* ---- the replay, checked ---- */

struct got {
        int64_t n;
        uint64_t samples;
        double peak_mib;
        char run_id[64];
        bool csv;     /* the CSV was replayed, not the history's rows */
        int64_t row;  /* the run's row in the history */
        int finished; /* the probe's */
};

/* ref through the probe; the model handed back against what the probe
 * saw. */
static struct got replay(const struct replay_ref *ref)
{
        struct probe p = {0};
        struct replay *rp = NULL;
        const struct run_model *m = NULL;
        struct got g = {0};
        char why[512];
        int e = replay_open(ref, &rp, why, sizeof(why));

        if (e < 0)
                fail_msg("replay_open(%s): %d, %s", ref->run ? ref->run : "(latest)", e, why);
        g.csv = replay_run(rp)->csv != NULL;
        g.row = replay_run(rp)->row;
        g.n = replay_through(rp, probe_list, &p, &m, why, sizeof(why));
        if (g.n < 0)
                fail_msg("replay_through: %lld, %s", (long long)g.n, why);
        assert_non_null(m);
        assert_non_null(m->summary);
        assert_non_null(m->facts);
        assert_int_equal(p.opened, 1);
        assert_int_equal(p.finished, 1);
        assert_ptr_equal(p.fin, m); /* the sinks' model is the one handed back */
        assert_int_equal(p.nsamples, (size_t)g.n);
        g.samples = m->summary->samples;
        g.peak_mib = m->summary->mem_used_peak.set ? m->summary->mem_used_peak.value : NAN;
        /* the model's, as the CSV holds it: whole MiB, rounded (707.5 is 708) */
        if (isfinite(g.peak_mib) && !(fabs(g.peak_mib - p.mem_peak_bytes / SAMPLE_MIB) <= 0.5))
                fail_msg("the model's peak %.17g MiB, the samples' %.17g MiB (%zu samples)",
                         g.peak_mib, p.mem_peak_bytes / SAMPLE_MIB, p.nsamples);
        snprintf(g.run_id, sizeof(g.run_id), "%s",
                 m->run && m->run->run_id ? m->run->run_id : "(none)");
        assert_string_equal(p.fin_run_id, g.run_id);
        g.finished = p.finished;
        replay_free(rp);
        assert_int_equal(p.closed, 1);
        return g;
}

/* A CSV by its path, and by its run id in its log directory without a
 * history: its samples, its peak, its run id from its run.json. */
TEST(csv)
{
        static const struct {
                const char *what;
                const char *run; /* "@": the CSV's path */
                bool need_record;
        } cases[] = {
            {"by its path", "@", false},
            {"by its path, its run record needed", "@", true},
            {"by its run id in the log directory (--no-db)", "w1", false},
        };

        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-replay.XXXXXX");
        assert_non_null(mkdtemp(dir));
        write_csv("w1", true);
        FOREACH_ROW(i, cases) {
                const struct replay_ref ref = {.run = strcmp(cases[i].run, "@") == 0
                                                          ? at(1, "resources-w1.csv")
                                                          : cases[i].run,
                                               .log_dir = dir,
                                               .no_db = true,
                                               .need_record = cases[i].need_record};
                struct got g;

                test_row("%s", cases[i].what);
                g = replay(&ref);
                assert_int_equal(g.n, CSV_ROWS);
                assert_int_equal(g.samples, CSV_ROWS);
                assert_true(g.peak_mib == 2048.0);
                assert_string_equal(g.run_id, "w1");
                assert_true(g.csv);
                assert_int_equal(g.row, 0); /* in no history */
        }
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Two real runs in a history: each by its id, the latest, the start of
 * an id, and its CSV by path, which agree with its rows. */
TEST(history)
{
        static const struct {
                const char *what;
                const char *run; /* NULL: the latest; "@x": x's CSV by path */
                const char *want_id;
                bool want_csv;
        } cases[] = {
            {"by run id", "first", "first", false},
            {"by run id, the other", "second", "second", false},
            {"the latest (NULL)", NULL, "second", false},
            {"the latest (\"\")", "", "second", false},
            {"by the start of an id", "fir", "first", false},
            {"its CSV by path", "@first", "first", true},
        };
        struct got by_row[2] = {0};

        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-replay.XXXXXX");
        assert_non_null(mkdtemp(dir));
        buildtel_run("first");
        buildtel_run("second");
        FOREACH_ROW(i, cases) {
                char csv[200];
                struct replay_ref ref = {
                    .run = cases[i].run, .db_path = at(0, "h.db"), .log_dir = at(1, "logs")};
                struct got g;

                test_row("%s", cases[i].what);
                if (cases[i].run && cases[i].run[0] == '@') {
                        snprintf(csv, sizeof(csv), "%s/logs/resources-%s.csv", dir,
                                 cases[i].run + 1);
                        ref.run = csv;
                }
                g = replay(&ref);
                assert_string_equal(g.run_id, cases[i].want_id);
                assert_int_equal(g.csv, cases[i].want_csv);
                assert_true(g.row > 0); /* a CSV's run found in the history too */
                assert_true(g.n >= 1);  /* a sample at least: its start or its end */
                assert_int_equal(g.samples, (uint64_t)g.n);
                assert_true(isfinite(g.peak_mib) && g.peak_mib > 0);
                /* the same run from its rows and from its CSV: the same */
                if (i < 2)
                        by_row[i] = g;
                if (cases[i].want_csv) {
                        const struct got *r = &by_row[strcmp(g.run_id, "first") == 0 ? 0 : 1];
                        assert_int_equal(g.n, r->n);
                        assert_int_equal(g.row, r->row);
                        assert_true(g.peak_mib == r->peak_mib);
                }
        }
        assert_true(by_row[0].row != by_row[1].row);
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- what is not there: one set of words ---- */

enum stage { AT_OPEN, AT_THROUGH };

static const struct {
        const char *what;
        const char *run;  /* "%s" is the temp directory */
        const char *db;   /* "%s" is the temp directory; NULL: --no-db */
        enum stage stage; /* where it fails */
        bool need_record;
        int want;
        const char *why; /* each "%s" the temp directory */
} err_cases[] = {
    {"a run id in neither the history nor the log directory", "nope", "%s/h.db", AT_OPEN, false,
     -ENOENT,
     "no run 'nope' in the history database '%s/h.db', nor its file '%s/resources-nope.csv'"},
    {"a run id, --no-db", "nope", NULL, AT_OPEN, false, -ENOENT,
     "no run 'nope': no file '%s/resources-nope.csv' (--no-db)"},
    {"the latest of no history", NULL, "%s/none.db", AT_OPEN, false, -ENOENT,
     "no run in the history database '%s/none.db'"},
    {"the latest of an empty history", "", "%s/empty.db", AT_OPEN, false, -ENOENT,
     "no run in the history database '%s/empty.db'"},
    {"the latest, --no-db", NULL, NULL, AT_OPEN, false, -ENOENT,
     "no run in the history database '(none)'"},
    {"a CSV path that is not there", "%s/missing.csv", NULL, AT_OPEN, false, -ENOENT,
     "cannot read '%s/missing.csv': No such file or directory"},
    {"a directory for a CSV (not a regular file: read_file_at's -EINVAL)", "%s/", NULL, AT_OPEN,
     false, -EINVAL, "cannot read '%s/': Invalid argument"},
    {"a CSV that is not one", "%s/resources-junk.csv", NULL, AT_THROUGH, false, -EINVAL,
     "'%s/resources-junk.csv' is not a buildtel CSV (no buildtel header)"},
    {"an empty CSV", "%s/resources-empty.csv", NULL, AT_THROUGH, false, -EINVAL,
     "'%s/resources-empty.csv' is not a buildtel CSV (no buildtel header)"},
    {"a CSV without its run record, one needed", "%s/resources-norec.csv", NULL, AT_OPEN, true,
     -EINVAL, "'%s/resources-norec.run.json' is missing or not a run record"},
    {"a CSV with a run record that is not one, one needed", "%s/resources-badrec.csv", NULL,
     AT_OPEN, true, -EINVAL, "'%s/resources-badrec.run.json' is missing or not a run record"},
};

/* fmt with every "%s" the temp directory. */
static void expand(char *out, size_t cap, const char *fmt)
{
        size_t o = 0;

        for (const char *p = fmt; *p && o + 1 < cap; p++) {
                if (p[0] == '%' && p[1] == 's') {
                        o += (size_t)snprintf(out + o, cap - o, "%s", dir);
                        p++;
                } else {
                        out[o++] = *p;
                }
        }
        out[MIN(o, cap - 1)] = '\0';
}

TEST(errors)
{
        static const char junk[] = "name,size\nfoo,1\n";

        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-replay.XXXXXX");
        assert_non_null(mkdtemp(dir));
        put_file(at(0, "resources-junk.csv"), junk, sizeof(junk) - 1);
        put_file(at(0, "resources-empty.csv"), "", 0);
        put_file(at(0, "empty.db"), "", 0); /* SQLite takes an empty file for a new one */
        write_csv("norec", false);
        write_csv("badrec", false);
        put_file(at(0, "resources-badrec.run.json"), "{\"run_id\": 7", 12);
        FOREACH_ROW(i, err_cases) {
                char run[200], db[200], want[600], why[600];
                struct replay_ref ref = {.log_dir = dir, .need_record = err_cases[i].need_record};
                struct replay *rp = NULL;
                const struct run_model *m = NULL;
                struct probe p = {0};
                int64_t e;

                test_row("%s", err_cases[i].what);
                if (err_cases[i].run) {
                        expand(run, sizeof(run), err_cases[i].run);
                        ref.run = run;
                }
                if (err_cases[i].db) {
                        expand(db, sizeof(db), err_cases[i].db);
                        ref.db_path = db;
                } else {
                        ref.no_db = true;
                }
                expand(want, sizeof(want), err_cases[i].why);
                memset(why, 'x', sizeof(why));
                e = replay_open(&ref, &rp, why, sizeof(why));
                if (err_cases[i].stage == AT_OPEN) {
                        assert_int_equal(e, err_cases[i].want);
                        assert_null(rp); /* untouched */
                        assert_string_equal(why, want);
                        continue;
                }
                assert_int_equal(e, 0);
                assert_string_equal(why, "");
                e = replay_through(rp, probe_list, &p, &m, why, sizeof(why));
                assert_int_equal(e, err_cases[i].want);
                assert_null(m); /* untouched */
                assert_string_equal(why, want);
                assert_int_equal(p.finished, 0);
                replay_free(rp);
                assert_int_equal(p.closed, 1);
        }
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Several runs whose ids start alike: the start of an id is refused, in
 * words; the whole id is one run. */
TEST(ambiguous)
{
        char want[400], why[400];
        struct replay *rp = NULL;
        struct replay_ref ref = {.run = "ab"};

        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-replay.XXXXXX");
        assert_non_null(mkdtemp(dir));
        buildtel_run("abc1");
        buildtel_run("abc2");
        ref.db_path = at(0, "h.db");
        ref.log_dir = at(1, "logs");
        assert_int_equal(replay_open(&ref, &rp, why, sizeof(why)), -EEXIST);
        assert_null(rp);
        snprintf(want, sizeof(want), "'ab' names several runs in '%s/h.db'; give more of the id",
                 dir);
        assert_string_equal(why, want);
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A sink that cannot open: its -errno, with why said (replay.h: "-errno
 * with why in why"). FAILS at 5a8ac24: replay_through() returns the
 * recorder's open error with why "", which common_replay_through() words
 * as "out of memory" (no command's sink fails its open today: latent). */
TEST(sink_open_fails)
{
        char why[400];
        struct replay *rp = NULL;
        const struct run_model *m = NULL;
        struct probe p = {.open_result = -EACCES};
        struct replay_ref ref = {.no_db = true};
        int64_t n;

        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-replay.XXXXXX");
        assert_non_null(mkdtemp(dir));
        write_csv("w1", true);
        ref.run = at(1, "resources-w1.csv");
        assert_int_equal(replay_open(&ref, &rp, why, sizeof(why)), 0);
        n = replay_through(rp, probe_list, &p, &m, why, sizeof(why));
        assert_int_equal(n, -EACCES);
        assert_null(m);
        if (!why[0])
                fail_msg("replay_through: %lld with no words in why", (long long)n);
        replay_free(rp);
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

RUN_TESTS()
