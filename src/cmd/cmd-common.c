/* SPDX-License-Identifier: MIT */
/* What the commands share: run, watch and bench set up a run the same way,
 * and every replay opens and runs the same way. */
#include "cmd/cmd-common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "model/jobname.h"
#include "pipeline/replay.h"
#include "platform/child.h"
#include "platform/vcs.h"
#include "render/prom.h"
#include "render/report.h"
#include "render/short.h"
#include "runfiles/names.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

/* ---- the run id, the run's facts (run_info) of run and watch, the note
 * and warning callbacks, the replays' opening and running ---- */

/* A fresh run id, "20261129T154020Z-a1b2c3", into buf. */
static void common_make_run_id(char *buf, size_t len)
{
        uint8_t rnd[3] = {0};
        time_t t = time(NULL);
        struct tm tm;

        if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
                /* No entropy yet: pid and clock still keep ids apart. */
                uint32_t x = (uint32_t)getpid() ^ (uint32_t)(now_monotonic() * 1e6);
                rnd[0] = (uint8_t)x;
                rnd[1] = (uint8_t)(x >> 8);
                rnd[2] = (uint8_t)(x >> 16);
        }
        gmtime_r(&t, &tm);
        snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ-%02x%02x%02x", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rnd[0], rnd[1],
                 rnd[2]);
}

/* The one read of the git revision per run: into ri, and the OTLP run
 * span's attribute from it. */
static int common_run_vcs(struct common_opts *o, struct run_info *ri)
{
        struct vcs_info vcs;

        if (!ri->cwd || vcs_read(ri->cwd, &vcs) < 0)
                return 0;
        ri->vcs_rev = strdup(vcs.rev);
        ri->vcs_ref = strdup(vcs.ref);
        if (!ri->vcs_rev || !ri->vcs_ref)
                return -ENOMEM;
        if (o->otlp.enabled && vcs.rev[0] && !o->otlp.vcs_rev &&
            !(o->otlp.vcs_rev = strdup(vcs.rev)))
                return -ENOMEM;
        return 0;
}

int common_run_info(struct common_opts *o, const char *kind, struct run_info *ri)
{
        char host[256] = "";
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        if (!o->run_id[0])
                common_make_run_id(o->run_id, sizeof(o->run_id));
        (void)gethostname(host, sizeof(host) - 1);
        ri->run_id = strdup(o->run_id);
        ri->kind = strdup(kind);
        ri->cwd = getcwd(NULL, 0);
        ri->host = strdup(host);
        if (!ri->run_id || !ri->kind || !ri->host)
                return -ENOMEM;
        ri->start_epoch = now_realtime();
        ri->end_epoch = NAN;
        ri->finished = false;
        ri->exit_code = -1;
        ri->ncpu = ncpu > 0 ? (unsigned)ncpu : 1;
        ri->interval = o->rec.interval;
        return common_run_vcs(o, ri);
}

const char *common_getenv(void *userdata, const char *name)
{
        return getenv(name);
}

int common_run_job(struct common_opts *o, struct run_info *ri)
{
        int r = jobname_get(o->job, ri->argv, ri->cwd, common_getenv, NULL, &ri->job);

        if (r < 0)
                return r;
        if (o->rec.prom.prom_file)
                return 0; /* --prom-file wins */
        if (common_prom_file(ri->job, o->prom_file_buf, sizeof(o->prom_file_buf)) >= 0)
                o->rec.prom.prom_file = o->prom_file_buf;
        return 0;
}

int common_prom_file(const char *job, char *buf, size_t cap)
{
        char part[JOBNAME_FILE_SIZE];
        int n = job ? jobname_file_part(job, part, sizeof(part)) : -EINVAL;

        if (n >= 0)
                n = snprintf(buf, cap, "buildtel-%s.prom", part);
        return n > 0 && (size_t)n < cap && prom_file_valid(buf) ? 0 : -EINVAL;
}

/* "WHAT: message" and a newline on stderr: the one printer of the note
 * and warning callbacks. */
static _printf_(2, 0) void common_vprint(const char *what, const char *fmt, va_list ap)
{
        char buf[2048];

        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        (void)vsnprintf(buf, sizeof(buf), fmt, ap); /* a cut line is still said */
        /* a note may quote the build (a stage, a file name, a run id from a
         * file): cleaned for the terminal (model/run.h) on one line */
        if (run_append_utf8_lossy(&b, buf, strlen(buf), true) >= 0)
                fprintf(stderr, "%s: %s\n", what, b.p);
}

void common_note(void *userdata, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        common_vprint("buildtel: note", fmt, ap);
        va_end(ap);
}

void common_warn(void *userdata, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        common_vprint("buildtel: warning", fmt, ap);
        va_end(ap);
}

void common_cmd_note(void *userdata, const char *fmt, ...)
{
        const char *cmd = (const char *)(uintptr_t)userdata;
        char what[64];
        va_list ap;

        (void)snprintf(what, sizeof(what), "buildtel %s: note", cmd);
        va_start(ap, fmt);
        common_vprint(what, fmt, ap);
        va_end(ap);
}

int common_replay_open(const struct common_opts *o, const char *cmd, const char *spec,
                       bool need_record, bool own_thresholds, struct replay **ret)
{
        const struct replay_ref ref = {.run = spec,
                                       .db_path = o->rec.db_path,
                                       .log_dir = o->rec.log_dir,
                                       .no_db = o->rec.no_db,
                                       .need_record = need_record,
                                       .thresholds = o->rec.summary,
                                       .own_thresholds = own_thresholds,
                                       .note = common_cmd_note,
                                       .userdata = (void *)(uintptr_t)cmd};
        char why[1024];
        int e = replay_open(&ref, ret, why, sizeof(why));

        if (e < 0)
                fprintf(stderr, "buildtel %s: %s\n", cmd, e == -ENOMEM ? "out of memory" : why);
        return e < 0 ? 1 : 0;
}

