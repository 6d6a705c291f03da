/* SPDX-License-Identifier: MIT */
#include "model/targets.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "model/run.h"
#include "util/macro.h"

void targets_init(struct targets *ts)
{
        memset(ts, 0, sizeof(*ts));
        targets_init_zeroed(ts);
}

void targets_copy_field(char *dst, size_t cap, const char *src, size_t len)
{
        if (cap == 0)
                return;
        if (len >= cap) {
                len = cap - 1;
                /* Do not end inside a UTF-8 sequence: back off continuation bytes. */
                while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
                        len--;
        }
        memcpy(dst, src, len);
        dst[len] = '\0';
}

size_t targets_get(struct targets *ts, const char *name, size_t len)
{
        char key[TARGET_NAME_MAX + 1];
        struct target *t;

        targets_copy_field(key, sizeof(key), name, len);
        for (size_t i = 0; i < ts->n; i++)
                if (strcmp(ts->t[i].name, key) == 0)
                        return i;
        if (ts->n == TARGETS_MAX)
                return TARGETS_MAX - 1;
        t = &ts->t[ts->n];
        memset(t, 0, sizeof(*t));
        memcpy(t->name, key, sizeof(key));
        t->first_seen = NAN;
        t->last_seen = NAN;
        return ts->n++;
}

int targets_find(const struct targets *ts, const char *name)
{
        for (size_t i = 0; i < ts->n; i++)
                if (strcmp(ts->t[i].name, name) == 0)
                        return (int)i;
        return -1;
}

void targets_touch(struct targets *ts, size_t i, double now)
{
        struct target *t = &ts->t[i];

        if (isnan(t->first_seen))
                t->first_seen = now;
        t->last_seen = now;
}

void targets_offer_edge(struct targets *ts, int64_t start_ms, int64_t end_ms, const char *out,
                        size_t out_len)
{
        int64_t d = end_ms - start_ms;
        size_t pos;

        for (size_t i = 0; i < ts->nslow; i++)
                if (ts->slow[i].start_ms == start_ms && ts->slow[i].end_ms == end_ms)
                        return;
        /* Ties keep file order: a new edge goes after equal ones. */
        for (pos = 0; pos < ts->nslow; pos++)
                if (ts->slow[pos].end_ms - ts->slow[pos].start_ms < d)
                        break;
        if (pos >= TARGETS_SLOW_EDGES)
                return;
        if (ts->nslow < TARGETS_SLOW_EDGES)
                ts->nslow++;
        memmove(&ts->slow[pos + 1], &ts->slow[pos], (ts->nslow - 1 - pos) * sizeof(ts->slow[0]));
        ts->slow[pos].start_ms = start_ms;
        ts->slow[pos].end_ms = end_ms;
        targets_copy_field(ts->slow[pos].output, sizeof(ts->slow[pos].output), out, out_len);
}

void targets_note_cc_block(struct targets *ts, enum cc_tool tool, const struct cc_block *b,
                           bool is_new)
{
        struct cc_blocks *c;

        if ((unsigned)tool >= CC_TOOLS)
                return;
        c = &ts->cc_log[tool];
        if (is_new) {
                if (c->blocks < UINT32_MAX)
                        c->blocks++;
                if (c->blocks == 1)
                        c->first = *b;
                c->last = *b;
                return;
        }
        if (!c->blocks)
                return;
        /* Keep the time the block was completed. */
        c->last = (struct cc_block){.seen = c->last.seen,
                                    .hits = b->hits,
                                    .misses = b->misses,
                                    .size_bytes = b->size_bytes,
                                    .max_size_bytes = b->max_size_bytes,
                                    .files = b->files};
        memcpy(c->last.version, b->version, sizeof(c->last.version));
        if (c->blocks == 1)
                c->first = c->last;
}

const struct cc_blocks *targets_cc_blocks(const struct targets *ts, enum cc_tool tool)
{
        return (unsigned)tool < CC_TOOLS && ts->cc_log[tool].blocks ? &ts->cc_log[tool] : NULL;
}

