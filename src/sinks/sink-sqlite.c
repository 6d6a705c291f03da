/* SPDX-License-Identifier: MIT */
/* The run history database (store.h): the run's row at start, its samples
 * in batched transactions, its end, summary and targets at finish.
 *
 * The database must never fail or slow the build. Every wait for its lock
 * is short while the build runs (STORE_BUSY_RUN_MS, then the rows stay
 * pending and the next flush tries again) and longer only at the end,
 * when the build is over. Pending rows are capped. When the database
 * cannot be used (locked past the end, full, unwritable, corrupt) the sink
 * warns exactly once and carries on without it: the other sinks and the
 * build are not affected. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runfiles/names.h"
#include "model/targets.h"
#include "model/units.h"
#include "sinks/logfile.h"
#include "sinks/sink.h"
#include "render/summary.h"
#include "store/history.h"
#include "store/store.h"
#include "util/macro.h"
#include "util/util.h"

#define STORE_BUSY_RUN_MS 100     /* per attempt while the build runs */
#define STORE_BUSY_FINISH_MS 3000 /* at the end */
#define FLUSH_ROWS 256            /* a transaction per this many rows... */
#define FLUSH_SECONDS 2.0         /* ...or this often, whichever first */
#define PENDING_ROWS_MAX 8192     /* rows kept while the database is busy */
#define PENDING_BYTES_MAX (8u << 20)

/* A sample waiting for its transaction. Its strings (text columns, in
 * column order, each NUL-terminated) start at text_off in the state's text
 * buffer: pointers would not survive the buffer growing. */
struct pending_row {
        struct sample s;
        size_t text_off;
};

enum phase {
        PHASE_OPEN,      /* database not open yet (busy so far) */
        PHASE_BEGIN,     /* open; the run row not inserted yet */
        PHASE_RECORDING, /* rows go in */
        PHASE_OFF,       /* --no-db, or given up (warned) */
};

struct sqlite_state {
        enum phase phase;
        bool unmarked;              /* the database failed; its running row not yet marked so */
        bool full;                  /* ...because its file system is full */
        int reserve_fd;             /* room held on the database's file system; -1: none */
        struct store_recorder self; /* who writes the running row (sink_ctx) */
        char *path;
        const struct run_info *run;
        note_fn warn;
        void *warn_userdata;
        struct store *st;
        struct store_run_extra extra;
        char *build_log; /* where the run's build log is written */
        char builder[128];
        int64_t run_id;
        uint64_t seq; /* of the next row to insert */
        /* Samples not in the database yet, as the recorder handed them
         * (numbers as read); their strings are copied into text. */
        struct pending_row *pending;
        size_t npending, cap;
        struct dbuf text;
        uint64_t dropped;
        double last_flush;         /* the last attempt */
        bool tried, busy;          /* an attempt was made; the last one found the lock */
        const struct summary *sum; /* the model's (recorder), for the running row */
};

static void drop_pending(struct sqlite_state *s)
{
        free(s->pending);
        s->pending = NULL;
        s->npending = s->cap = 0;
        dbuf_release(&s->text);
}

/* Hold a little room on the database's file system, as an unlinked file
 * (O_TMPFILE: the kernel frees it whatever happens to us), before the run
 * row goes in. When the disk fills mid-run, freeing it lets the row be
 * marked 'disk-full', so it never reads as 'incomplete' (a killed
 * buildtel). Returns the fd; -ENOSPC when the room is not there (then no
 * row is written); another -errno when the file system cannot hold one
 * (the row goes in without). */
