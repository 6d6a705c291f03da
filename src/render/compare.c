/* SPDX-License-Identifier: MIT */
#include "render/compare.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "util/json-cleanup.h"
#include "util/macro.h"
#include "util/util.h"
#include "render/jsonw.h"

#define LABEL_W 44
#define VALUE_W 12

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A figure's value as text, by the unit its name ends in; signed for a
 * change. */
static void fmt_value(const char *figure, double v, bool sign, char *buf, size_t len)
{
        const char *plus = sign && v > 0 ? "+" : "";
        char d[FMT_DURATION_LEN];
        int n;

        if (!isfinite(v))
                n = snprintf(buf, len, "-");
        else if (ends_with(figure, "_s") && fabs(v) >= 60) {
                (void)fmt_duration(fabs(v), FMT_DURATION_EXACT, d);
                n = snprintf(buf, len, "%s%s", v < 0 ? "-" : plus, d);
        } else if (ends_with(figure, "_s"))
                n = snprintf(buf, len, "%s%.2fs", plus, v);
        else if (ends_with(figure, "_mb") && fabs(v) >= 1024)
                n = snprintf(buf, len, "%s%.2f GiB", plus, v / 1024);
        else if (ends_with(figure, "_mb"))
                n = snprintf(buf, len, "%s%.1f MiB", plus, v);
        else if (ends_with(figure, "_pct"))
                n = snprintf(buf, len, "%s%.1f%s", plus, v, sign ? " pt" : "%");
        else if (ends_with(figure, "_ratio"))
                n = snprintf(buf, len, "%s%.0f%s", plus, 100 * v, sign ? " pt" : "%");
        else if (v == floor(v) && fabs(v) < 1e15)
                n = snprintf(buf, len, "%s%.0f", plus, v);
        else
                n = snprintf(buf, len, "%s%.2f", plus, v);
        if (n < 0 || (size_t)n >= len)
                snprintf(buf, len, "?");
}

/* A row's label: its subject (cleaned, cut) then its figure. */
static int put_label(struct dbuf *out, const struct compare_row *r)
{
        struct dbuf l = DBUF_INIT;
        size_t sl = strlen(r->subject), room = LABEL_W - 1 - strlen(r->figure);
        int e = 0;

        if (sl) {
                /* a unit's name tells it apart by its end (its path), a
                 * step's by its start ("[app 2/5] RUN") */
                const char *s = r->subject;
                size_t n = sl;
                bool cut = room > 4 && sl > room - 1;
                bool front = r->section == COMPARE_UNIT;

                if (cut) {
                        n = room - 4;
                        s += front ? sl - n : 0;
                }
                if (cut && front)
                        e = dbuf_puts(&l, "...");
                if (e >= 0)
                        e = run_append_utf8_lossy(&l, s, n, true);
                if (e >= 0 && cut && !front)
                        e = dbuf_puts(&l, "...");
                if (e >= 0)
                        e = dbuf_puts(&l, " ");
        }
        if (e >= 0)
                e = dbuf_puts(&l, r->figure);
        if (e >= 0)
                e = dbuf_printf(out, "  %-*s", LABEL_W, l.p ? l.p : "");
        dbuf_release(&l);
        return e;
}

static int put_text_side(struct dbuf *out, const char *side, const char *t)
{
        size_t n = t ? strlen(t) : 0;
        int e = dbuf_printf(out, "    %s  ", side);

        if (e >= 0 && t)
                e = run_append_utf8_lossy(out, t, MIN(n, (size_t)400), true);
        if (e >= 0 && !t)
                e = dbuf_puts(out, "-");
        if (e >= 0 && n > 400)
                e = dbuf_puts(out, "...");
        return e < 0 ? e : dbuf_puts(out, "\n");
}

static int put_row(struct dbuf *out, const struct compare_row *r)
{
        char a[48], b[48], c[48], p[24];
        int e;

        if (r->ta || r->tb) {
                e = dbuf_printf(out, "  %s\n", r->figure);
                if (e >= 0)
                        e = put_text_side(out, "A", r->ta);
                return e < 0 ? e : put_text_side(out, "B", r->tb);
        }
        e = put_label(out, r);
        if (e < 0)
                return e;
        fmt_value(r->figure, r->a, false, a, sizeof(a));
        fmt_value(r->figure, r->b, false, b, sizeof(b));
        fmt_value(r->figure, r->change, true, c, sizeof(c));
        if (r->status == COMPARE_APPEARED || r->status == COMPARE_GONE)
                snprintf(p, sizeof(p), "%s", compare_status_name(r->status));
        else if (isfinite(r->change_pct))
                snprintf(p, sizeof(p), "%+.1f%%", r->change_pct);
        else
                snprintf(p, sizeof(p), "new");
        return dbuf_printf(out, " %*s %*s %*s %9s\n", VALUE_W, a, VALUE_W, b, VALUE_W, c, p);
}

