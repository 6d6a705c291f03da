/* SPDX-License-Identifier: MIT */
/* resources-<id>.run.json: the run's facts, written and read back by one
 * table of its members. */
#include "runfiles/runjson.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranges.h"
#include "render/jsonw.h"
#include "util/json-cleanup.h"
#include "util/macro.h"

/* A run.json is ours, but it sits on disk: cap what we accept. */
#define RUN_ARGV_MAX 65536

enum {
        M_STR,  /* char *, null when NULL */
        M_ARGV, /* char **, NULL-terminated */
        M_REAL, /* double, null when not finite */
        M_BOOL,
        M_INT, /* int, unsigned, long */
        M_UINT,
        M_LONG,
        M_TYPE = 0x0f,
        M_OPT = 0x10, /* a string absent when NULL, a double when not above 0 */
        M_LAX = 0x20, /* and one that does not read reads as none */
};

/* In the order they are written; range: a number's, read back. */
static const struct member {
        const char *key;
        unsigned kind; /* a type, and M_OPT, M_LAX */
        enum range_kind range;
        size_t off;
} members[] = {
    {"run_id", M_STR, RANGE_ANY, offsetof(struct run_info, run_id)},
    {"kind", M_STR, RANGE_ANY, offsetof(struct run_info, kind)},
    {"argv", M_ARGV, RANGE_ANY, offsetof(struct run_info, argv)},
    {"cwd", M_STR, RANGE_ANY, offsetof(struct run_info, cwd)},
    {"host", M_STR, RANGE_ANY, offsetof(struct run_info, host)},
    {"start_epoch", M_REAL, RANGE_EPOCH, offsetof(struct run_info, start_epoch)},
    {"end_epoch", M_REAL, RANGE_EPOCH, offsetof(struct run_info, end_epoch)},
    {"finished", M_BOOL, RANGE_ANY, offsetof(struct run_info, finished)},
    {"exit_code", M_INT, RANGE_EXIT_CODE, offsetof(struct run_info, exit_code)},
    {"term_signal", M_INT, RANGE_SIGNAL, offsetof(struct run_info, term_signal)},
    {"ncpu", M_UINT, RANGE_NCPU, offsetof(struct run_info, ncpu)},
    {"interval", M_REAL, RANGE_INTERVAL, offsetof(struct run_info, interval)},
    {"pid", M_LONG, RANGE_PID, offsetof(struct run_info, pid)},
    {"exit_comm", M_STR | M_OPT, RANGE_ANY, offsetof(struct run_info, exit_comm)},
    {"job", M_STR | M_OPT | M_LAX, RANGE_ANY, offsetof(struct run_info, job)},
    {"memory_max_mb", M_REAL | M_OPT, RANGE_MIB, offsetof(struct run_info, memory_max_mb)},
};

/* A new value (NULL: out of memory). */
static json_t *member_json(const struct run_info *ri, const struct member *m)
{
        const void *p = (const char *)ri + m->off;

        switch (m->kind & M_TYPE) {
        case M_STR:
                return *(const char *const *)p ? jsonw_str(*(const char *const *)p) : json_null();
        case M_ARGV:
                return jsonw_argv(*(char *const *const *)p);
        case M_REAL:
                return jsonw_real(*(const double *)p);
        case M_BOOL:
                return json_boolean(*(const bool *)p);
        default:
                break;
        }
        return json_integer(m->kind == M_INT    ? *(const int *)p
                            : m->kind == M_UINT ? (json_int_t) * (const unsigned *)p
                                                : *(const long *)p);
}

int runjson_format(const struct run_info *ri, struct dbuf *out)
{
        _cleanup_json_ json_t *o = json_object();

        for (size_t i = 0; o && i < ARRAY_SIZE(members); i++) {
                const struct member *m = &members[i];
                const void *p = (const char *)ri + m->off;

                if ((m->kind & M_OPT) &&
                    ((m->kind & M_TYPE) == M_STR ? !*(char *const *)p : !(*(const double *)p > 0)))
                        continue;
                /* it steals the value even on failure; NULL fails */
                if (json_object_set_new(o, m->key, member_json(ri, m)) < 0)
                        return -ENOMEM;
        }
        if (ri->procs.ended && json_object_set_new(o, "processes", runjson_procs(&ri->procs)) < 0)
                return -ENOMEM;
        if (ri->guard.on && json_object_set_new(o, "memory_guard", runjson_guard(&ri->guard)) < 0)
                return -ENOMEM;
        return jsonw_dump(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17), out);
}