#define RESERVE_BYTES (128 << 10)
static int reserve_open(const char *db_path)
{
        _cleanup_free_ char *dir = strdup(db_path);
        _cleanup_close_ int fd =
            dir ? open(dirname(dir), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
        int e;

        if (fd < 0)
                return dir ? -errno : -ENOMEM;
        e = posix_fallocate(fd, 0, RESERVE_BYTES);
        if (e == EDQUOT)
                e = ENOSPC;
        return e ? -e : TAKE_FD(fd);
}

static void give_up(struct sqlite_state *s, int e)
{
        if (s->phase == PHASE_OFF)
                return;
        if (s->st)
                store_rollback(s->st);
        /* The start row is in: make it say what happened (not 'incomplete') */
        closep(&s->reserve_fd); /* the room for the mark on a full disk */
        s->full = e == -ENOSPC;
        s->unmarked = s->st && s->phase == PHASE_RECORDING &&
                      store_run_mark_unrecorded(s->st, s->run_id, s->full) < 0;
        note_to(s->warn, s->warn_userdata,
                "history database '%s': %s; this run is not in the history%s%s%s", s->path,
                store_strerror(e), s->phase != PHASE_RECORDING ? "" : " (its row reads as ",
                s->phase != PHASE_RECORDING ? ""
                : s->unmarked
                    ? "incomplete until the end of the build"
                    : store_run_state_name(s->full ? STORE_RUN_DISK_FULL : STORE_RUN_UNRECORDED),
                s->phase != PHASE_RECORDING ? "" : ")");
        s->phase = PHASE_OFF;
        drop_pending(s);
}

/* A transient failure (the lock) keeps the rows for the next attempt;
 * anything else ends the history of this run. Returns false when given
 * up. */
static bool handle(struct sqlite_state *s, int e, bool final)
{
        if (e >= 0 || (e == -EBUSY && !final))
                return true;
        give_up(s, e);
        return false;
}

/* Move through the phases as far as the database lets us. */
static int advance(struct sqlite_state *s, int busy_ms)
{
        int e;

        if (s->phase == PHASE_OPEN) {
                e = store_open(s->path, true, busy_ms, &s->st);
                if (e < 0)
                        return e;
                s->phase = PHASE_BEGIN;
        }
        store_set_busy_timeout(s->st, busy_ms);
        if (s->phase == PHASE_BEGIN) {
                struct store_recorder rec = s->self;

                if (s->reserve_fd < 0) {
                        e = reserve_open(s->path);
                        if (e == -ENOSPC)
                                return e; /* no room to mark the row if it fills: no row */
                        s->reserve_fd = e >= 0 ? e : -1;
                }
                targets_guess_builder(s->run, s->builder, sizeof(s->builder));
                s->extra.builder = s->builder[0] ? s->builder : NULL;
                s->extra.vcs_rev = s->run->vcs_rev;
                s->extra.vcs_ref = s->run->vcs_rev ? s->run->vcs_ref : NULL;
                e = store_run_begin(s->st, s->run, &s->extra, &rec, &s->run_id);
                if (e < 0)
                        return e;
                s->phase = PHASE_RECORDING;
        }
        return 0;
}

/* Insert the pending rows and the running figures in one transaction. */
static int flush(struct sqlite_state *s, int busy_ms)
{
        uint64_t seq = s->seq;
        int e;

        e = advance(s, busy_ms);
        if (e < 0)
                return e;
        e = store_begin(s->st);
        if (e < 0)
                return e;
        for (size_t k = 0; e >= 0 && k < s->npending; k++) {
                struct sample smp = s->pending[k].s;
                size_t pos = s->pending[k].text_off;

                for (size_t i = 0; i < sample_column_count(); i++) {
                        enum sample_column_type t;

                        (void)sample_column_name(i, &t);
                        if (t != SAMPLE_COLUMN_TEXT)
                                continue;
                        (void)sample_column_set_text(&smp, i, s->text.p + pos);
                        pos += strlen(s->text.p + pos) + 1;
                }
                e = store_sample_insert(s->st, s->run_id, seq++, &smp);
        }
        if (e >= 0 && s->sum)
                e = store_run_update(s->st, s->run_id, NULL, s->sum, NULL, s->dropped);
        if (e >= 0)
                e = store_commit(s->st);
        if (e < 0) {
                store_rollback(s->st);
                return e;
        }
        s->seq = seq;
        dbuf_reset(&s->text);
        s->npending = 0;
        return 0;
}

/* The build log's path as `top` in any directory can open it: a relative
 * log directory is taken from where buildtel runs. NULL when unknown. */
static char *build_log_path(const struct sink_ctx *ctx)
{
        _cleanup_free_ char *p =
            ctx->log_dir ? runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_BUILD_LOG) : NULL;
        _cleanup_free_ char *cwd = NULL;
        char *abs;

        if (!p || p[0] == '/')
                return TAKE_PTR(p);
        cwd = getcwd(NULL, 0);
        return cwd && asprintf(&abs, "%s/%s", cwd, p) >= 0 ? abs : NULL;
}

