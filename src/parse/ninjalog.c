/* SPDX-License-Identifier: MIT */
#include "parse/ninjalog.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "model/figures.h"
#include "model/ranges.h"
#include "model/run.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

struct rec {
        int64_t start, end;
        const char *out, *hash;
        size_t out_len, hash_len;
        const char *mtime;
        size_t mtime_len;
};

static const char *field(const char **cur, const char *end, size_t *ret_len)
{
        const char *s = *cur, *tab = memchr(s, '\t', (size_t)(end - s));
        const char *fe = tab ? tab : end;

        *ret_len = (size_t)(fe - s);
        *cur = tab ? tab + 1 : end;
        return s;
}

/* 1 record, 0 header, -1 other. A bad version header is -2. */
static int parse_line(const char *s, const char *end, struct rec *r)
{
        const char *c = s;
        uint64_t ver;

        if (end > s && end[-1] == '\r')
                end--;
        if (skip_prefix(&c, end, "# ninja log v")) {
                if (parse_u64(&c, end, &ver) < 0 || c != end)
                        return -1;
                return ver >= 5 && ver <= 7 ? 0 : -2;
        }
        if (parse_i64(&c, end, &r->start) < 0 || c >= end || *c++ != '\t' ||
            parse_i64(&c, end, &r->end) < 0 || c >= end || *c++ != '\t')
                return -1;
        /* out of range is junk: end - start must not overflow */
        if (!range_ok_i64(RANGE_MS, r->start) || !range_ok_i64(RANGE_MS, r->end))
                return -1;
        /* its unit differs by platform and version: see struct ninjalog_run */
        r->mtime = field(&c, end, &r->mtime_len);
        if (r->mtime_len == 0 || c >= end)
                return -1;
        r->out = field(&c, end, &r->out_len);
        if (r->out_len == 0 || c >= end)
                return -1;
        r->hash = field(&c, end, &r->hash_len);
        if (r->hash_len == 0 || c != end) /* a tab in it fails the hex below */
                return -1;
        for (size_t i = 0; i < r->hash_len; i++)
                if (!((r->hash[i] >= '0' && r->hash[i] <= '9') ||
                      (r->hash[i] >= 'a' && r->hash[i] <= 'f')))
                        return -1;
        return 1;
}

/* An mtime field as epoch seconds: nanoseconds (ninja >= 1.9 on Linux) or
 * seconds; NAN when it is neither (0 for a missing output, junk). */
static double mtime_epoch(const char *s, size_t n)
{
        const char *p = s;
        uint64_t v;

        if (n > 20 || parse_u64(&p, s + n, &v) < 0 || p != s + n)
                return NAN;
        if (v >= 1000000000ull * 100000000ull && v < 1000000000ull * 10000000000ull)
                return (double)v / 1e9; /* ns: 1973 .. 2286 */
        if (v >= 100000000ull && v < 10000000000ull)
                return (double)v;
        return NAN;
}

static void run_close(struct ninjalog_run *runs, size_t cap, size_t *n, struct ninjalog_run *cur,
                      size_t at)
{
        cur->end = at;
        if (cur->max_end_ms == INT64_MIN)
                return; /* no record */
        if (*n == cap) {
                memmove(runs, runs + 1, (cap - 1) * sizeof(*runs));
                (*n)--;
        }
        runs[(*n)++] = *cur;
}

/* One walk over a log's lines, fed in buffers cut anywhere: every line
 * goes through lines_step(), whether it was whole in a feed or joined
 * across two. */
struct ninjalog_stream {
        /* whether the log is one */
        uint64_t records;
        bool bad_version;
        /* with runs: the runs */
        struct ninjalog_run *runs, cur;
        size_t cap, n;
        /* with fn: the edges (the previous record's hash copied: the line
         * it was in may be gone) */
        ninjalog_edge_fn fn;
        void *userdata;
        uint64_t edges;
        bool have_prev;
        int64_t prev_start, prev_rend;
        struct dbuf prev_hash;
        int err;
        uint64_t at;      /* file offset of the line being joined */
        uint64_t next;    /* of the next byte fed */
        struct dbuf line; /* its bytes so far (NINJALOG_LINE_MAX at most) */
        bool overlong;    /* past NINJALOG_LINE_MAX: junk, dropped to its newline */
};

static void step_edge(struct ninjalog_stream *st, const struct rec *r)
{
        bool same = st->have_prev && r->start == st->prev_start && r->end == st->prev_rend &&
                    r->hash_len == st->prev_hash.len &&
                    memcmp(r->hash, st->prev_hash.p, r->hash_len) == 0;

        if (!same) {
                st->edges++;
                st->fn(st->userdata, r->start, r->end, r->out, r->out_len);
        }
        dbuf_reset(&st->prev_hash);
        if (dbuf_append(&st->prev_hash, r->hash, r->hash_len) < 0) {
                st->err = -ENOMEM;
                return;
        }
        st->prev_start = r->start;
        st->prev_rend = r->end;
        st->have_prev = true;
}