json_t *runjson_procs(const struct run_procs *p)
{
        json_t *by;

        if (!p->ended)
                return json_null();
        by = json_array();
        for (size_t i = 0; by && i < p->ntop; i++) {
                const struct run_proc_kind *k = &p->top[i];

                by = json_push(by, json_pack("{s:o, s:I, s:f, s:f}", "comm", jsonw_str(k->comm),
                                             "count", (json_int_t)k->count, "cpu_s", k->cpu_s,
                                             "peak_mb", k->peak_mb));
        }
        return json_pack("{s:I, s:f, s:b, s:f, s:f, s:f, s:o, s:I, s:I, s:b}", "ended",
                         (json_int_t)p->ended, "cpu_s", p->cpu_s, "delayacct", p->delayacct,
                         "delay_cpu_s", p->delay_cpu_s, "delay_io_s", p->delay_io_s, "delay_mem_s",
                         p->delay_mem_s, "by_name", by, "unread", (json_int_t)p->unread, "lost",
                         (json_int_t)p->lost, "sccache_unknown", p->sccache_unknown);
}

static bool seconds_ok(double v)
{
        return isfinite(v) && v >= 0 && v < 1e12;
}

json_t *runjson_guard(const struct run_guard *g)
{
        if (!g->on)
                return json_null();
        return json_pack("{s:f, s:f, s:I, s:I, s:I, s:f, s:f, s:o}", "headroom_mb", g->headroom_mb,
                         "limit_mb", g->limit_mb, "units", (json_int_t)g->units, "from_ledger",
                         (json_int_t)g->from_ledger, "held", (json_int_t)g->held, "held_s",
                         g->held_s, "longest_s", g->longest_s, "longest", jsonw_str(g->longest));
}

int runjson_guard_parse(json_t *v, struct run_guard *ret)
{
        struct run_guard g = {.on = true};
        json_int_t units, ledger, held;
        const char *longest;
        size_t n;

        if (!v || json_is_null(v)) {
                *ret = (struct run_guard){0};
                return 0;
        }
        if (json_unpack(v, "{s:F, s:F, s:I, s:I, s:I, s:F, s:F, s:s%}", "headroom_mb",
                        &g.headroom_mb, "limit_mb", &g.limit_mb, "units", &units, "from_ledger",
                        &ledger, "held", &held, "held_s", &g.held_s, "longest_s", &g.longest_s,
                        "longest", &longest, &n) < 0 ||
            units < 0 || ledger < 0 || ledger > units || held < 0 || held > units ||
            !range_ok(RANGE_MIB, g.headroom_mb) || !range_ok(RANGE_MIB, g.limit_mb) ||
            !seconds_ok(g.held_s) || !seconds_ok(g.longest_s) || n > RUN_GUARD_NAME_MAX ||
            strlen(longest) != n)
                return -EINVAL;
        g.units = (uint64_t)units;
        g.from_ledger = (uint64_t)ledger;
        g.held = (uint64_t)held;
        memcpy(g.longest, longest, n + 1);
        *ret = g;
        return 0;
}

