/* SPDX-License-Identifier: MIT */
#include "view/top.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/run.h"
#include "util/macro.h"
#include "util/util.h"

static const char *const spark_utf8[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                         "\u2585", "\u2586", "\u2587", "\u2588"};
static const char spark_ascii[] = " .:-=+*#";

int top_sparkline(const double *v, size_t n, size_t width, bool utf8, struct dbuf *out)
{
        size_t first = n > width ? n - width : 0;
        double lo = INFINITY, hi = -INFINITY;
        int r = 0;

        /* an infinity would make the scale NAN, and a NAN level UB */
        for (size_t i = first; i < n; i++) {
                if (!isfinite(v[i]))
                        continue;
                lo = MIN(lo, v[i]);
                hi = MAX(hi, v[i]);
        }
        for (size_t i = first; i < n && r >= 0; i++) {
                int level;

                if (!isfinite(v[i])) {
                        r = dbuf_puts(out, " ");
                        continue;
                }
                level = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
                level = level < 0 ? 0 : level > 7 ? 7 : level;
                r = utf8 ? dbuf_puts(out, spark_utf8[level])
                         : dbuf_append(out, &spark_ascii[level], 1);
        }
        for (size_t i = n - first; i < width && r >= 0; i++)
                r = dbuf_puts(out, " ");
        return r;
}

/* s (the build's: a command line, a stage) in w columns, cleaned for the
 * terminal the one way (model/run.h), cut between characters or padded. */
static int put_cell(struct dbuf *out, const char *s, size_t w)
{
        _cleanup_dbuf_ struct dbuf clean = DBUF_INIT;
        size_t col = 0;
        int r = run_append_utf8_lossy(&clean, s ? s : "", s ? strlen(s) : 0, true);

        for (const unsigned char *p = (const unsigned char *)clean.p; r >= 0 && p && *p; p++) {
                bool cont = (*p & 0xc0) == 0x80;

                if (!cont && col == w)
                        break;
                r = dbuf_append(out, p, 1);
                col += !cont;
        }
        for (; col < w && r >= 0; col++)
                r = dbuf_puts(out, " ");
        return r;
}

/* A share in its column's 4 cells: 0 to 999 %, "-" unknown. */
static void fmt_pct(double v, char *buf, size_t len)
{
        if (isnan(v))
                snprintf(buf, len, "-");
        else
                snprintf(buf, len, "%.0f%%", MAX(MIN(v, 999.0), 0.0));
}

/* Columns: the fixed ones, then the command and the stage/context share
 * what is left; the sparkline only when there is room. */
struct layout {
        size_t cmd, state, elapsed, avail, spark, used, cpu, psi, oom, stage;
};

static void layout_of(int cols, struct layout *l)
{
        size_t w = cols > 20 ? (size_t)cols : 20;
        size_t fixed;

        *l = (struct layout){
            .state = 10, .elapsed = 7, .avail = 8, .used = 8, .cpu = 4, .psi = 4, .oom = 3};
        fixed = 2 + l->state + 1 + l->elapsed + 1 + l->avail + 1 + l->used + 1 + l->cpu + 1 +
                l->psi + 1 + l->oom + 1;
        l->spark = w >= fixed + 28 ? MIN((size_t)14, w - fixed - 24) : 0;
        fixed += l->spark ? l->spark + 1 : 0;
        if (w <= fixed + 10) {
                l->cmd = MAX((size_t)12, w > fixed ? w - fixed : 0);
                return; /* no stage column */
        }
        l->cmd = (w - fixed) * 2 / 5;
        l->stage = w - fixed - l->cmd - 1;
}

/* Trailing blanks off the line just written, then a newline. */
static int end_line(struct dbuf *out)
{
        while (out->len > 0 && out->p[out->len - 1] == ' ')
                out->len--;
        return dbuf_puts(out, "\n");
}

