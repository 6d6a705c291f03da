/* SPDX-License-Identifier: MIT */
/* The OTLP environment of run and watch: the configuration from options and
 * OTEL_* variables, the run span, and the child's TRACEPARENT. */
#include "cmd/cmd-common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "platform/child.h"
#include "util/macro.h"
#include "util/util.h"

static const char *env_lookup(void *userdata, const char *name)
{
        return getenv(name);
}

int common_otlp_run_span(struct otel_config *c, const char *run_id)
{
        uint8_t rnd[16];

        if (!c->enabled)
                return 0;
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
                /* cannot happen on Linux >= 3.17 once booted; still unique */
                uint64_t x =
                    (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(now_realtime() * 1e9);
                for (size_t i = 0; i < sizeof(rnd); i++)
                        rnd[i] = (uint8_t)(x >> (8 * (i % 8))) ^ (uint8_t)(i * 37);
        }
        otelenv_set_run_span(c, rnd, run_id);
        return 0;
}

int common_otlp_load(struct common_opts *o, const char *cmd)
{
        int e;

        otel_config_release(&o->otlp);
        e = otelenv_load(env_lookup, NULL, &o->otlp_opt, common_note, NULL, &o->otlp);
        if (e == -EINVAL) {
                /* never echo the value: a URL may carry user:password */
                fprintf(
                    stderr,
                    "buildtel %s: --otlp-endpoint takes an http:// or https:// URL with a host\n",
                    cmd);
                return -1;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
        o->rec.otlp = &o->otlp;
        /* the run id now: the run span's id derives from it */
        if (!o->run_id[0])
                common_make_run_id(o->run_id, sizeof(o->run_id));
        if (common_otlp_run_span(&o->otlp, o->run_id) < 0) {
                fprintf(stderr, "buildtel %s: out of memory\n", cmd);
                return -1;
        }
        return 0;
}

int common_otlp_child_env(const struct common_opts *o, struct otlp_child_env *ret)
{
        static char no_state[] = "TRACESTATE"; /* removes it */
        char *set[2];
        size_t n = 0;

        *ret = (struct otlp_child_env){0};
        if (!o->otlp.enabled || !o->otlp.traces_url || !o->otlp.span_set)
                return 0;
        memcpy(ret->traceparent, "TRACEPARENT=", 12);
        (void)otelenv_format_traceparent(&o->otlp.span, ret->traceparent + 12,
                                         sizeof(ret->traceparent) - 12);
        set[n++] = ret->traceparent;
        if (o->otlp.has_trace && o->otlp.tracestate) {
                if (asprintf(&ret->tracestate, "TRACESTATE=%s", o->otlp.tracestate) < 0) {
                        ret->tracestate = NULL;
                        return -ENOMEM;
                }
                set[n++] = ret->tracestate;
        } else {
                set[n++] = no_state; /* a new trace: no one else's state */
        }
        return child_env_with(set, n, &ret->envp);
}

void common_otlp_child_env_release(struct otlp_child_env *ce)
{
        free(ce->envp);
        free(ce->tracestate);
        *ce = (struct otlp_child_env){0};
}