int runjson_procs_parse(json_t *v, struct run_procs *ret)
{
        struct run_procs p = {0};
        json_int_t ended, unread = 0, lost = 0;
        int on, scc = 0;
        json_t *by, *e;
        size_t i;

        if (!v || json_is_null(v)) {
                *ret = p;
                return 0;
        }
        if (json_unpack(v, "{s:I, s:F, s:b, s:F, s:F, s:F, s:o, s?I, s?I, s?b}", "ended", &ended,
                        "cpu_s", &p.cpu_s, "delayacct", &on, "delay_cpu_s", &p.delay_cpu_s,
                        "delay_io_s", &p.delay_io_s, "delay_mem_s", &p.delay_mem_s, "by_name", &by,
                        "unread", &unread, "lost", &lost, "sccache_unknown", &scc) < 0 ||
            ended < 1 || unread < 0 || lost < 0 || !seconds_ok(p.cpu_s) ||
            !seconds_ok(p.delay_cpu_s) || !seconds_ok(p.delay_io_s) || !seconds_ok(p.delay_mem_s) ||
            !json_is_array(by) || json_array_size(by) > RUN_PROCS_TOP)
                return -EINVAL;
        p.ended = (uint64_t)ended;
        p.unread = (uint64_t)unread;
        p.lost = (uint64_t)lost;
        p.delayacct = on;
        p.sccache_unknown = scc;
        json_array_foreach(by, i, e)
        {
                struct run_proc_kind *k = &p.top[p.ntop++];
                const char *comm;
                size_t n;
                json_int_t count;

                if (json_unpack(e, "{s:s%, s:I, s:F, s:F}", "comm", &comm, &n, "count", &count,
                                "cpu_s", &k->cpu_s, "peak_mb", &k->peak_mb) < 0 ||
                    n > RUN_PROCS_COMM_MAX || strlen(comm) != n || count < 0 ||
                    !seconds_ok(k->cpu_s) || !range_ok(RANGE_MIB, k->peak_mb))
                        return -EINVAL;
                memcpy(k->comm, comm, n + 1);
                k->count = (uint64_t)count;
        }
        *ret = p;
        return 0;
}

/* A string without a NUL inside, copied. */
static int get_str(json_t *v, char **ret)
{
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
                return -EINVAL;
        *ret = strdup(json_string_value(v));
        return *ret ? 0 : -ENOMEM;
}

/* *ret is set before it is filled: on failure, what was read is NULL-
 * terminated and the caller's run_info_release() frees it. */
static int get_argv(json_t *v, char ***ret)
{
        size_t n = json_array_size(v);
        int r = 0;

        if (!json_is_array(v) || n > RUN_ARGV_MAX)
                return -EINVAL;
        *ret = calloc(n + 1, sizeof(**ret));
        if (!*ret)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = get_str(json_array_get(v, i), &(*ret)[i]);
        return r;
}

/* A member that is absent or null keeps its unknown value. */
static int member_parse(json_t *o, const struct member *m, struct run_info *ri)
{
        json_t *v = json_object_get(o, m->key);
        void *p = (char *)ri + m->off;
        json_int_t i;

        if (!v || json_is_null(v))
                return 0;
        switch (m->kind & M_TYPE) {
        case M_STR:
                return get_str(v, p);
        case M_ARGV:
                return get_argv(v, p);
        case M_REAL:
                if (!json_is_number(v) || !range_ok(m->range, json_number_value(v)))
                        return -EINVAL;
                *(double *)p = json_number_value(v);
                return 0;
        case M_BOOL:
                if (!json_is_boolean(v))
                        return -EINVAL;
                *(bool *)p = json_is_true(v);
                return 0;
        default:
                break;
        }
        if (!json_is_integer(v) || !range_ok_i64(m->range, json_integer_value(v)))
                return -EINVAL;
        i = json_integer_value(v);
        if (m->kind == M_INT)
                *(int *)p = (int)i;
        if (m->kind == M_UINT)
                *(unsigned *)p = (unsigned)i;
        if (m->kind == M_LONG)
                *(long *)p = (long)i;
        return 0;
}

int runjson_parse(const char *buf, size_t len, struct run_info *ret)
{
        struct run_info ri = {
            .start_epoch = NAN,
            .end_epoch = NAN,
            .exit_code = -1,
            .interval = NAN,
        };
        json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
        int r = json_is_object(o) ? 0 : -EINVAL;

        for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(members); i++) {
                r = member_parse(o, &members[i], &ri);
                if (r == -EINVAL && (members[i].kind & M_LAX))
                        r = 0; /* tolerant: a bad job is none */
        }
        if (r >= 0)
                r = runjson_procs_parse(json_object_get(o, "processes"), &ri.procs);
        if (r >= 0)
                r = runjson_guard_parse(json_object_get(o, "memory_guard"), &ri.guard);
        json_decref(o);
        if (r >= 0)
                r = run_id_sanitize(&ri.run_id) < 0 ? -ENOMEM : 0;
        if (r < 0) {
                run_info_release(&ri);
                return r;
        }
        *ret = ri;
        return 0;
}