/* A line of the table, ended: the header (row NULL) or a row. */
static int row_line(struct dbuf *out, const struct top_row *row, bool sel, const struct layout *l,
                    bool utf8)
{
        char el[32] = "ELAPSED", av[32] = "AVAIL", us[32] = "BUILD", cpu[32] = "CPU",
             psi[32] = "PSI", sc[256] = "STAGE / CONTEXT", oom[16] = "OOM";
        const char *cmd = "COMMAND", *state = "STATE";
        int r;

        if (row) {
                /* a finished run's OOM kills; a running one's near-OOM */
                oom[0] = '\0';
                if (!row->running && row->oom_kills > 0)
                        snprintf(oom, sizeof(oom), "%.0f", MIN(row->oom_kills, 999.0));
                else if (row->running && row->near_oom)
                        snprintf(oom, sizeof(oom), "!!");
                (void)fmt_duration(row->elapsed_s, FMT_DURATION_COMPACT, el);
                fmt_size_mib(row->mem_avail_mb, av, sizeof(av));
                fmt_size_mib(row->build_mem_mb, us, sizeof(us));
                fmt_pct(row->psi_mem_pct, psi, sizeof(psi));
                fmt_pct(row->cpu_pct, cpu, sizeof(cpu));
                snprintf(sc, sizeof(sc), "%s%s%s", row->stage ? row->stage : "",
                         row->stage && *row->stage && row->context && *row->context ? " / " : "",
                         row->context ? row->context : "");
                cmd = row->command;
                state = row->running ? "running" : row->result;
        }
        r = dbuf_puts(out, sel ? "> " : "  ");
        r = r >= 0 ? put_cell(out, cmd, l->cmd) : r;
        r = r >= 0 ? dbuf_puts(out, " ") : r;
        r = r >= 0 ? put_cell(out, state, l->state) : r;
        r = r >= 0 ? dbuf_printf(out, " %-*s %-*s ", (int)l->elapsed, el, (int)l->avail, av) : r;
        if (r >= 0 && l->spark) {
                r = row ? top_sparkline(row->spark, row->nspark, l->spark, utf8, out)
                        : put_cell(out, "TREND", l->spark);
                r = r >= 0 ? dbuf_puts(out, " ") : r;
        }
        r = r >= 0 ? dbuf_printf(out, "%-*s %-*s %-*s %-*s", (int)l->used, us, (int)l->cpu, cpu,
                                 (int)l->psi, psi, (int)l->oom, oom)
                   : r;
        if (r >= 0 && l->stage)
                r = dbuf_puts(out, " ") >= 0 ? put_cell(out, sc, l->stage) : -ENOMEM;
        return r >= 0 ? end_line(out) : r;
}

/* A line of prefix and s in w columns. */
static int put_line(struct dbuf *out, const char *prefix, const char *s, size_t w)
{
        int r = dbuf_puts(out, prefix);

        r = r >= 0 ? put_cell(out, s, w) : r;
        return r >= 0 ? end_line(out) : r;
}

/* The rows of one section ("running" or recent) while lines last. */
static int section(struct dbuf *out, const struct top_view *v, bool running, const struct layout *l,
                   int *left)
{
        int r = 0;

        for (size_t i = 0; i < v->nrows && r >= 0 && *left > 0; i++) {
                if (v->rows[i].running != running)
                        continue;
                r = row_line(out, &v->rows[i], i == v->selected, l, v->utf8);
                (*left)--;
        }
        return r;
}

static int frame_text(const struct top_view *v, struct dbuf *out)
{
        struct layout l;
        size_t nrun = 0;
        int left = v->lines > 4 + v->keys ? v->lines - 4 - v->keys : 1, r;

        layout_of(v->cols, &l);
        for (size_t i = 0; i < v->nrows; i++)
                nrun += v->rows[i].running;
        r = dbuf_printf(out, "buildtel top: %zu running, %zu recent\n", nrun, v->nrows - nrun);
        r = r >= 0 ? row_line(out, NULL, false, &l, v->utf8) : r;
        if (r >= 0 && v->nrows == 0)
                r = dbuf_printf(out, "%s\n", v->empty ? v->empty : "no runs recorded");
        r = r >= 0 ? section(out, v, true, &l, &left) : r;
        if (r >= 0 && left > 0 && nrun < v->nrows) {
                r = dbuf_puts(out, "-- recent --\n");
                left--;
        }
        r = r >= 0 ? section(out, v, false, &l, &left) : r;
        if (r >= 0 && v->keys)
                r = dbuf_puts(out, v->nrows
                                       ? "keys: up/down select, Enter details, Esc back, q quit\n"
                                       : "keys: q quit\n");
        return r;
}