static int sqlite_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct sqlite_state *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->phase = PHASE_OFF;
        s->reserve_fd = -1;
        *ret_state = s;
        if (!ctx->db_path)
                return 0;
        s->path = strdup(ctx->db_path);
        if (!s->path)
                return 0; /* no memory for the history: the rest goes on */
        s->run = ctx->run;
        if (ctx->recorder)
                s->self = *ctx->recorder;
        s->build_log = build_log_path(ctx); /* NULL: not stored */
        s->extra.build_log = s->build_log;
        s->warn = ctx->warn;
        s->warn_userdata = ctx->warn_userdata;

        /* The database is opened and the run row inserted with the first
         * sample (the baseline, taken at once), not here: the recorder's
         * clock starts after the sinks are open. */
        s->phase = PHASE_OPEN;
        s->last_flush = now_monotonic();
        return 0;
}

/* Keep smp (its numbers, and its strings copied) for the next flush.
 * Returns 0 or -ENOMEM (the row is dropped). */
static int keep(struct sqlite_state *s, const struct sample *smp)
{
        struct pending_row *row;
        size_t old = s->text.len;
        int e = 0;

        if (array_grow(&s->pending, &s->cap, s->npending, sizeof(*s->pending), 64) < 0)
                return -ENOMEM;
        for (size_t i = 0; e >= 0 && i < sample_column_count(); i++) {
                size_t len;
                const char *v = sample_column_text(smp, i, &len);

                if (!v)
                        continue; /* not a text column */
                e = dbuf_append(&s->text, v, len);
                if (e >= 0)
                        e = dbuf_append(&s->text, "", 1); /* its NUL */
        }
        if (e < 0) {
                s->text.len = old;
                return e;
        }
        row = &s->pending[s->npending++];
        row->s = *smp;
        row->text_off = old;
        return 0;
}

static void sqlite_sample(void *state, const struct sample *smp, const struct run_model *m)
{
        struct sqlite_state *s = state;

        if (s->phase == PHASE_OFF)
                return;
        s->sum = m->summary;
        if (s->npending >= PENDING_ROWS_MAX ||
            s->npending * sizeof(struct pending_row) + s->text.len > PENDING_BYTES_MAX) {
                /* Busy for this long: stop holding rows. */
                give_up(s, -EBUSY);
                return;
        }
        if (keep(s, smp) < 0) {
                s->dropped++;
                return;
        }
        /* Attempts are spaced while the lock is taken: each may wait up to
         * STORE_BUSY_RUN_MS, and the build's output waits with it. */
        if (!s->tried || (s->npending >= FLUSH_ROWS && !s->busy) ||
            now_monotonic() - s->last_flush >= FLUSH_SECONDS) {
                int e = flush(s, STORE_BUSY_RUN_MS);

                s->tried = true;
                s->busy = e == -EBUSY;
                s->last_flush = now_monotonic();
                (void)handle(s, e, false);
        }
}

/* The per-target figures of the model (targets_facts()). */
static int store_targets(struct sqlite_state *s, const struct run_facts *f)
{
        for (size_t i = 0; i < f->n; i++) {
                int e = store_target_insert(s->st, s->run_id, &f->t[i]);

                if (e < 0)
                        return e;
        }
        return store_run_set_steps(s->st, s->run_id, f->steps_set ? (int64_t)f->steps : -1,
                                   f->steps_set ? (int64_t)f->cached : -1);
}

/* What the log says about the run that argv and .git did not: the
 * BuildKit builder it named ("#0 building with "X" instance", or a bake
 * metadata file), and the revision of the build context from buildx
 * history when the working directory is not a git checkout. */