const char *targets_cc_tool_name(enum cc_tool tool)
{
        return tool == CC_TOOL_SCCACHE ? "sccache" : tool == CC_TOOL_CCACHE ? "ccache" : "";
}

bool targets_any(const struct targets *ts)
{
        return ts->n > 0 || ts->ninja_total > 0 || ts->make_pct >= 0 || ts->ninja_log_set;
}

static int render_cc(struct dbuf *out, const char *what, const struct cc_counts *c, bool guess)
{
        uint64_t tot;

        if (!c->set)
                return 0;
        tot = c->hits + c->misses;
        return dbuf_printf(out, ", %s %" PRIu64 " hits / %" PRIu64 " misses (%.1f%%)%s", what,
                           c->hits, c->misses, tot ? 100.0 * (double)c->hits / (double)tot : 0.0,
                           guess ? " (a guess: no marker step found)" : "");
}

int targets_render_text(const struct targets *ts, struct dbuf *out)
{
        struct dbuf name = DBUF_INIT;
        int e = 0;

        for (size_t i = 0; e >= 0 && i < ts->n; i++) {
                const struct target *t = &ts->t[i];
                double dur = isnan(t->first_seen) ? 0 : t->last_seen - t->first_seen;

                dbuf_reset(&name);
                e = run_append_utf8_lossy(&name, t->name, strlen(t->name), true);
                if (e >= 0)
                        e = dbuf_printf(out,
                                        "buildtel: target %s: %.1fs, %" PRIu32 " steps, %" PRIu32
                                        " cached",
                                        name.p ? name.p : "", dur, t->steps, t->cached);
                if (e >= 0 && t->errors)
                        e = dbuf_printf(out, ", %" PRIu32 " failed", t->errors);
                if (e >= 0)
                        e = render_cc(out, "sccache", &t->sccache, t->sccache_guess);
                if (e >= 0)
                        e = render_cc(out, "ccache", &t->ccache, false);
                if (e >= 0 && t->history_set)
                        e = dbuf_printf(out, ", history %" PRIu32 "/%" PRIu32 " cached, %.1fs, %s",
                                        t->history_cached, t->history_steps, t->history_duration_s,
                                        t->history_status);
                if (e >= 0)
                        e = dbuf_puts(out, "\n");
        }
        for (size_t i = 0; e >= 0 && i < ts->nfailed; i++) {
                const struct failed_step *f = &ts->failed[i];

                dbuf_reset(&name);
                e = run_append_utf8_lossy(&name, f->name, strlen(f->name), true);
                if (e >= 0)
                        e = dbuf_printf(out, "buildtel: failed step: %s\n", name.p ? name.p : "");
        }
        if (e >= 0 && ts->ninja_total)
                e = dbuf_printf(out, "buildtel: ninja progress %" PRIu64 "/%" PRIu64 "\n",
                                ts->ninja_done, ts->ninja_total);
        if (e >= 0 && ts->make_pct >= 0)
                e = dbuf_printf(out, "buildtel: make progress %d%%\n", ts->make_pct);
        if (e >= 0 && ts->ninja_log_set)
                e = dbuf_printf(out, "buildtel: .ninja_log: %" PRIu64 " edges this run%s\n",
                                ts->ninja_edges, ts->nslow ? ", slowest:" : "");
        for (size_t i = 0; e >= 0 && i < ts->nslow; i++) {
                dbuf_reset(&name);
                e = run_append_utf8_lossy(&name, ts->slow[i].output, strlen(ts->slow[i].output),
                                          true);
                if (e >= 0)
                        e = dbuf_printf(out, "buildtel:   %8.3fs  %s\n",
                                        (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) /
                                            1000.0,
                                        name.p ? name.p : "");
        }
        dbuf_release(&name);
        return e < 0 ? -ENOMEM : 0;
}

