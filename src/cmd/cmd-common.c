/* SPDX-License-Identifier: MIT */
#include "cmd/cmd-common.h"
#include "out/report.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "out/prom.h"
#include "util/util.h"

void common_opts_init(struct common_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->rec.interval = 2.0;
        o->rec.disk_path = ".";
        o->rec.summary.near_oom_mb = 4096;
        o->rec.summary.low_disk_gb = 20;
        o->rec.note = common_note;
        o->rec.warn = common_warn;
}

void common_opts_release(struct common_opts *o)
{
        otel_config_release(&o->otlp);
        free(o->compilers_buf);
        free(o->compilers);
        o->compilers_buf = NULL;
        o->compilers = NULL;
}

static bool run_id_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-')
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
                        return false;
        return true;
}

static int parse_compilers(struct common_opts *o, const char *arg)
{
        size_t n = 1;
        char *p;

        common_opts_release(o);
        o->compilers_buf = strdup(arg);
        if (!o->compilers_buf)
                return -ENOMEM;
        for (const char *c = arg; *c; c++)
                n += *c == ',';
        o->compilers = calloc(n + 1, sizeof(*o->compilers));
        if (!o->compilers)
                return -ENOMEM;
        n = 0;
        for (char *tok = o->compilers_buf; tok; tok = p) {
                p = strchr(tok, ',');
                if (p)
                        *p++ = '\0';
                if (*tok)
                        o->compilers[n++] = tok;
        }
        o->rec.compilers = o->compilers;
        return 0;
}

int common_opts_parse(struct common_opts *o, int opt, const char *arg, const char *cmd)
{
        double d;

        switch (opt) {
        case OPT_INTERVAL:
                if (parse_double_str(arg, &d) < 0 || d < 0.05 || d > 86400) {
                        fprintf(
                            stderr,
                            "buildtel %s: --interval takes seconds from 0.05 to 86400, not '%s'\n",
                            cmd, arg);
                        return -1;
                }
                o->rec.interval = d;
                return 1;
        case OPT_LOG_DIR:
                if (!*arg) {
                        fprintf(stderr, "buildtel %s: --log-dir is empty\n", cmd);
                        return -1;
                }
                o->rec.log_dir = arg;
                return 1;
        case OPT_RUN_ID:
                if (!run_id_valid(arg)) {
                        fprintf(stderr,
                                "buildtel %s: --run-id takes 1 to 64 of [A-Za-z0-9._-], not "
                                "starting with '.' or '-'\n",
                                cmd);
                        return -1;
                }
                snprintf(o->run_id, sizeof(o->run_id), "%s", arg);
                return 1;
        case OPT_DISK_PATH:
                o->rec.disk_path = arg;
                return 1;
        case OPT_STAGE:
                o->rec.logctx.fixed_stage = arg;
                return 1;
        case OPT_STAGE_REGEX: {
                regex_t re;
                int e = regcomp(&re, arg, REG_EXTENDED);
                if (e != 0) {
                        char msg[256];
                        regerror(e, &re, msg, sizeof(msg));
                        fprintf(stderr, "buildtel %s: --stage-regex '%s': %s\n", cmd, arg, msg);
                        return -1;
                }
                regfree(&re);
                o->rec.logctx.stage_regex = arg;
                return 1;
        }
        case OPT_NEAR_OOM_MB:
        case OPT_LOW_DISK_GB:
                if (parse_double_str(arg, &d) < 0 || d < 0) {
                        fprintf(stderr, "buildtel %s: %s takes a number >= 0, not '%s'\n", cmd,
                                opt == OPT_NEAR_OOM_MB ? "--near-oom-mb" : "--low-disk-gb", arg);
                        return -1;
                }
                if (opt == OPT_NEAR_OOM_MB)
                        o->rec.summary.near_oom_mb = d;
                else
                        o->rec.summary.low_disk_gb = d;
                return 1;
        case OPT_COMPILERS:
                if (parse_compilers(o, arg) < 0) {
                        fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                        return -1;
                }
                return 1;
        case OPT_QUIET:
                o->rec.quiet = true;
                return 1;
        case OPT_HELP:
                o->help = true;
                return 1;
        case OPT_TARGETS:
                o->rec.metrics.targets = arg;
                return 1;
        case OPT_SCCACHE_MARKER: {
                /* TARGET=PATH; both point into argv, which outlives us: the
                 * target name ends at the '='. */
                const char *eq = strchr(arg, '=');
                struct buildmetrics_config *m = &o->rec.metrics;
                if (!eq || eq == arg || !eq[1] || m->nmarkers >= BUILDMETRICS_MAX_MARKERS) {
                        fprintf(stderr,
                                "buildtel %s: --sccache-marker takes TARGET=PATH (at most %d), not "
                                "'%s'\n",
                                cmd, BUILDMETRICS_MAX_MARKERS, arg);
                        return -1;
                }
                m->markers[m->nmarkers].target = arg;
                m->markers[m->nmarkers++].path = eq + 1;
                return 1;
        }
        case OPT_NINJA_LOG:
                o->rec.metrics.ninja_log = arg;
                return 1;
        case OPT_METRIC_PREFIX:
                if (*arg && !prom_prefix_valid(arg)) {
                        fprintf(
                            stderr,
                            "buildtel %s: --metric-prefix takes [a-zA-Z_][a-zA-Z0-9_]*, not '%s'\n",
                            cmd, arg);
                        return -1;
                }
                o->rec.prom.metric_prefix = arg;
                return 1;
        case OPT_TEXTFILE_DIR:
                if (!*arg) {
                        fprintf(stderr, "buildtel %s: --textfile-dir is empty\n", cmd);
                        return -1;
                }
                o->rec.prom.textfile_dir = arg;
                return 1;
        case OPT_PROM_FILE:
                if (!prom_file_valid(arg)) {
                        fprintf(stderr,
                                "buildtel %s: --prom-file takes a file name ending in .prom, not "
                                "'%s'\n",
                                cmd, arg);
                        return -1;
                }
                o->rec.prom.prom_file = arg;
                return 1;
        case OPT_PUSHGATEWAY:
                if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0) {
                        fprintf(stderr,
                                "buildtel %s: --pushgateway takes an http:// or https:// URL, not "
                                "'%s'\n",
                                cmd, arg);
                        return -1;
                }
                o->rec.prom.pushgateway = arg;
                return 1;
        case OPT_PUSH_JOB:
                if (!*arg) {
                        fprintf(stderr, "buildtel %s: --push-job is empty\n", cmd);
                        return -1;
                }
                o->rec.prom.push_job = arg;
                return 1;
        case OPT_DB:
                if (!*arg) {
                        fprintf(stderr, "buildtel %s: --db is empty\n", cmd);
                        return -1;
                }
                o->rec.db_path = arg;
                o->rec.no_db = false;
                return 1;
        case OPT_NO_DB:
                o->rec.no_db = true;
                return 1;
        case OPT_NO_REPORT:
                o->rec.no_report = true;
                return 1;
        case OPT_OTLP_ENDPOINT:
                o->otlp_opt.endpoint = arg;
                return 1;
        case OPT_OTLP_INTERVAL:
                if (parse_double_str(arg, &d) < 0 || d < 0.1 || d > 86400) {
                        fprintf(stderr,
                                "buildtel %s: --otlp-interval takes seconds from 0.1 to 86400, not "
                                "'%s'\n",
                                cmd, arg);
                        return -1;
                }
                o->otlp_opt.interval_ms = (uint64_t)llround(d * 1000);
                return 1;
        default:
                return 0;
        }
}