static int put_header(struct dbuf *out, const struct compare_labels *l)
{
        char sa[64] = "", sb[64] = "";
        int e;

        (void)format_iso8601(l->a_start, sa);
        (void)format_iso8601(l->b_start, sb);
        e = dbuf_puts(out, "A: ");
        if (e >= 0)
                e = run_append_utf8_lossy(out, l->a_id, strlen(l->a_id), true);
        if (e >= 0)
                e = dbuf_printf(out, "  %s\nB: ", sa);
        if (e >= 0)
                e = run_append_utf8_lossy(out, l->b_id, strlen(l->b_id), true);
        if (e >= 0)
                e = dbuf_printf(out, "  %s\n", sb);
        return e;
}

/* The rows of section s, from rows[0..n), changed ones only. */
static int put_section(struct dbuf *out, int s, const struct compare_row *rows, size_t n,
                       size_t max_rows)
{
        size_t shown = 0, more = 0;
        int e = dbuf_printf(out, "\n%-*s %*s %*s %*s %9s\n", LABEL_W + 2, compare_section_name(s),
                            VALUE_W, "A", VALUE_W, "B", VALUE_W, "CHANGE", "%");

        for (size_t i = 0; e >= 0 && i < n; i++) {
                if (rows[i].status == COMPARE_SAME)
                        continue;
                if (max_rows && shown == max_rows) {
                        more++;
                        continue;
                }
                shown++;
                e = put_row(out, &rows[i]);
        }
        if (e >= 0 && more)
                e = dbuf_printf(out, "  (%zu more; --json lists all)\n", more);
        return e;
}

int render_compare_text(const struct compare_result *res, const struct compare_labels *l,
                        size_t max_rows, struct dbuf *out)
{
        size_t at = 0;
        bool any = false;
        int e = put_header(out, l);

        for (int k = 0; e >= 0 && k < COMPARE_SECTIONS; k++) {
                int s = res->order[k];
                bool changed = false;

                for (size_t i = at; i < at + res->count[s]; i++)
                        changed = changed || res->rows[i].status != COMPARE_SAME;
                if (changed) {
                        any = true;
                        e = put_section(out, s, res->rows + at, res->count[s], max_rows);
                }
                at += res->count[s];
        }
        if (e >= 0 && !any)
                e = dbuf_puts(out, "\nno differences\n");
        return e;
}

/* A count (a figure with no unit suffix) as a JSON integer when whole. */
static bool is_count(const char *figure)
{
        return !ends_with(figure, "_s") && !ends_with(figure, "_mb") &&
               !ends_with(figure, "_pct") && !ends_with(figure, "_ratio");
}

static json_t *fig_num(const char *figure, double v)
{
        if (isfinite(v) && is_count(figure) && v == floor(v) && fabs(v) < 9e15)
                return json_integer((json_int_t)v);
        return isfinite(v) ? json_real(v) : json_null();
}

static json_t *num(double v)
{
        return fig_num("_s", v);
}

static json_t *text(const char *s)
{
        return s ? jsonw_str(s) : json_null();
}

static json_t *row_json(const struct compare_row *r)
{
        bool t = r->ta || r->tb;

        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "subject",
                         *r->subject ? text(r->subject) : json_null(), "figure", text(r->figure),
                         "a", t ? text(r->ta) : fig_num(r->figure, r->a), "b",
                         t ? text(r->tb) : fig_num(r->figure, r->b), "change",
                         fig_num(r->figure, r->change), "change_pct", num(r->change_pct), "status",
                         compare_status_name(r->status));
}

static json_t *side_json(const char *id, double start)
{
        return json_pack("{s:o, s:o}", "run_id", text(id), "start_epoch", num(start));
}

static json_t *sections_json(const struct compare_result *res)
{
        json_t *a = json_array();
        size_t at = 0;

        for (int k = 0; a && k < COMPARE_SECTIONS; k++) {
                int s = res->order[k];
                json_t *rows = json_array();

                for (size_t i = at; rows && i < at + res->count[s]; i++)
                        if (json_array_append_new(rows, row_json(&res->rows[i])) < 0) {
                                json_decref(rows);
                                rows = NULL;
                        }
                at += res->count[s];
                if (!rows ||
                    (res->count[s] &&
                     json_array_append_new(a, json_pack("{s:s, s:f, s:O}", "section",
                                                        compare_section_name(s), "score",
                                                        res->score[s], "rows", rows)) < 0)) {
                        json_decref(a);
                        a = NULL;
                }
                json_decref(rows);
        }
        return a;
}

int render_compare_json(const struct compare_result *res, const struct compare_labels *l,
                        struct dbuf *out)
{
        _cleanup_json_ json_t *o =
            json_pack("{s:o, s:o, s:o}", "a", side_json(l->a_id, l->a_start), "b",
                      side_json(l->b_id, l->b_start), "sections", sections_json(res));
        char *s;
        int e;

        if (!o)
                return -ENOMEM;
        s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        if (!s)
                return -ENOMEM;
        e = dbuf_puts(out, s);
        free(s);
        return e < 0 ? e : dbuf_puts(out, "\n");
}
