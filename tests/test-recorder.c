/* SPDX-License-Identifier: MIT */
/* The recorder, the middle of the pipeline: a replay recorder feeding a
 * probe sink (what it is given, in which order, and what a failing finish
 * does), and a live recorder writing a real run into a temp log directory
 * (its build log, CSV and run facts read back), and falling back to
 * $TMPDIR/buildtel-<uid>/logs when the log directory cannot be made. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/targets.h"
#include "runfiles/names.h"
#include "pipeline/recorder.h"
#include "render/short.h"
#include "sinks/sink.h"
#include "util/macro.h"
#include "util/util.h"
#include "runfiles/samplecsv.h"
#include "runfiles/runjson.h"

static char *M(const char *s)
{
        return (char *)(uintptr_t)s;
}

/* ---- a probe sink: what the recorder hands a sink ---- */

struct probe {
        int opened, closed, finished;
        const char *log_dir; /* as open saw it */
        void *userdata;      /* sink_ctx.userdata */
        uint64_t seen[8];    /* m->summary->samples at each sample */
        double mem[8];       /* each sample's mem_used_bytes */
        double epoch[8];     /* each sample's epoch */
        size_t nsamples;
        char out[256]; /* output, as given */
        size_t outlen;
        const struct targets *fin_targets; /* the model at finish */
        const struct run_facts *fin_facts;
        uint64_t fin_samples, fin_skipped;
        int finish_result; /* what finish returns */
};

static struct probe *probe_of(const struct sink_ctx *ctx)
{
        return ctx->userdata;
}

static int probe_open(const struct sink_ctx *ctx, void **ret)
{
        struct probe *p = probe_of(ctx);

        p->opened++;
        p->log_dir = ctx->log_dir;
        p->userdata = ctx->userdata;
        *ret = p;
        return 0;
}

static void probe_output(void *state, int stream, const char *buf, size_t len)
{
        struct probe *p = state;

        if (p->outlen + len + 2 < sizeof(p->out)) {
                p->out[p->outlen++] = (char)('0' + stream);
                memcpy(p->out + p->outlen, buf, len);
                p->outlen += len;
        }
}

static void probe_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct probe *p = state;

        if (p->nsamples < ARRAY_SIZE(p->seen)) {
                p->seen[p->nsamples] = m->summary->samples;
                p->mem[p->nsamples] = s->mem_used_bytes;
                p->epoch[p->nsamples] = s->epoch;
        }
        p->nsamples++;
        assert_null(m->targets); /* made at finish */
}

static int probe_finish(void *state, const struct run_model *m)
{
        struct probe *p = state;

        p->finished++;
        p->fin_targets = m->targets;
        p->fin_facts = m->facts;
        p->fin_samples = m->summary->samples;
        p->fin_skipped = m->summary->skipped_rows;
        return p->finish_result;
}

static void probe_close(void *state)
{
        struct probe *p = state;

        p->closed++;
}

static const struct sink_ops sink_probe = {
    .name = "probe",
    .open = probe_open,
    .output = probe_output,
    .sample = probe_sample,
    .finish = probe_finish,
    .close = probe_close,
};

struct notes {
        char last[512];
        int n;
};

static void on_note(void *userdata, const char *fmt, ...)
{
        struct notes *n = userdata;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(n->last, sizeof(n->last), fmt, ap);
        va_end(ap);
        n->n++;
}

static struct run_info fixed_run(char **argv)
{
        return (struct run_info){.run_id = M("rec"),
                                 .kind = M("run"),
                                 .argv = argv,
                                 .host = M("h"),
                                 .start_epoch = 1767225600.0,
                                 .end_epoch = 1767225610.0,
                                 .finished = true,
                                 .exit_code = 0,
                                 .ncpu = 2,
                                 .interval = 1};
}

/* A replay: the probe gets every recorded sample with the summary so far,
 * the recorded model at finish, and a failing finish is the recorder's
 * result, noted by name. */
