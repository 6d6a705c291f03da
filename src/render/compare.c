/* SPDX-License-Identifier: MIT */
#include "render/compare.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/run.h"
#include "util/json-cleanup.h"
#include "util/macro.h"
#include "util/util.h"
#include "render/jsonw.h"
#include "render/summary.h"

#define LABEL_W 44
#define VALUE_W 12

/* A figure's value as text, by the unit its name ends in; signed for a
 * change. */
static void fmt_value(const char *figure, double v, bool sign, char *buf, size_t len)
{
        enum compare_in in = compare_figure_in(figure);
        const char *s = v < 0 ? "-" : sign && v > 0 ? "+" : "";
        int n;

        if ((in == COMPARE_IN_S || in == COMPARE_IN_PCT) && fabs(v) < 0.05)
                s = ""; /* shown as 0.0s, 0.0 pt */
        if (!isfinite(v))
                n = snprintf(buf, len, "-");
        else if (in == COMPARE_IN_S)
                n = snprintf(buf, len, "%s%s", s, DURATION_STR(fabs(v)));
        else if (in == COMPARE_IN_MB)
                n = snprintf(buf, len, "%s%s", s, SIZE_STR(fabs(v)));
        else if (in == COMPARE_IN_PCT || in == COMPARE_IN_RATIO)
                n = snprintf(buf, len, "%s%.*f%s", s, in == COMPARE_IN_PCT,
                             fabs(v) * (in == COMPARE_IN_PCT ? 1 : 100), sign ? " pt" : "%");
        else
                n = snprintf(buf, len, "%s%.*f", s, v == floor(v) ? 0 : 2, fabs(v));
        if (n < 0 || (size_t)n >= len)
                snprintf(buf, len, "?");
}

/* The build's text s[0..n) made safe for a terminal. */
static void put_clean(struct dwriter *w, const char *s, size_t n)
{
        if (dw_ok(w))
                dw_check(w, run_append_utf8_lossy(w->b, s, n, true));
}

/* A row's label: its subject (cleaned, cut) then its figure's label. */
static void put_label(struct dwriter *w, const struct compare_row *r)
{
        struct dbuf l = DBUF_INIT;
        struct dwriter lw = DWRITER_INIT(&l);
        const char *label = compare_figure_label(r->figure);
        size_t sl = strlen(r->subject), room = LABEL_W - 1 - strlen(label);

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
                dw_puts(&lw, cut && front ? "..." : "");
                put_clean(&lw, s, n);
                dw_puts(&lw, cut && !front ? "... " : " ");
        }
        dw_puts(&lw, label);
        dw_check(w, lw.err);
        dw_printf(w, "  %-*s", LABEL_W, l.p ? l.p : "");
        dbuf_release(&l);
}

static void put_text_side(struct dwriter *w, const char *side, const char *t)
{
        size_t n = t ? strlen(t) : 0;

        dw_printf(w, "    %s  ", side);
        if (t)
                put_clean(w, t, MIN(n, (size_t)400));
        dw_puts(w, t ? "" : "-");
        dw_puts(w, n > 400 ? "...\n" : "\n");
}

static void put_row(struct dwriter *w, const struct compare_row *r)
{
        char a[48], b[48], c[48] = "", p[24] = "";
        bool text = r->ta || r->tb;

        /* the facts' texts come from the build: on lines of their own,
         * cleaned; the run's (its outcome) are buildtel's words */
        if (text && r->section != COMPARE_RUN) {
                dw_printf(w, "  %s\n", compare_figure_label(r->figure));
                put_text_side(w, "A", r->ta);
                put_text_side(w, "B", r->tb);
                return;
        }
        put_label(w, r);
        fmt_value(r->figure, r->a, false, a, sizeof(a));
        fmt_value(r->figure, r->b, false, b, sizeof(b));
        if (r->status != COMPARE_SAME && !text)
                fmt_value(r->figure, r->change, true, c, sizeof(c));
        if (r->status == COMPARE_APPEARED || r->status == COMPARE_GONE)
                snprintf(p, sizeof(p), "only in %s", r->status == COMPARE_GONE ? "A" : "B");
        if (r->noise)
                snprintf(p, sizeof(p), "noise");
        else if (r->status == COMPARE_CHANGED && isfinite(r->change_pct))
                snprintf(p, sizeof(p), "%+.1f%%", r->change_pct);
        dw_printf(w, " %*s %*s %*s %9s\n", VALUE_W, text ? (r->ta ? r->ta : "-") : a, VALUE_W,
                  text ? (r->tb ? r->tb : "-") : b, VALUE_W, c, p);
}