static int store_log_facts(struct sqlite_state *s, const struct run_model *m)
{
        const struct targets *ts = m->targets;
        struct store_run_extra x = {0};

        /* sink-buildlog, before this one, may have compressed the log */
        _cleanup_free_ char *log = s->build_log ? logfile_settled(s->build_log) : NULL;

        if (log && strcmp(log, s->build_log) != 0) {
                x.build_log = log;
                int e = store_run_set_extra(s->st, s->run_id, &x);
                if (e < 0)
                        return e;
                x.build_log = NULL;
        }
        if (!ts)
                return 0;
        x.builder = m->facts->builder[0] ? m->facts->builder : NULL;
        for (size_t i = 0; !s->run->vcs_rev && !x.vcs_rev && i < ts->n; i++)
                if (ts->t[i].history_set && ts->t[i].history_vcs_revision[0])
                        x.vcs_rev = ts->t[i].history_vcs_revision;
        if (!x.builder && !x.vcs_rev)
                return 0;
        return store_run_set_extra(s->st, s->run_id, &x);
}

static int store_cc_block(struct sqlite_state *s, enum cc_tool tool, const struct cc_block *b,
                          const char *origin)
{
        const struct store_cache_snapshot c = {
            .taken_epoch = s->run->start_epoch + b->seen,
            .tool = targets_cc_tool_name(tool),
            .origin = origin,
            .run = s->run_id,
            .hits = (int64_t)MIN(b->hits, (uint64_t)INT64_MAX),
            .misses = (int64_t)MIN(b->misses, (uint64_t)INT64_MAX),
            .size_bytes = b->size_bytes,
            .max_size_bytes = b->max_size_bytes,
            .files = b->files,
            .version = b->version[0] ? b->version : NULL,
        };

        return store_cache_snapshot_insert(s->st, &c);
}

/* The compiler-cache stats blocks the log printed: the first and the last
 * of each tool, as snapshots of this run. Never by running the tools
 * here: `sccache --show-stats` would start a server. */
static int store_cc_blocks(struct sqlite_state *s, const struct targets *ts)
{
        for (int tool = 0; ts && tool < CC_TOOLS; tool++) {
                const struct cc_blocks *c = targets_cc_blocks(ts, (enum cc_tool)tool);
                int e = 0;

                if (!c)
                        continue;
                if (c->blocks > 1)
                        e = store_cc_block(s, (enum cc_tool)tool, &c->first, "log-first");
                if (e >= 0)
                        e = store_cc_block(s, (enum cc_tool)tool, &c->last, "log-last");
                if (e < 0)
                        return e;
        }
        return 0;
}

static int sqlite_finish(void *state, const struct run_model *m)
{
        struct sqlite_state *s = state;
        _cleanup_dbuf_ struct dbuf json = DBUF_INIT;
        int e;

        /* a row left unmarked at the failure: once more, the build over */
        if (s->phase == PHASE_OFF && s->unmarked &&
            store_run_mark_unrecorded(s->st, s->run_id, s->full) >= 0)
                s->unmarked = false;
        if (s->phase == PHASE_OFF)
                return 0;
        s->sum = m->summary;
        e = flush(s, STORE_BUSY_FINISH_MS);
        if (e >= 0)
                e = render_summary_json(m->summary, m->run, &json);
        if (e >= 0)
                e = store_begin(s->st);
        if (e >= 0) {
                e = store_run_update(s->st, s->run_id, m->run, m->summary, json.p, s->dropped);
                if (e >= 0)
                        e = store_targets(s, m->facts);
                if (e >= 0)
                        e = store_log_facts(s, m);
                if (e >= 0)
                        e = store_cc_blocks(s, m->targets);
                if (e >= 0 && m->units) { /* it had process scans */
                        size_t n;
                        const struct unit *rows = units_rows(m->units, &n);

                        e = store_units_insert(s->st, s->run_id, rows, n);
                }
                if (e >= 0 && m->targets)
                        e = store_steps_insert(s->st, s->run_id, m->targets);
                if (e >= 0 && m->targets)
                        e = store_edges_insert(s->st, s->run_id, m->targets);
                if (e >= 0)
                        e = store_commit(s->st);
                if (e < 0)
                        store_rollback(s->st);
        }
        (void)handle(s, e, true);
        return 0;
}

static void sqlite_close(void *state)
{
        struct sqlite_state *s = state;

        store_close(s->st);
        closep(&s->reserve_fd);
        drop_pending(s);
        free(s->path);
        free(s->build_log);
        free(s);
}

const struct sink_ops sink_sqlite = {
    .name = "history",
    .open = sqlite_open,
    .sample = sqlite_sample,
    .finish = sqlite_finish,
    .close = sqlite_close,
};