static void test_replay(void **state)
{
        static const struct {
                size_t nsamples, nskipped;
                bool recorded;     /* hand a recorded model */
                int finish_result; /* the probe's finish */
        } cases[] = {
            {0, 0, false, 0},
            {3, 0, false, 0},
            {5, 2, true, 0},
            {2, 0, true, -EIO},
        };
        static const struct sink_ops *const list[] = {&sink_probe, NULL};
        char *argv[] = {M("make"), NULL};

        (void)state;
        for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
                struct run_info ri = fixed_run(argv);
                struct probe p = {.finish_result = cases[c].finish_result};
                struct notes notes = {0};
                struct targets *ts = calloc(1, sizeof(*ts));
                static struct run_facts facts;
                struct run_model rec = {.run = &ri, .targets = ts, .facts = &facts};
                struct recorder_config cfg = {.interval = 1,
                                              .quiet = true,
                                              .no_db = true,
                                              .sinks = list,
                                              .sink_userdata = &p,
                                              .note = on_note,
                                              .userdata = &notes};
                const struct run_model none = {0};
                struct recorder *r = NULL;
                struct dbuf sh = DBUF_INIT, csv = DBUF_INIT;

                assert_non_null(ts);
                targets_init(ts);
                targets_facts(ts, &ri, &facts);
                assert_int_equal(recorder_new(&cfg, &ri, &r), 0);
                assert_int_equal(recorder_open_sinks(r), 0);
                assert_int_equal(p.opened, 1);
                assert_null(p.log_dir); /* a replay writes no files */
                assert_ptr_equal(p.userdata, &p);
                assert_null(recorder_log_dir(r));
                assert_int_equal(recorder_tick(r), -EINVAL); /* samples nothing */
                assert_int_equal(samplecsv_header(&csv), 0);
                for (size_t i = 0; i < cases[c].nsamples; i++) {
                        struct sample s;

                        sample_clear(&s);
                        s.epoch = ri.start_epoch + (double)i;
                        s.elapsed_s = (double)i;
                        s.mem_used_bytes = 1000.0 * (double)(i + 1) * SAMPLE_MIB;
                        s.mem_avail_bytes = 4000.0 * SAMPLE_MIB;
                        assert_int_equal(samplecsv_format(&s, &csv), 0);
                }
                for (size_t i = 0; i < cases[c].nskipped; i++)
                        assert_int_equal(dbuf_puts(&csv, "junk\"row\r\n"), 0); /* a stray quote */
                assert_int_equal(recorder_replay_csv(r, csv.p, csv.len), cases[c].nsamples);
                dbuf_release(&csv);
                assert_int_equal(recorder_summary(r)->samples, cases[c].nsamples);
                assert_int_equal(recorder_finish_recorded(r, cases[c].recorded ? &rec : &none, 0),
                                 cases[c].finish_result);
                assert_int_equal(short_render(recorder_model(r), &sh), 0);
                assert_int_equal(p.nsamples, cases[c].nsamples);
                for (size_t i = 0; i < cases[c].nsamples; i++) {
                        assert_int_equal(p.seen[i], i + 1); /* this sample included */
                        assert_true(p.mem[i] == 1000.0 * (double)(i + 1) * SAMPLE_MIB);
                }
                assert_int_equal(p.finished, 1);
                assert_int_equal(p.fin_samples, cases[c].nsamples);
                assert_int_equal(p.fin_skipped, cases[c].nskipped);
                assert_non_null(p.fin_facts);
                if (cases[c].recorded) {
                        assert_ptr_equal(p.fin_targets, ts);
                        assert_ptr_equal(p.fin_facts, &facts);
                }
                assert_true(sh.len > 0); /* the short summary */
                assert_int_equal(recorder_sink_failed(r, "probe"), cases[c].finish_result < 0);
                assert_true(recorder_sink_failed(r, "csv")); /* never open */
                if (cases[c].finish_result < 0) {
                        assert_int_equal(notes.n, 1);
                        assert_string_equal(notes.last, "probe: Input/output error");
                } else {
                        assert_int_equal(notes.n, 0);
                }
                assert_int_equal(p.closed, 0);
                recorder_free(r);
                assert_int_equal(p.closed, 1);
                dbuf_release(&sh);
                targets_release(ts);
                free(ts);
        }
}

/* ---- a live recorder writing files ---- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path) < 0 ? -1 : 0;
}

static char *slurp(const char *dir, enum runfile f, size_t *ret_len)
{
        _cleanup_free_ char *path = runfiles_path(dir, "rec", f);
        char *p = NULL;

        assert_non_null(path);
        if (read_regular_file(path, 0, 16 << 20, &p, ret_len) < 0)
                return NULL;
        return p;
}

static size_t count_lines(const char *p, size_t len)
{
        size_t n = 0;

        for (size_t i = 0; i < len; i++)
                n += p[i] == '\n';
        return n;
}

/* One live run into dir (NULL: log_dir as given), nticks samples; checks
 * its files where the recorder says it wrote them. */