static void make_run_id(char *buf, size_t len)
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

int common_run_info(struct common_opts *o, const char *kind, struct run_info *ri)
{
        char host[256] = "";
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

        if (!o->run_id[0])
                make_run_id(o->run_id, sizeof(o->run_id));
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
        return 0;
}

void common_note(void *userdata, const char *fmt, ...)
{
        char buf[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(stderr, "buildtel: note: %s\n", buf);
}

static const char *env_lookup(void *userdata, const char *name)
{
        return getenv(name);
}

int common_otlp_load(struct common_opts *o, const char *cmd)
{
        int e;

        otel_config_release(&o->otlp);
        e = otelenv_load(env_lookup, NULL, &o->otlp_opt, common_note, NULL, &o->otlp);
        if (e == -EINVAL) {
                /* never echo the value: a URL may carry user:password */
                fprintf(
                    stderr,
                    "buildtel %s: --otlp-endpoint takes an http:// or https:// URL with a host\n",
                    cmd);
                return -1;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
        o->rec.otlp = &o->otlp;
        return 0;
}

void common_warn(void *userdata, const char *fmt, ...)
{
        char buf[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fprintf(stderr, "buildtel: warning: %s\n", buf);
}

/* GitHub Actions annotations, after the build's output. */
static void common_gh_warnings(struct recorder *r)
{
        struct dbuf w = DBUF_INIT;

        if (report_gh_warnings(recorder_summary(r), &w) >= 0 && w.len)
                fputs(w.p, stderr);
        dbuf_release(&w);
}

void common_report(const struct common_opts *o, struct recorder *r, struct dbuf *short_sum)
{
        const char *dir = recorder_log_dir(r);
        const char *gha = getenv("GITHUB_ACTIONS");

        if (gha && strcmp(gha, "true") == 0)
                common_gh_warnings(r);
        if (o->rec.quiet)
                return;
        if (short_sum->len)
                fputs(short_sum->p, stderr);
        if (dir) {
                fprintf(stderr, "buildtel: csv: %s/resources-%s.csv\n", dir, o->run_id);
                fprintf(stderr, "buildtel: summary: %s/resources-%s.summary.txt (.json)\n", dir,
                        o->run_id);
                if (!o->rec.no_report)
                        fprintf(stderr, "buildtel: report: %s/report-%s.html\n", dir, o->run_id);
        }
}