static void step_run(struct ninjalog_stream *st, int k, const struct rec *r, uint64_t at)
{
        if (k == 0 || (k == 1 && st->cur.max_end_ms != INT64_MIN && r->end < st->cur.max_end_ms)) {
                run_close(st->runs, st->cap, &st->n, &st->cur, at);
                st->cur = (struct ninjalog_run){at, 0, INT64_MIN, NAN};
        }
        if (k == 1) {
                double m = mtime_epoch(r->mtime, r->mtime_len) - (double)r->end / 1000.0;

                st->cur.max_end_ms = MAX(st->cur.max_end_ms, r->end);
                if (isfinite(m) && (isnan(st->cur.start_epoch) || m > st->cur.start_epoch))
                        st->cur.start_epoch = m;
        }
}

/* One line [s, le) (no newline) starting at file offset at. */
static void lines_step(struct ninjalog_stream *st, const char *s, const char *le, uint64_t at)
{
        struct rec r;
        int k;

        if (st->bad_version || st->err < 0)
                return;
        k = (size_t)(le - s) > NINJALOG_LINE_MAX ? -1 : parse_line(s, le, &r);
        if (k == -2) {
                st->bad_version = true;
                return;
        }
        st->records += k == 1;
        if (st->runs)
                step_run(st, k, &r, at);
        if (st->fn && k == 1)
                step_edge(st, &r);
}

struct ninjalog_stream *ninjalog_stream_new(uint64_t base, struct ninjalog_run *runs, size_t cap,
                                            ninjalog_edge_fn fn, void *userdata)
{
        struct ninjalog_stream *s = calloc(1, sizeof(*s));

        if (!s || (runs && cap == 0)) {
                free(s);
                return NULL;
        }
        *s = (struct ninjalog_stream){.runs = runs, .cap = cap, .fn = fn, .userdata = userdata};
        s->cur = (struct ninjalog_run){base, 0, INT64_MIN, NAN};
        s->at = s->next = base;
        return s;
}

/* Join buf[0, n) to the line being read. */
static int stream_join(struct ninjalog_stream *s, const char *buf, size_t n)
{
        if (s->overlong || n == 0)
                return 0;
        if (s->line.len + n > NINJALOG_LINE_MAX) {
                s->overlong = true;
                dbuf_reset(&s->line);
                return 0;
        }
        return dbuf_append(&s->line, buf, n);
}

/* The line joined so far is whole. */
static void stream_line(struct ninjalog_stream *s)
{
        if (s->overlong)
                lines_step(s, "", "", s->at); /* junk, as whole */
        else
                lines_step(s, s->line.p, s->line.p + s->line.len, s->at);
        dbuf_reset(&s->line);
        s->overlong = false;
}

int ninjalog_stream_feed(struct ninjalog_stream *s, const char *buf, size_t len)
{
        const char *c = buf, *end = buf + len;

        while (s->err >= 0 && c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;
                int e;

                if (nl && s->line.len == 0 && !s->overlong) {
                        lines_step(s, c, nl, s->at); /* whole in buf: no copy */
                } else {
                        e = stream_join(s, c, (size_t)(le - c));
                        if (e < 0)
                                s->err = e;
                        else if (nl)
                                stream_line(s);
                }
                s->next += (uint64_t)((nl ? nl + 1 : end) - c);
                if (nl)
                        s->at = s->next;
                c = nl ? nl + 1 : end;
        }
        return s->err < 0 ? s->err : 0;
}

int ninjalog_stream_finish(struct ninjalog_stream *s)
{
        if (s->err >= 0 && (s->line.len > 0 || s->overlong))
                stream_line(s); /* the last line, without its newline */
        if (s->err < 0)
                return s->err;
        if (s->bad_version || s->records == 0)
                return -EINVAL;
        if (!s->runs)
                return s->edges > INT32_MAX ? INT32_MAX : (int)s->edges;
        run_close(s->runs, s->cap, &s->n, &s->cur, s->next);
        return (int)s->n;
}

void ninjalog_stream_free(struct ninjalog_stream *s)
{
        if (!s)
                return;
        dbuf_release(&s->prev_hash);
        dbuf_release(&s->line);
        free(s);
}

#define NINJALOG_CHUNK (1u << 20) /* a .ninja_log is read this much at a time */

static int stream_feed(void *userdata, const char *buf, size_t len)
{
        return ninjalog_stream_feed(userdata, buf, len);
}

int ninjalog_read_range(int fd, uint64_t from, uint64_t to, struct ninjalog_run *runs, size_t cap,
                        ninjalog_edge_fn fn, void *userdata)
{
        struct ninjalog_stream *s = ninjalog_stream_new(from, runs, runs ? cap : 0, fn, userdata);
        int e;

        if (!s)
                return -ENOMEM;
        e = pread_chunks(fd, from, to, NINJALOG_CHUNK, stream_feed, s);
        if (e >= 0)
                e = ninjalog_stream_finish(s);
        ninjalog_stream_free(s);
        return e;
}

