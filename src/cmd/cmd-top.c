/* SPDX-License-Identifier: MIT */
/* buildtel top: the builds running on this machine and the recent ones,
 * live, from the history database. */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "pipeline/history-open.h"
#include "render/summary.h"
#include "sinks/logfile.h"
#include "view/top-curses.h"
#include "view/top.h"
#include "store/history.h"
#include "util/macro.h"
#include "util/util.h"

#define TOP_ROWS_MAX 32
#define TOP_RECENT 8
#define TOP_TARGETS_MAX 64

/* One run as shown, with the strings the row points at. */
struct top_run {
        int64_t id;
        char command[256], result[32];
        char stage[64], context[96], units[128];
        char build_log[512]; /* "" unknown */
        char run_id[72];
        char peak[256], jobs[400]; /* a finished run's, "" unknown */
        double near_oom_mb, interval;
        struct store_tail_point tail[STORE_TAIL_MAX];
        size_t ntail;
};

/* The tail of the last compressed log read: a finished run's .gz does not
 * change, and decompressing it again on every refresh would cost a full
 * read of it each time. */
struct log_cache {
        char path[512]; /* "" none */
        char buf[8192];
        ssize_t n;
        bool cut;
};

struct top_state {
        struct store *st; /* NULL: no history yet (waiting for db) */
        char *db;         /* its path */
        char empty[600];  /* what an empty list says */
        uid_t db_owner;   /* the logs read are this uid's */
        bool db_owner_known;
        struct log_cache logc;
        struct top_run runs[TOP_ROWS_MAX];
        struct top_row rows[TOP_ROWS_MAX];
        size_t n, nrecent;
};

static void command_of(const struct store_run *r, char *buf, size_t len)
{
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; r->info.argv && r->info.argv[i] && used + 1 < len; i++) {
                int n = snprintf(buf + used, len - used, "%s%s", i ? " " : "", r->info.argv[i]);

                if (n < 0)
                        break;
                used = MIN(used + (size_t)n, len - 1);
        }
}

/* "build 301 MiB (anon 300 MiB), host 1.2 GiB; largest unit cc1 x.c 812 MiB" */
static void peak_of(const struct store_run *r, char *buf, size_t len)
{
        const char *b = SIZE_STR(r->build_mem_peak_mb), *a = SIZE_STR(r->build_anon_peak_mb);
        const char *h = SIZE_STR(r->mem_used_peak_mb);

        buf[0] = '\0';
        if (!isfinite(r->build_mem_peak_mb) && !isfinite(r->mem_used_peak_mb))
                return;
        if (r->unit_peak_name && isfinite(r->unit_peak_mb))
                snprintf(buf, len, "build %s (anon %s), host %s; largest unit %s%s%s %s", b, a, h,
                         r->unit_peak_tool ? r->unit_peak_tool : "", r->unit_peak_tool ? " " : "",
                         r->unit_peak_shown ? r->unit_peak_shown : r->unit_peak_name,
                         SIZE_STR(r->unit_peak_mb));
        else
                snprintf(buf, len, "build %s (anon %s), host %s", b, a, h);
}