static void live_run(const char *log_dir, const char *want_dir, struct notes *notes, int nticks)
{
        static const struct sink_ops *const list[] = {&sink_probe, NULL};
        char *argv[] = {M("sh"), M("-c"), M("true"), NULL};
        struct run_info ri = fixed_run(argv);
        struct probe p = {0};
        char prom[300];
        struct recorder_config cfg = {.log_dir = log_dir,
                                      .interval = 0.05,
                                      .quiet = true,
                                      .no_db = true,
                                      .no_report = true,
                                      .sinks = list,
                                      .sink_userdata = &p,
                                      .note = on_note,
                                      .userdata = notes};
        struct recorder *r = NULL;
        struct run_info back;
        struct dbuf hdr = DBUF_INIT;
        char *buf;
        size_t len;
        int e;

        snprintf(prom, sizeof(prom), "%s/textfile", want_dir);
        cfg.prom.textfile_dir = prom;
        assert_int_equal(recorder_new(&cfg, &ri, &r), 0);
        assert_int_equal(recorder_open_live(r), 0);
        assert_non_null(recorder_log_dir(r));
        assert_string_equal(recorder_log_dir(r), want_dir);
        assert_string_equal(p.log_dir, want_dir); /* cfg.sinks open after the run's own */
        recorder_output(r, 1, "line one\nline ", 14);
        recorder_output(r, 2, "an error\n", 9);
        recorder_output(r, 1, "two\n", 4);
        recorder_output_eof(r, 1);
        recorder_output_eof(r, 2);
        for (int i = 0; i < nticks; i++)
                assert_int_equal(recorder_tick(r), 0);
        assert_true(recorder_next_tick(r) > 0);
        e = recorder_finish(r);
        if (e < 0)
                print_error("finish: %s (%s)\n", strerror(-e), notes->last);
        assert_int_equal(e, 0);
        assert_false(recorder_sink_failed(r, "csv"));
        assert_false(recorder_sink_failed(r, "summary"));
        recorder_free(r);

        /* every byte of both streams, in order, in the build log; the same to the probe */
        buf = slurp(want_dir, RUNFILE_BUILD_LOG, &len);
        assert_non_null(buf);
        assert_int_equal(len, 27);
        assert_memory_equal(buf, "line one\nline an error\ntwo\n", 27);
        free(buf);
        assert_int_equal(p.outlen, 30);
        assert_memory_equal(p.out, "1line one\nline 2an error\n1two\n", 30);
        /* the header and a row per tick */
        buf = slurp(want_dir, RUNFILE_CSV, &len);
        assert_non_null(buf);
        assert_int_equal(count_lines(buf, len), (size_t)nticks + 1);
        assert_int_equal(samplecsv_header(&hdr), 0);
        assert_true(len > hdr.len);
        assert_memory_equal(buf, hdr.p, hdr.len);
        dbuf_release(&hdr);
        free(buf);
        assert_int_equal(p.nsamples, (size_t)nticks);
        /* A live sample's time is whole milliseconds, as the CSV writes it:
         * every output rounds it to the same millisecond (OTLP's llround of
         * ms against the CSV's "%.3f" once differed by 1 ms on a live
         * epoch of x.1135). */
        for (size_t i = 0; i < MIN(p.nsamples, ARRAY_SIZE(p.epoch)); i++) {
                char txt[32];

                snprintf(txt, sizeof(txt), "%.3f", p.epoch[i]);
                assert_true(p.epoch[i] == round(p.epoch[i] * 1e3) / 1e3);
                assert_true(strtod(txt, NULL) == p.epoch[i]);
        }
        /* the facts, parsed back */
        buf = slurp(want_dir, RUNFILE_RUN, &len);
        assert_non_null(buf);
        assert_int_equal(runjson_parse(buf, len, &back), 0);
        assert_string_equal(back.run_id, "rec");
        assert_string_equal(back.argv[2], "true");
        run_info_release(&back);
        free(buf);
        buf = slurp(want_dir, RUNFILE_SUMMARY_JSON, &len);
        assert_non_null(buf);
        free(buf);
        /* --no-report */
        buf = slurp(want_dir, RUNFILE_REPORT, &len);
        assert_null(buf);
}

static void test_live(void **state)
{
        char dir[64], logs[128];
        struct notes notes = {0};
        static const int ticks[] = {1, 3};

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(ticks); i++) {
                snprintf(dir, sizeof(dir), "/tmp/buildtel-test-recorder.XXXXXX");
                assert_non_null(mkdtemp(dir));
                snprintf(logs, sizeof(logs), "%s/logs/deeper", dir); /* made as needed */
                live_run(logs, logs, &notes, ticks[i]);
                assert_int_equal(notes.n, 0);
                (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        }
}

/* A log directory that cannot be made: $TMPDIR/buildtel-<uid>/logs,
 * said once. */
static void test_live_fallback(void **state)
{
        char dir[64], bad[128], fb[160];
        struct notes notes = {0};
        int fd;

        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-recorder.XXXXXX");
        assert_non_null(mkdtemp(dir));
        snprintf(bad, sizeof(bad), "%s/file", dir);
        fd = open(bad, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        snprintf(bad, sizeof(bad), "%s/file/logs", dir); /* under a regular file */
        snprintf(fb, sizeof(fb), "%s/buildtel-%u/logs", dir, (unsigned)getuid());
        assert_int_equal(setenv("TMPDIR", dir, 1), 0);
        live_run(bad, fb, &notes, 1);
        unsetenv("TMPDIR");
        assert_int_equal(notes.n, 1);
        assert_non_null(strstr(notes.last, "cannot write to"));
        assert_non_null(strstr(notes.last, fb));
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_replay),
            cmocka_unit_test(test_live),
            cmocka_unit_test(test_live_fallback),
        };

        unsetenv("GITHUB_STEP_SUMMARY");
        unsetenv("BUILDTEL_TEXTFILE_DIR");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