static void put_side(struct dwriter *w, const char *name, const char *id, double start,
                     const char *outcome)
{
        char t[64] = "";

        (void)format_iso8601(start, t);
        dw_printf(w, "%s: ", name);
        put_clean(w, id, strlen(id));
        dw_printf(w, "  %s  %s\n", t, outcome ? outcome : "unknown");
}

/* The rows of section s, from rows[0..n): the run's all, the other
 * sections' changed ones, noise folded and at most max_rows (0: every
 * row, noise too). */
static void put_section(struct dwriter *w, int s, const struct compare_row *rows, size_t n,
                        size_t max_rows)
{
        size_t shown = 0, more = 0, noise = 0;

        if (s == COMPARE_FACTS)
                dw_puts(w, "\nfacts\n");
        else
                dw_printf(w, "\n%-*s %*s %*s %*s %9s\n", LABEL_W + 2, compare_section_name(s),
                          VALUE_W, "A", VALUE_W, "B", VALUE_W, "CHANGE", "%");
        for (size_t i = 0; i < n; i++) {
                if (s != COMPARE_RUN && rows[i].status == COMPARE_SAME)
                        continue;
                if (s != COMPARE_RUN && max_rows && rows[i].noise)
                        noise++;
                else if (s != COMPARE_RUN && max_rows && shown == max_rows)
                        more++;
                else {
                        shown++;
                        put_row(w, &rows[i]);
                }
        }
        if (more)
                dw_printf(w, "  (%zu more; --all lists them)\n", more);
        if (noise)
                dw_printf(w, "  %zu change%s within noise (--all lists them)\n", noise,
                          noise == 1 ? "" : "s");
}

int render_compare_text(const struct compare_result *res, const struct compare_labels *l,
                        size_t max_rows, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        size_t at = 0;
        bool real = false;

        put_side(&w, "A", l->a_id, l->a_start, l->a_outcome);
        put_side(&w, "B", l->b_id, l->b_start, l->b_outcome);
        for (int s = 0; s < COMPARE_SECTIONS; s++) {
                bool changed = false;

                for (size_t i = at; i < at + res->count[s]; i++) {
                        changed = changed || res->rows[i].status != COMPARE_SAME;
                        real = real || (res->rows[i].status != COMPARE_SAME && !res->rows[i].noise);
                }
                if (changed || (s == COMPARE_RUN && res->count[s]))
                        put_section(&w, s, res->rows + at, res->count[s], max_rows);
                at += res->count[s];
        }
        if (!real)
                dw_puts(&w, "\nno differences beyond noise\n");
        return w.err;
}

/* A count (a figure with no unit suffix) as a JSON integer when whole. */
static json_t *fig_num(const char *figure, double v)
{
        if (isfinite(v) && compare_figure_in(figure) == COMPARE_IN_COUNT && v == floor(v) &&
            fabs(v) < 9e15)
                return json_integer((json_int_t)v);
        return isfinite(v) ? json_real(v) : json_null();
}

static json_t *num(double v)
{
        return fig_num("_s", v);
}

static json_t *row_json(const struct compare_row *r)
{
        bool t = r->ta || r->tb;

        return json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:s, s:b}", "subject",
                         *r->subject ? jsonw_text(r->subject) : json_null(), "figure",
                         jsonw_text(r->figure), "label", compare_figure_label(r->figure), "a",
                         t ? jsonw_text(r->ta) : fig_num(r->figure, r->a), "b",
                         t ? jsonw_text(r->tb) : fig_num(r->figure, r->b), "change",
                         fig_num(r->figure, r->change), "change_pct", num(r->change_pct), "status",
                         compare_status_name(r->status), "noise", r->noise);
}

static json_t *side_json(const char *id, double start, const char *outcome)
{
        return json_pack("{s:o, s:o, s:o}", "run_id", jsonw_text(id), "start_epoch", num(start),
                         "outcome", jsonw_text(outcome));
}

static json_t *sections_json(const struct compare_result *res)
{
        json_t *a = json_array();
        size_t at = 0;

        for (int s = 0; a && s < COMPARE_SECTIONS; s++) {
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
            json_pack("{s:o, s:o, s:o, s:o}", "a", side_json(l->a_id, l->a_start, l->a_outcome),
                      "b", side_json(l->b_id, l->b_start, l->b_outcome), "quantum_s",
                      num(res->quantum_s), "sections", sections_json(res));

        return jsonw_dump(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), out);
}