static void fill_row(struct top_state *s, size_t i, const struct store_run *r)
{
        struct top_run *t = &s->runs[i];
        struct top_row *row = &s->rows[i];
        int n;

        memset(t, 0, sizeof(*t));
        t->id = r->id;
        command_of(r, t->command, sizeof(t->command));
        history_run_result(r, t->result);
        /* STATE is 10 cells: a state is never cut into another word */
        if (r->state == STORE_RUN_UNRECORDED || r->state == STORE_RUN_DISK_FULL)
                snprintf(t->result, sizeof(t->result), "%s",
                         r->state == STORE_RUN_DISK_FULL ? "disk full" : "unrecorded");
        t->near_oom_mb = isnan(r->near_oom_mb) ? 4096 : r->near_oom_mb;
        t->interval = r->info.interval;
        if (r->build_log)
                snprintf(t->build_log, sizeof(t->build_log), "%s", r->build_log);
        snprintf(t->run_id, sizeof(t->run_id), "%s", r->info.run_id ? r->info.run_id : "");
        peak_of(r, t->peak, sizeof(t->peak));
        if (r->jobs_reading)
                snprintf(t->jobs, sizeof(t->jobs), "%s", r->jobs_reading);
        n = store_run_tail(s->st, r->id, t->tail, STORE_TAIL_MAX);
        t->ntail = n > 0 ? (size_t)n : 0;
        *row = (struct top_row){.command = t->command,
                                .running = r->state == STORE_RUN_RUNNING,
                                .result = t->result,
                                .elapsed_s = r->duration_s,
                                .stage = t->stage,
                                .context = t->context,
                                .units = t->units,
                                .mem_avail_mb = NAN,
                                /* a finished run's: its peak, as `status` says it */
                                .build_mem_mb = r->build_mem_peak_mb,
                                .oom_kills = r->build_oom_kills,
                                .cpu_pct = NAN};
        if (row->running && !isnan(r->info.start_epoch))
                row->elapsed_s = (double)time(NULL) - r->info.start_epoch;
        for (size_t k = 0; k < t->ntail; k++)
                row->spark[row->nspark++ % TOP_SPARK_MAX] = t->tail[k].mem_avail_mb;
        row->nspark = MIN(row->nspark, (size_t)TOP_SPARK_MAX);
        if (t->ntail) {
                const struct store_tail_point *p = &t->tail[t->ntail - 1];

                memcpy(t->stage, p->stage, sizeof(t->stage));
                memcpy(t->context, p->context, sizeof(t->context));
                row->mem_avail_mb = p->mem_avail_mb;
                row->cpu_pct = p->cpu_pct;
                if (row->running)
                        row->build_mem_mb = p->cg_mem_mb;
                memcpy(t->units, p->running, sizeof(t->units));
                if (t->ntail > 1 && p->elapsed_s > p[-1].elapsed_s)
                        row->psi_mem_pct = (p->cg_psi_mem_some_s - p[-1].cg_psi_mem_some_s) /
                                           (p->elapsed_s - p[-1].elapsed_s) * 100;
                row->near_oom = !isnan(p->mem_avail_mb) && p->mem_avail_mb < t->near_oom_mb;
        }
}

/* Running runs first, then the recent ones, each newest first (as the
 * walk comes): a running run goes in after the running ones before it. */
static int add_run(void *userdata, const struct store_run *r)
{
        struct top_state *s = userdata;
        bool running = r->state == STORE_RUN_RUNNING;
        size_t at = running ? s->n - s->nrecent : s->n;

        if (s->n >= TOP_ROWS_MAX || (!running && s->nrecent >= TOP_RECENT))
                return 0;
        if (!running)
                s->nrecent++;
        memmove(&s->runs[at + 1], &s->runs[at], (s->n - at) * sizeof(s->runs[0]));
        memmove(&s->rows[at + 1], &s->rows[at], (s->n - at) * sizeof(s->rows[0]));
        s->n++;
        fill_row(s, at, r);
        return 0;
}

static int load(struct top_state *s)
{
        int r;

        s->n = s->nrecent = 0;
        /* No history yet: the first run creates it; open it then. */
        if (!s->st && history_store_open(s->db, false, 2000, &s->st) < 0)
                return 0;
        r = store_runs_each(s->st, NAN, 200, add_run, s);
        /* the rows moved point at their runs' strings again */
        for (size_t i = 0; i < s->n; i++) {
                s->rows[i].command = s->runs[i].command;
                s->rows[i].result = s->runs[i].result;
                s->rows[i].stage = s->runs[i].stage;
                s->rows[i].context = s->runs[i].context;
                s->rows[i].units = s->runs[i].units;
        }
        return r < 0 ? r : 0;
}

/* The detail of run i: its targets and the stage/context changes. */
struct detail_buf {
        struct top_target t[TOP_TARGETS_MAX];
        char names[TOP_TARGETS_MAX][96];
        char lines[STORE_TAIL_MAX][200];
        const char *lp[STORE_TAIL_MAX];
        size_t nt, nl;
};