static int set_new(json_t *o, const char *k, json_t *v)
{
        return v && json_object_set_new(o, k, v) == 0 ? 0 : -ENOMEM;
}

static json_t *cc_json(const struct cc_counts *c)
{
        if (!c->set)
                return json_null();
        return json_pack("{s:I,s:I}", "hits", (json_int_t)c->hits, "misses", (json_int_t)c->misses);
}

static json_t *num_or_null(double d)
{
        return isnan(d) ? json_null() : json_real(d);
}

int targets_render_json(const struct targets *ts, struct dbuf *out)
{
        json_t *root = json_object(), *arr = json_array(), *slow = json_array();
        char *s = NULL;
        int e = 0;

        if (!root || !arr || !slow) {
                json_decref(root);
                json_decref(arr);
                json_decref(slow);
                return -ENOMEM;
        }
        e = set_new(root, "targets", arr);
        for (size_t i = 0; e >= 0 && i < ts->n; i++) {
                const struct target *t = &ts->t[i];
                json_t *o = json_object();

                if (!o || json_array_append_new(arr, o) != 0)
                        e = -ENOMEM;
                if (e >= 0)
                        e = set_new(o, "name", run_json_string(t->name));
                if (e >= 0)
                        e = set_new(o, "builder", run_json_string(t->builder));
                if (e >= 0)
                        e = set_new(o, "node", run_json_string(t->node));
                if (e >= 0)
                        e = set_new(o, "ref", run_json_string(t->ref));
                if (e >= 0)
                        e = set_new(o, "first_seen_s", num_or_null(t->first_seen));
                if (e >= 0)
                        e = set_new(o, "last_seen_s", num_or_null(t->last_seen));
                if (e >= 0)
                        e = set_new(o, "steps", json_integer(t->steps));
                if (e >= 0)
                        e = set_new(o, "cached", json_integer(t->cached));
                if (e >= 0)
                        e = set_new(o, "failed", json_integer(t->errors));
                if (e >= 0)
                        e = set_new(o, "sccache", cc_json(&t->sccache));
                if (e >= 0)
                        e = set_new(o, "sccache_guess", json_boolean(t->sccache_guess));
                if (e >= 0)
                        e = set_new(o, "ccache", cc_json(&t->ccache));
        }
        if (e >= 0)
                e = set_new(root, "steps", json_integer(ts->steps));
        if (e >= 0)
                e = set_new(root, "cached", json_integer(ts->cached));
        if (e >= 0) {
                json_t *fa = json_array();

                e = set_new(root, "failed_steps", fa);
                for (size_t i = 0; e >= 0 && i < ts->nfailed; i++) {
                        const struct failed_step *f = &ts->failed[i];
                        json_t *o = json_object();

                        if (!o || json_array_append_new(fa, o) != 0)
                                e = -ENOMEM;
                        if (e >= 0)
                                e = set_new(o, "name", run_json_string(f->name));
                        if (e >= 0)
                                e = set_new(o, "target",
                                            f->target >= 0 ? run_json_string(ts->t[f->target].name)
                                                           : json_null());
                }
        }
        if (e >= 0)
                e = set_new(root, "slowest_edges", slow);
        else
                json_decref(slow);
        for (size_t i = 0; e >= 0 && i < ts->nslow; i++)
                if (json_array_append_new(
                        slow, json_pack("{s:o,s:f}", "output", run_json_string(ts->slow[i].output),
                                        "seconds",
                                        (double)(ts->slow[i].end_ms - ts->slow[i].start_ms) /
                                            1000.0)) != 0)
                        e = -ENOMEM;
        if (e >= 0) {
                s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                e = s ? dbuf_puts(out, s) : -ENOMEM;
                if (e >= 0)
                        e = dbuf_puts(out, "\n");
        }
        free(s);
        json_decref(root);
        return e < 0 ? -ENOMEM : 0;
}

void targets_init_zeroed(struct targets *ts)
{
        ts->make_pct = -1;
}
