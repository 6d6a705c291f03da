/* SPDX-License-Identifier: MIT */
#include "view/top.h"

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

/* s (the build's: a command line, a stage) in width columns, cleaned for
 * the terminal the one way (model/run.h), cut between characters or padded. */
static void put_cell(struct dwriter *w, const char *s, size_t width)
{
        _cleanup_dbuf_ struct dbuf clean = DBUF_INIT;
        size_t col = 0;

        dw_check(w, run_append_utf8_lossy(&clean, s ? s : "", s ? strlen(s) : 0, true));
        for (const unsigned char *p = (const unsigned char *)clean.p; dw_ok(w) && p && *p; p++) {
                bool cont = (*p & 0xc0) == 0x80;

                if (!cont && col == width)
                        break;
                dw_append(w, p, 1);
                col += !cont;
        }
        for (; col < width && dw_ok(w); col++)
                dw_puts(w, " ");
}

/* A share in its column's 4 cells: 0 to 999 %, "-" unknown. */
static void fmt_pct(double v, char *buf, size_t len)
{
        snprintf(buf, len, isnan(v) ? "-" : "%.0f%%", MAX(MIN(v, 999.0), 0.0));
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
static void end_line(struct dwriter *w)
{
        while (w->b->len > 0 && w->b->p[w->b->len - 1] == ' ')
                w->b->len--;
        dw_puts(w, "\n");
}

/* A line of the table, ended: the header (row NULL) or a row. */
static void row_line(struct dwriter *w, const struct top_row *row, bool sel, const struct layout *l,
                     bool utf8)
{
        char el[32] = "ELAPSED", av[32] = "AVAIL", us[32] = "BUILD", cpu[32] = "CPU",
             psi[32] = "PSI", sc[256] = "STAGE / CONTEXT", oom[16] = "OOM";
        const char *cmd = "COMMAND", *state = "STATE";

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
        dw_puts(w, sel ? "> " : "  ");
        put_cell(w, cmd, l->cmd);
        dw_puts(w, " ");
        put_cell(w, state, l->state);
        dw_printf(w, " %-*s %-*s ", (int)l->elapsed, el, (int)l->avail, av);
        if (l->spark && dw_ok(w)) {
                if (row)
                        dw_check(w, top_sparkline(row->spark, row->nspark, l->spark, utf8, w->b));
                else
                        put_cell(w, "TREND", l->spark);
                dw_puts(w, " ");
        }
        dw_printf(w, "%-*s %-*s %-*s %-*s", (int)l->used, us, (int)l->cpu, cpu, (int)l->psi, psi,
                  (int)l->oom, oom);
        if (l->stage) {
                dw_puts(w, " ");
                put_cell(w, sc, l->stage);
        }
        end_line(w);
}

/* A line of prefix and s in width columns. */
static void put_line(struct dwriter *w, const char *prefix, const char *s, size_t width)
{
        dw_puts(w, prefix);
        put_cell(w, s, width);
        end_line(w);
}

/* The rows of one section ("running" or recent) while lines last. */
static void section(struct dwriter *w, const struct top_view *v, bool running,
                    const struct layout *l, int *left)
{
        for (size_t i = 0; i < v->nrows && dw_ok(w) && *left > 0; i++) {
                if (v->rows[i].running != running)
                        continue;
                row_line(w, &v->rows[i], i == v->selected, l, v->utf8);
                (*left)--;
        }
}

static void frame_text(const struct top_view *v, struct dwriter *w)
{
        struct layout l;
        size_t nrun = 0;
        int left = v->lines > 4 + v->keys ? v->lines - 4 - v->keys : 1;

        layout_of(v->cols, &l);
        for (size_t i = 0; i < v->nrows; i++)
                nrun += v->rows[i].running;
        dw_printf(w, "buildtel top: %zu running, %zu recent\n", nrun, v->nrows - nrun);
        row_line(w, NULL, false, &l, v->utf8);
        if (v->nrows == 0)
                dw_printf(w, "%s\n", v->empty ? v->empty : "no runs recorded");
        section(w, v, true, &l, &left);
        if (left > 0 && nrun < v->nrows) {
                dw_puts(w, "-- recent --\n");
                left--;
        }
        section(w, v, false, &l, &left);
        if (v->keys)
                dw_puts(w, v->nrows ? "keys: up/down select, Enter details, Esc back, q quit\n"
                                    : "keys: q quit\n");
}

static void detail_targets(const struct top_detail *d, size_t width, int *left, struct dwriter *w)
{
        dw_puts(w, "TARGETS (steps done / cached)\n");
        (*left)--;
        if (d->ntargets == 0 && *left > 0) {
                dw_puts(w, "  none reported yet\n");
                (*left)--;
        }
        for (size_t i = 0; i < d->ntargets && dw_ok(w) && *left > 0; i++) {
                const struct top_target *t = &d->targets[i];
                char fig[128], dur[32];

                (void)fmt_duration(t->duration_s, FMT_DURATION_COMPACT, dur);
                if (t->steps >= 0)
                        snprintf(fig, sizeof(fig), "%lld / %lld cached  %s", (long long)t->steps,
                                 (long long)(t->cached >= 0 ? t->cached : 0), dur);
                else
                        snprintf(fig, sizeof(fig), "-  %s", dur);
                dw_puts(w, "  ");
                put_cell(w, t->name, width > 30 ? width - 30 : width / 2);
                dw_printf(w, " %s", fig);
                end_line(w);
                (*left)--;
        }
}

static void detail_text(const struct top_detail *d, int cols, int lines, bool utf8,
                        struct dwriter *w)
{
        size_t width = cols > 20 ? (size_t)cols : 20;
        int left = lines > 2 ? lines - 1 : 1;
        size_t first;

        put_line(w, "run: ", d->row->command, width - 5);
        left--;
        if (left > 0) {
                struct layout l;

                layout_of(cols, &l);
                row_line(w, d->row, false, &l, utf8);
                left--;
        }
        if (left > 0) {
                put_line(w,
                         "UNITS running: ", d->row->units && *d->row->units ? d->row->units : "-",
                         width - 15);
                left--;
        }
        for (int k = 0; k < 2 && left > 1; k++) {
                const char *v = k == 0 ? d->peak : d->jobs;

                if (!v || !*v)
                        continue;
                put_line(w, k == 0 ? "PEAK " : "JOBS ", v, width - 5);
                left--;
        }
        if (left > 1)
                detail_targets(d, width, &left, w);
        if (left > 1) {
                dw_printf(w, "%s\n", d->lines_title ? d->lines_title : "RECENT");
                left--;
        }
        first = d->nlines > (size_t)MAX(left, 0) ? d->nlines - (size_t)MAX(left, 0) : 0;
        for (size_t i = first; i < d->nlines && dw_ok(w) && left > 0; i++, left--)
                put_line(w, "  ", d->lines[i], width - 2);
}

/* Each line of src cut to cols columns (never inside a UTF-8 sequence). */
static int cut_lines(const struct dbuf *src, int cols, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        size_t width = cols > 1 ? (size_t)cols : 1;

        for (size_t i = 0; i < src->len && dw_ok(&w);) {
                size_t col = 0, start = i;

                while (i < src->len && src->p[i] != '\n') {
                        bool lead = ((unsigned char)src->p[i] & 0xc0) != 0x80;

                        if (lead && col == width)
                                break;
                        col += lead;
                        i++;
                }
                dw_append(&w, src->p + start, i - start);
                end_line(&w);
                while (i < src->len && src->p[i] != '\n')
                        i++;
                i++;
        }
        return w.err;
}

int top_frame_text(const struct top_view *v, struct dbuf *out)
{
        _cleanup_dbuf_ struct dbuf tmp = DBUF_INIT;
        struct dwriter w = DWRITER_INIT(&tmp);

        frame_text(v, &w);
        return w.err < 0 ? w.err : cut_lines(&tmp, v->cols, out);
}

int top_detail_text(const struct top_detail *d, int cols, int lines, bool utf8, struct dbuf *out)
{
        _cleanup_dbuf_ struct dbuf tmp = DBUF_INIT;
        struct dwriter w = DWRITER_INIT(&tmp);

        detail_text(d, cols, lines, utf8, &w);
        return w.err < 0 ? w.err : cut_lines(&tmp, cols, out);
}