static int add_target(void *userdata, const struct target_fact *t)
{
        struct detail_buf *d = userdata;

        if (d->nt >= TOP_TARGETS_MAX)
                return 0;
        snprintf(d->names[d->nt], sizeof(d->names[0]), "%.*s", (int)sizeof(d->names[0]) - 1,
                 t->name);
        d->t[d->nt] = (struct top_target){.name = d->names[d->nt],
                                          .steps = store_fact_steps(t, false),
                                          .cached = store_fact_steps(t, true),
                                          .duration_s = t->duration_s};
        d->nt++;
        return 0;
}

/* The path is what a database row says: whoever could edit the database
 * chose it. Only the run's own log is read: named build-<run id>.log, a
 * regular file (a FIFO would hang top, a device have side effects), not a
 * symlink, owned by the database's owner (not /etc/shadow for root on
 * another user's database). Returns the fd, or -1: nothing is shown. */
static int open_run_log(const struct top_state *s, const struct top_run *t, bool *ret_gz)
{
        /* the log as it is now: plain while running, maybe .gz once finished */
        _cleanup_free_ char *cur = t->build_log[0] ? logfile_current(t->build_log) : NULL;
        const char *path = cur ? cur : t->build_log, *base = strrchr(path, '/');
        char want[96];
        struct stat st;
        int fd, n;

        base = base ? base + 1 : path;
        n = snprintf(want, sizeof(want), "build-%s.log", t->run_id);
        if (!s->db_owner_known || !t->run_id[0] || n < 0 || (size_t)n + 3 >= sizeof(want))
                return -1;
        *ret_gz = strncmp(base, want, (size_t)n) == 0 && strcmp(base + n, LOGFILE_GZ_SUFFIX) == 0;
        if (strcmp(base, want) != 0 && !*ret_gz)
                return -1;
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -1;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != s->db_owner) {
                close(fd);
                return -1;
        }
        return fd;
}

/* The last 8 KiB of the run's log: a .gz one (finished: it does not
 * change) from the cache after the first read. */
static ssize_t cached_tail(struct top_state *s, const struct top_run *t, char *buf, size_t cap,
                           bool *ret_cut)
{
        struct log_cache *c = &s->logc;
        size_t n = strlen(t->build_log);
        bool gz = false;
        _cleanup_close_ int fd = -1;
        ssize_t got;

        _Static_assert(sizeof(c->buf) == 8192, "the tail's size");
        if (c->path[0] && strcmp(c->path, t->build_log) == 0 && cap == sizeof(c->buf)) {
                memcpy(buf, c->buf, (size_t)c->n);
                *ret_cut = c->cut;
                return c->n;
        }
        fd = open_run_log(s, t, &gz);
        got = fd >= 0 ? logfile_tail_fd(fd, gz, buf, cap, ret_cut) : -ENOENT;
        if (got > 0 && gz && cap == sizeof(c->buf) && n > 0 && n < sizeof(c->path)) {
                memcpy(c->buf, buf, (size_t)got);
                c->n = got;
                c->cut = *ret_cut;
                memcpy(c->path, t->build_log, n + 1);
        }
        return got;
}

/* The last lines of the run's build log (its last 8 KiB; what a terminal
 * shows of a line rewritten with CR) into d, the plain log or its .gz.
 * Returns how many, 0 when the log cannot be read (a watched run has none;
 * the file may be gone). */