static int detail_targets(const struct top_detail *d, size_t w, int *left, struct dbuf *out)
{
        int r = dbuf_puts(out, "TARGETS (steps done / cached)\n");

        (*left)--;
        if (r >= 0 && d->ntargets == 0 && *left > 0) {
                r = dbuf_puts(out, "  none reported yet\n");
                (*left)--;
        }
        for (size_t i = 0; i < d->ntargets && r >= 0 && *left > 0; i++) {
                const struct top_target *t = &d->targets[i];
                char fig[128], dur[32];

                (void)fmt_duration(t->duration_s, FMT_DURATION_COMPACT, dur);
                if (t->steps >= 0)
                        snprintf(fig, sizeof(fig), "%lld / %lld cached  %s", (long long)t->steps,
                                 (long long)(t->cached >= 0 ? t->cached : 0), dur);
                else
                        snprintf(fig, sizeof(fig), "-  %s", dur);
                r = dbuf_puts(out, "  ");
                r = r >= 0 ? put_cell(out, t->name, w > 30 ? w - 30 : w / 2) : r;
                r = r >= 0 ? dbuf_printf(out, " %s", fig) : r;
                r = r >= 0 ? end_line(out) : r;
                (*left)--;
        }
        return r;
}

static int detail_text(const struct top_detail *d, int cols, int lines, bool utf8, struct dbuf *out)
{
        size_t w = cols > 20 ? (size_t)cols : 20;
        int left = lines > 2 ? lines - 1 : 1, r;
        size_t first;

        r = put_line(out, "run: ", d->row->command, w - 5);
        left--;
        if (r >= 0 && left > 0) {
                struct layout l;

                layout_of(cols, &l);
                r = row_line(out, d->row, false, &l, utf8);
                left--;
        }
        if (r >= 0 && left > 0) {
                r = put_line(out, "UNITS running: ",
                             d->row->units && *d->row->units ? d->row->units : "-", w - 15);
                left--;
        }
        for (int k = 0; k < 2 && r >= 0 && left > 1; k++) {
                const char *v = k == 0 ? d->peak : d->jobs;

                if (!v || !*v)
                        continue;
                r = put_line(out, k == 0 ? "PEAK " : "JOBS ", v, w - 5);
                left--;
        }
        if (r >= 0 && left > 1)
                r = detail_targets(d, w, &left, out);
        if (r >= 0 && left > 1) {
                r = dbuf_printf(out, "%s\n", d->lines_title ? d->lines_title : "RECENT");
                left--;
        }
        first = d->nlines > (size_t)MAX(left, 0) ? d->nlines - (size_t)MAX(left, 0) : 0;
        for (size_t i = first; i < d->nlines && r >= 0 && left > 0; i++, left--)
                r = put_line(out, "  ", d->lines[i], w - 2);
        return r;
}

/* Each line of src cut to cols columns (never inside a UTF-8 sequence). */
static int cut_lines(const struct dbuf *src, int cols, struct dbuf *out)
{
        size_t w = cols > 1 ? (size_t)cols : 1;
        int r = 0;

        for (size_t i = 0; i < src->len && r >= 0;) {
                size_t col = 0, start = i;

                while (i < src->len && src->p[i] != '\n') {
                        bool lead = ((unsigned char)src->p[i] & 0xc0) != 0x80;

                        if (lead && col == w)
                                break;
                        col += lead;
                        i++;
                }
                r = dbuf_append(out, src->p + start, i - start);
                r = r >= 0 ? end_line(out) : r;
                while (i < src->len && src->p[i] != '\n')
                        i++;
                i++;
        }
        return r;
}

int top_frame_text(const struct top_view *v, struct dbuf *out)
{
        _cleanup_dbuf_ struct dbuf tmp = DBUF_INIT;
        int r = frame_text(v, &tmp);

        return r >= 0 ? cut_lines(&tmp, v->cols, out) : r;
}

int top_detail_text(const struct top_detail *d, int cols, int lines, bool utf8, struct dbuf *out)
{
        _cleanup_dbuf_ struct dbuf tmp = DBUF_INIT;
        int r = detail_text(d, cols, lines, utf8, &tmp);

        return r >= 0 ? cut_lines(&tmp, cols, out) : r;
}