void ninjalog_file_of(const struct stat *st, struct ninjalog_file *ret)
{
        *ret =
            (struct ninjalog_file){true, (uint64_t)st->st_size, (uint64_t)st->st_ino,
                                   (double)st->st_mtim.tv_sec + (double)st->st_mtim.tv_nsec / 1e9};
}

/* The same file as snap, grown or not. */
static bool appended(const struct ninjalog_file *snap, const struct ninjalog_file *now)
{
        return snap && snap->exists && now->ino == snap->ino && now->size >= snap->size;
}

uint64_t ninjalog_window_scan(const struct ninjalog_file *snap, const struct ninjalog_file *now)
{
        return appended(snap, now) ? snap->size : 0;
}

/* figure_ninja_offset() of a run from start to end. */
static int placed(double mtime, int64_t max_end_ms, double start, double end, double *ret_off,
                  bool *ret_before)
{
        const struct run_info ri = {.start_epoch = start, .end_epoch = end};

        return figure_ninja_offset(&ri, mtime, max_end_ms, ret_off, ret_before);
}

/* The newest run started in [start - 2, end + 1], or -1; *ret_dated:
 * whether any run says when it started. */
static long started_in(const struct ninjalog_run *runs, size_t n, double start, double end,
                       bool *ret_dated)
{
        double until = isfinite(end) ? end + 1.0 : INFINITY;

        *ret_dated = false;
        for (size_t i = n; i-- > 0;) {
                if (!isfinite(runs[i].start_epoch))
                        continue;
                *ret_dated = true;
                if (runs[i].start_epoch >= start - 2 && runs[i].start_epoch <= until)
                        return (long)i;
        }
        return -1;
}

void ninjalog_window(const struct ninjalog_file *snap, const struct ninjalog_file *now,
                     const struct ninjalog_run *runs, size_t n, double start, double end,
                     struct ninjalog_pick *ret)
{
        bool dated, before = false;
        double off;
        long at;

        *ret = (struct ninjalog_pick){NINJALOG_UNCHANGED, now->size, now->size, 0, 0, INFINITY};
        if (n == 0 || (appended(snap, now) && now->size == snap->size))
                return;
        if (snap) {
                ret->why = appended(snap, now) ? NINJALOG_TAIL
                           : snap->exists      ? NINJALOG_REPLACED
                                               : NINJALOG_NEW;
                ret->first = ret->why == NINJALOG_REPLACED ? n - 1 : 0;
                ret->n = n - ret->first;
                ret->from = ret->why == NINJALOG_REPLACED ? runs[n - 1].begin
                                                          : ninjalog_window_scan(snap, now);
                ret->to = ret->why == NINJALOG_REPLACED ? runs[n - 1].end : now->size;
                return;
        }
        at = started_in(runs, n, start, end, &dated);
        ret->why = at >= 0 ? NINJALOG_WINDOW : dated ? NINJALOG_NOT_IN : NINJALOG_UNDATED;
        if (!dated && placed(now->mtime, runs[n - 1].max_end_ms, start, end, &off, &before) < 0)
                ret->why = before ? NINJALOG_BEFORE : NINJALOG_AFTER;
        if (ret->why != NINJALOG_WINDOW && ret->why != NINJALOG_UNDATED)
                return;
        at = at >= 0 ? at : (long)n - 1;
        ret->from = runs[at].begin;
        ret->to = runs[at].end;
        ret->first = (size_t)at;
        ret->n = 1;
        ret->until_s = isfinite(end) ? end - start + FIGURE_NINJA_SLACK_S : INFINITY;
}

double ninjalog_run_offset(const struct ninjalog_run *runs, size_t n, size_t i, double mtime,
                           double start, double end)
{
        double off;

        if (i + 1 == n && placed(mtime, runs[i].max_end_ms, start, end, &off, NULL) == 0)
                return off;
        return isfinite(runs[i].start_epoch) ? MAX(runs[i].start_epoch - start, 0.0) : NAN;
}

int ninjalog_window_read(int fd, const struct ninjalog_file *snap, const struct ninjalog_file *now,
                         double start, double end, struct ninjalog_run *runs,
                         struct ninjalog_pick *ret)
{
        uint64_t from = ninjalog_window_scan(snap, now);
        int n = 0;

        if (!appended(snap, now) || now->size > snap->size)
                n = ninjalog_read_range(fd, from, now->size, runs, NINJALOG_RUNS_MAX, NULL, NULL);
        if (n < 0)
                return n;
        ninjalog_window(snap, now, runs, (size_t)n, start, end, ret);
        return n;
}