static size_t log_tail(struct top_state *s, const struct top_run *t, struct detail_buf *d)
{
        char buf[8192];
        size_t starts[STORE_TAIL_MAX], ends[STORE_TAIL_MAX], n = 0, pos = 0;
        bool cut = false;
        ssize_t got = cached_tail(s, t, buf, sizeof(buf), &cut);

        if (got <= 0)
                return 0;
        if (cut) { /* the first line is cut: skip it */
                const char *nl = memchr(buf, '\n', (size_t)got);

                pos = nl ? (size_t)(nl - buf) + 1 : (size_t)got;
        }
        while (pos < (size_t)got) {
                const char *nl = memchr(buf + pos, '\n', (size_t)got - pos);
                size_t end = nl ? (size_t)(nl - buf) : (size_t)got, start = pos;

                for (size_t k = start; k < end; k++) /* after the last CR that is not last */
                        if (buf[k] == '\r' && k + 1 < end)
                                start = k + 1;
                starts[n % STORE_TAIL_MAX] = start;
                ends[n % STORE_TAIL_MAX] = end;
                n++;
                pos = end + 1;
        }
        for (size_t k = n > STORE_TAIL_MAX ? n - STORE_TAIL_MAX : 0; k < n; k++) {
                size_t i = k % STORE_TAIL_MAX, len = ends[i] - starts[i];

                len = MIN(len, sizeof(d->lines[0]) - 1);
                memcpy(d->lines[d->nl], buf + starts[i], len);
                d->lines[d->nl][len] = '\0';
                d->lp[d->nl] = d->lines[d->nl];
                d->nl++;
        }
        return d->nl;
}

static int detail_frame(struct top_state *s, size_t i, int cols, int lines, bool utf8,
                        struct dbuf *out)
{
        _cleanup_free_ struct detail_buf *d = calloc(1, sizeof(*d));
        const struct top_run *t = &s->runs[i];
        struct top_detail det;
        const char *title = NULL;

        if (!d)
                return -ENOMEM;
        (void)store_targets_each(s->st, t->id, false, 0, add_target, d);
        if (log_tail(s, t, d) > 0)
                title = "LOG";
        for (size_t k = 0; !title && k < t->ntail; k++) {
                const struct store_tail_point *p = &t->tail[k];

                if (k && strcmp(p->stage, t->tail[k - 1].stage) == 0 &&
                    strcmp(p->context, t->tail[k - 1].context) == 0)
                        continue;
                if (isnan(p->elapsed_s)) /* out of range in the row */
                        snprintf(d->lines[d->nl], sizeof(d->lines[0]), "%8s  %s  %s", "-", p->stage,
                                 p->context);
                else
                        snprintf(d->lines[d->nl], sizeof(d->lines[0]), "%7.1fs  %s  %s",
                                 p->elapsed_s, p->stage, p->context);
                d->lp[d->nl] = d->lines[d->nl];
                d->nl++;
        }
        det = (struct top_detail){.row = &s->rows[i],
                                  .targets = d->t,
                                  .ntargets = d->nt,
                                  .lines = d->lp,
                                  .lines_title = title,
                                  .nlines = d->nl,
                                  .peak = t->peak,
                                  .jobs = t->jobs};
        return top_detail_text(&det, cols, lines, utf8, out);
}

/* The refresh interval: the shortest of the running runs', at least 0.5 s. */
static int interval_ms(const struct top_state *s)
{
        double iv = 1.0;
        bool any = false;

        for (size_t i = 0; i < s->n; i++)
                if (s->rows[i].running && !isnan(s->runs[i].interval)) {
                        iv = any ? MIN(iv, s->runs[i].interval) : s->runs[i].interval;
                        any = true;
                }
        return (int)(MAX(iv, 0.5) * 1000);
}

static int once(struct top_state *s, bool utf8)
{
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        struct top_view v = {.rows = s->rows,
                             .nrows = s->n,
                             .empty = s->st ? NULL : s->empty,
                             .selected = SIZE_MAX,
                             .cols = 80,
                             .lines = 1000,
                             .utf8 = utf8};
        const char *c = getenv("COLUMNS");
        uint64_t n;
        int r;

        if (c && parse_u64_str(c, &n) >= 0 && n >= 40 && n <= 1000)
                v.cols = (int)n;
        r = top_frame_text(&v, &out);
        if (r >= 0 && out.p)
                r = write_all(STDOUT_FILENO, out.p, out.len);
        return r < 0 ? 1 : 0;
}

