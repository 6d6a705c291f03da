/* SPDX-License-Identifier: MIT */
/* resources-<id>.run.json: the run's facts, written and read back. */
#include "runfiles/runjson.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranges.h"
#include "render/jsonw.h"

/* A run.json is ours, but it sits on disk: cap what we accept. */
#define RUN_ARGV_MAX 65536

/* json_object_set_new() steals v even on failure; a NULL v is taken as
 * "out of memory" by the callers, who pass null explicitly. */
static int set(json_t *o, const char *key, json_t *v)
{
        if (!v)
                return -ENOMEM;
        return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

static json_t *str_or_null(const char *s)
{
        return s ? jsonw_str(s) : json_null();
}

static json_t *real_or_null(double v)
{
        return isfinite(v) ? json_real(v) : json_null();
}

int runjson_format(const struct run_info *ri, struct dbuf *out)
{
        json_t *o = json_object(), *argv = NULL;
        char *text = NULL;
        int r = -ENOMEM;

        if (!o)
                return -ENOMEM;
        /* members go in in the order they print */
        if (set(o, "run_id", str_or_null(ri->run_id)) < 0 ||
            set(o, "kind", str_or_null(ri->kind)) < 0)
                goto out;
        if (ri->argv) {
                argv = json_array();
                if (!argv)
                        goto out;
                for (char **a = ri->argv; *a; a++)
                        if (json_array_append_new(argv, jsonw_str(*a)) < 0) {
                                json_decref(argv);
                                goto out;
                        }
        } else {
                argv = json_null();
        }
        if (set(o, "argv", argv) < 0 || set(o, "cwd", str_or_null(ri->cwd)) < 0 ||
            set(o, "host", str_or_null(ri->host)) < 0 ||
            set(o, "start_epoch", real_or_null(ri->start_epoch)) < 0 ||
            set(o, "end_epoch", real_or_null(ri->end_epoch)) < 0 ||
            set(o, "finished", json_boolean(ri->finished)) < 0 ||
            set(o, "exit_code", json_integer(ri->exit_code)) < 0 ||
            set(o, "term_signal", json_integer(ri->term_signal)) < 0 ||
            set(o, "ncpu", json_integer(ri->ncpu)) < 0 ||
            set(o, "interval", real_or_null(ri->interval)) < 0 ||
            set(o, "pid", json_integer(ri->pid)) < 0 ||
            (ri->exit_comm && set(o, "exit_comm", jsonw_str(ri->exit_comm)) < 0) ||
            (ri->job && set(o, "job", jsonw_str(ri->job)) < 0))
                goto out;
        text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        if (!text)
                goto out;
        r = dbuf_puts(out, text);
        if (r >= 0)
                r = dbuf_append(out, "\n", 1);
out:
        free(text);
        json_decref(o);
        return r;
}

/* A member that is absent or null keeps *ret as it is. */
static int get_str(json_t *o, const char *key, char **ret)
{
        json_t *v = json_object_get(o, key);
        char *s;

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
                return -EINVAL;
        s = strdup(json_string_value(v));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int get_real(json_t *o, const char *key, enum range_kind range, double *ret)
{
        json_t *v = json_object_get(o, key);

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_number(v) || !range_ok(range, json_number_value(v)))
                return -EINVAL;
        *ret = json_number_value(v);
        return 0;
}

static int get_int(json_t *o, const char *key, enum range_kind range, long long *ret)
{
        json_t *v = json_object_get(o, key);

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_integer(v) || !range_ok_i64(range, json_integer_value(v)))
                return -EINVAL;
        *ret = json_integer_value(v);
        return 0;
}

static int get_argv(json_t *o, char ***ret)
{
        json_t *v = json_object_get(o, "argv");
        char **argv;
        size_t n;

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_array(v) || json_array_size(v) > RUN_ARGV_MAX)
                return -EINVAL;
        n = json_array_size(v);
        argv = calloc(n + 1, sizeof(*argv));
        if (!argv)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_t *a = json_array_get(v, i);
                int r = -EINVAL;

                if (json_is_string(a) && strlen(json_string_value(a)) == json_string_length(a)) {
                        argv[i] = strdup(json_string_value(a));
                        r = argv[i] ? 0 : -ENOMEM;
                }
                if (r < 0) {
                        for (size_t k = 0; k < i; k++)
                                free(argv[k]);
                        free(argv);
                        return r;
                }
        }
        *ret = argv;
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
        long long exit_code = -1, sig = 0, ncpu = 0, pid = 0;
        json_t *v, *o;
        int r;

        o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
        if (!o)
                return -EINVAL;
        if (!json_is_object(o)) {
                json_decref(o);
                return -EINVAL;
        }
        r = get_str(o, "run_id", &ri.run_id);
        if (r >= 0)
                r = get_str(o, "kind", &ri.kind);
        if (r >= 0)
                r = get_argv(o, &ri.argv);
        if (r >= 0)
                r = get_str(o, "cwd", &ri.cwd);
        if (r >= 0)
                r = get_str(o, "host", &ri.host);
        if (r >= 0)
                r = get_real(o, "start_epoch", RANGE_EPOCH, &ri.start_epoch);
        if (r >= 0)
                r = get_real(o, "end_epoch", RANGE_EPOCH, &ri.end_epoch);
        if (r >= 0)
                r = get_real(o, "interval", RANGE_INTERVAL, &ri.interval);
        if (r >= 0)
                r = get_int(o, "exit_code", RANGE_EXIT_CODE, &exit_code);
        if (r >= 0)
                r = get_int(o, "term_signal", RANGE_SIGNAL, &sig);
        if (r >= 0)
                r = get_int(o, "ncpu", RANGE_NCPU, &ncpu);
        if (r >= 0)
                r = get_int(o, "pid", RANGE_PID, &pid);
        if (r >= 0)
                r = get_str(o, "exit_comm", &ri.exit_comm);
        if (r >= 0 && get_str(o, "job", &ri.job) == -ENOMEM) /* tolerant: a bad job is none */
                r = -ENOMEM;
        if (r >= 0) {
                v = json_object_get(o, "finished");
                if (json_is_boolean(v))
                        ri.finished = json_is_true(v);
                else if (v && !json_is_null(v))
                        r = -EINVAL;
        }
        json_decref(o);
        if (r < 0) {
                run_info_release(&ri);
                return r;
        }
        if (run_id_sanitize(&ri.run_id) < 0) {
                run_info_release(&ri);
                return -ENOMEM;
        }
        ri.exit_code = (int)exit_code;
        ri.term_signal = (int)sig;
        ri.ncpu = (unsigned)ncpu;
        ri.pid = (long)pid;
        *ret = ri;
        return 0;
}