int64_t common_replay_through(const char *cmd, struct replay *rp,
                              const struct sink_ops *const *sinks, void *userdata,
                              const struct run_model **ret_model)
{
        char why[1024];
        int64_t n = replay_through(rp, sinks, userdata, ret_model, why, sizeof(why));

        if (n < 0)
                fprintf(stderr, "buildtel %s: %s\n", cmd,
                        n == -ENOMEM || !why[0] ? "out of memory" : why);
        if (n >= 0 && (*ret_model)->summary->skipped_rows)
                fprintf(stderr, "buildtel %s: note: %llu torn or junk rows skipped\n", cmd,
                        (unsigned long long)(*ret_model)->summary->skipped_rows);
        return n < 0 ? -1 : n;
}

/* ---- the OTLP environment of run and watch: the configuration from
 * options and OTEL_* variables, the run span, the child's TRACEPARENT ---- */

int common_otlp_run_span(struct otel_config *c, const char *run_id)
{
        uint8_t rnd[16];

        if (!c->enabled)
                return 0;
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
                /* cannot happen on Linux >= 3.17 once booted; still unique */
                uint64_t x =
                    (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(now_realtime() * 1e9);
                for (size_t i = 0; i < sizeof(rnd); i++)
                        rnd[i] = (uint8_t)(x >> (8 * (i % 8))) ^ (uint8_t)(i * 37);
        }
        otelenv_set_run_span(c, rnd, run_id);
        return 0;
}

int common_otlp_load(struct common_opts *o, const char *cmd)
{
        int e;

        otel_config_release(&o->otlp);
        e = otelenv_load(common_getenv, NULL, &o->otlp_opt, common_note, NULL, &o->otlp);
        if (e == -EINVAL) {
                /* never echo the value: a URL may carry user:password */
                fprintf(
                    stderr,
                    "buildtel %s: --otlp-endpoint takes an http:// or https:// URL with a host\n",
                    cmd);
                return -1;
        }
        if (e >= 0) {
                o->rec.otlp = &o->otlp;
                /* the run id now: the run span's id derives from it */
                if (!o->run_id[0])
                        common_make_run_id(o->run_id, sizeof(o->run_id));
                e = common_otlp_run_span(&o->otlp, o->run_id);
        }
        if (e < 0)
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
        return e < 0 ? -1 : 0;
}

int common_otlp_child_env(const struct common_opts *o, struct otlp_child_env *ret)
{
        static char no_state[] = "TRACESTATE"; /* removes it */
        char *set[2];
        size_t n = 0;

        *ret = (struct otlp_child_env){0};
        if (!o->otlp.enabled || !o->otlp.traces_url || !o->otlp.span_set)
                return 0;
        memcpy(ret->traceparent, "TRACEPARENT=", 12);
        (void)otelenv_format_traceparent(&o->otlp.span, ret->traceparent + 12,
                                         sizeof(ret->traceparent) - 12);
        set[n++] = ret->traceparent;
        if (o->otlp.has_trace && o->otlp.tracestate) {
                if (asprintf(&ret->tracestate, "TRACESTATE=%s", o->otlp.tracestate) < 0) {
                        ret->tracestate = NULL;
                        return -ENOMEM;
                }
                set[n++] = ret->tracestate;
        } else {
                set[n++] = no_state; /* a new trace: no one else's state */
        }
        return child_env_with(set, n, &ret->envp);
}

void common_otlp_child_env_release(struct otlp_child_env *ce)
{
        free(ce->envp);
        free(ce->tracestate);
        *ce = (struct otlp_child_env){0};
}

/* ---- the end of a run on stderr: GitHub annotations, the short summary,
 * the files written ---- */

/* "buildtel: what: <dir>/<file><tail>" */
static void common_say_file(const char *what, const char *dir, const char *run_id,
                            enum runfile kind, const char *tail)
{
        _cleanup_free_ char *p = runfiles_path(dir, run_id, kind);

        if (p)
                fprintf(stderr, "buildtel: %s: %s%s\n", what, p, tail);
}

void common_report(const struct common_opts *o, struct recorder *r)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;
        const char *dir = recorder_log_dir(r);
        const char *gha = getenv("GITHUB_ACTIONS");

        /* GitHub Actions annotations, after the build's output */
        if (gha && strcmp(gha, "true") == 0 && report_gh_warnings(recorder_summary(r), &b) >= 0 &&
            b.len)
                fputs(b.p, stderr);
        if (o->rec.quiet)
                return;
        dbuf_reset(&b);
        if (short_render(recorder_model(r), &b) >= 0 && b.len)
                fputs(b.p, stderr);
        /* Only the files that were written (a full disk was said above). */
        if (dir && !recorder_sink_failed(r, "csv"))
                common_say_file("csv", dir, o->run_id, RUNFILE_CSV, "");
        if (dir && !recorder_sink_failed(r, "summary"))
                common_say_file("summary", dir, o->run_id, RUNFILE_SUMMARY_TXT, " (.json)");
        if (dir && !o->rec.no_report && !recorder_sink_failed(r, "report"))
                common_say_file("report", dir, o->run_id, RUNFILE_REPORT, "");
}