/* --once RUN: that run's detail screen, as Enter shows it. */
static int once_detail(struct top_state *s, const char *spec, bool utf8)
{
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        struct store_run run;
        int64_t id;
        int r = store_run_find(s->st, spec, &id);

        if (r >= 0)
                r = store_run_get(s->st, id, &run);
        if (r < 0) {
                fprintf(stderr, "buildtel top: run '%s': %s\n", spec,
                        r == -ENOENT   ? "not in the history"
                        : r == -EEXIST ? "ambiguous prefix"
                                       : store_strerror(r));
                return 1;
        }
        fill_row(s, 0, &run);
        s->n = 1;
        store_run_release(&run);
        r = detail_frame(s, 0, 100, 1000, utf8, &out);
        if (r >= 0 && out.p)
                r = write_all(STDOUT_FILENO, out.p, out.len);
        return r < 0 ? 1 : 0;
}

static int live(struct top_state *s, bool utf8)
{
        size_t sel = 0;
        bool detail = false;
        struct dbuf out = DBUF_INIT;
        int r = 0;

        if (top_curses_begin() < 0) {
                fprintf(stderr, "buildtel top: cannot start the terminal (TERM?)\n");
                return 1;
        }
        for (;;) {
                struct top_view v = {.rows = s->rows,
                                     .nrows = s->n,
                                     .utf8 = utf8,
                                     .empty = s->st ? NULL : s->empty,
                                     .keys = true};
                enum top_key k;

                top_curses_size(&v.cols, &v.lines);
                sel = s->n ? MIN(sel, s->n - 1) : 0;
                v.selected = sel;
                dbuf_reset(&out);
                r = detail && s->n ? detail_frame(s, sel, v.cols, v.lines, utf8, &out)
                                   : top_frame_text(&v, &out);
                if (r < 0 || !out.p)
                        break;
                top_curses_draw(
                    out.p, detail || !s->n ? -1 : (int)(sel + 2 + (s->rows[sel].running ? 0 : 1)));
                k = top_curses_key(interval_ms(s));
                if (k == TOP_KEY_QUIT)
                        break;
                if (k == TOP_KEY_UP && sel > 0 && !detail)
                        sel--;
                else if (k == TOP_KEY_DOWN && !detail)
                        sel++;
                else if (k == TOP_KEY_ENTER)
                        detail = true;
                else if (k == TOP_KEY_BACK)
                        detail = false;
                r = load(s);
                if (r < 0)
                        break;
        }
        top_curses_end();
        dbuf_release(&out);
        if (r < 0)
                fprintf(stderr, "buildtel top: %s\n", store_strerror(r));
        return r < 0 ? 1 : 0;
}

int cmd_top(int argc, char **argv)
{
        struct common_opts o;
        struct top_state *s;
        struct stat sb;
        int oi, ret;
        bool utf8;

        ret = history_opts_parse("top", argc, argv, &o, &oi);
        if (ret >= 0)
                return ret;
        if (oi != argc && !(o.once && oi == argc - 1)) {
                fprintf(stderr, "buildtel top: one operand (RUN) with --once only; see 'buildtel "
                                "help top'\n");
                return EXIT_BT_USAGE;
        }
        setlocale(LC_ALL, "");
        utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
        s = calloc(1, sizeof(*s));
        if (!s)
                return 1;
        s->db = o.rec.db_path ? strdup(o.rec.db_path) : store_default_path();
        /* Opens empty and waits when no run was recorded yet (a RUN named
         * needs the history: history_open says why it is missing). */
        if (s->db && oi == argc && access(s->db, F_OK) < 0 && errno == ENOENT) {
                snprintf(s->empty, sizeof(s->empty),
                         o.once ? "no run recorded yet (no history at %s)"
                                : "no run recorded yet: waiting for the first (%s)",
                         s->db);
        } else if (history_open("top", o.rec.db_path, false, &s->st)) {
                free(s->db);
                free(s);
                return 1;
        }
        if (s->db && stat(s->db, &sb) == 0) { /* its logs are that user's */
                s->db_owner = sb.st_uid;
                s->db_owner_known = true;
        }
        ret = oi < argc ? 0 : load(s);
        if (ret < 0)
                fprintf(stderr, "buildtel top: cannot read the history: %s\n", store_strerror(ret));
        else
                ret = oi < argc ? once_detail(s, argv[oi], utf8)
                      : o.once  ? once(s, utf8)
                                : live(s, utf8);
        store_close(s->st);
        free(s->db);
        free(s);
        return ret < 0 ? 1 : ret;
}
