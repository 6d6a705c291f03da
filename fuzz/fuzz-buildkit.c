/* SPDX-License-Identifier: MIT */
/* Fuzzes the BuildKit progress parser (plain and rawjson share one entry
 * point, buildkit_feed_line_bk): the input is split on '\n' and fed as lines;
 * the first byte picks --targets and the marker set. Checks the model
 * invariants the sinks rely on. Built twice, with a plain and a rawjson
 * seed corpus. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/critpath.h"
#include "model/targets.h"
#include "parse/buildkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_log(void *userdata, uint32_t vidx, int marker, const char *text, size_t len)
{
        size_t *n = userdata;

        (void)vidx;
        if (marker < -1 || marker >= BUILDKIT_MAX_MARKERS || (len && !text))
                abort();
        *n += len;
}

/* rawjson's context lines: "#N ...", at most 1 KiB */
static void on_ctx(void *userdata, const char *line, size_t len)
{
        (void)userdata;
        if (len < 2 || len > 1024 || line[0] != '#' || line[1] < '1' || line[1] > '9')
                abort();
}

static void check_str(const char *s, size_t max)
{
        if (strnlen(s, max + 1) > max)
                abort();
}

/* The steps' places as three owners' (a record, another, the live
 * stream), completed for the first two: cached stays within steps, and no
 * more is added than there are places. */
static void complete(const struct buildkit *b, const struct targets *ts)
{
        static struct step_place pv[TARGETS_STEPS_MAX];
        uint64_t bound = 0;
        uint32_t steps, cached;
        size_t n = 0;

        for (uint32_t i = 0; i < ts->nstepv; i++)
                if (ts->stepv[i].step &&
                    buildkit_step_place(ts->stepv[i].name, buildkit_multi(b), &pv[n])) {
                        if (pv[n].i == 0 || pv[n].n == 0)
                                abort();
                        pv[n].owner = (int32_t)(i % 3) - 1;
                        pv[n].cached = ts->stepv[i].cached;
                        n++;
                }
        buildkit_sort_places(pv, n);
        for (size_t i = 1; i < n; i++)
                if (pv[i - 1].stage > pv[i].stage)
                        abort();
        bound = n;
        for (int32_t owner = 0; owner <= 1; owner++) {
                steps = cached = 0;
                buildkit_complete_steps(pv, n, owner, &steps, &cached);
                if (cached > steps || steps > bound)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const targets[] = {"app", "tools"};
        static const char *const markers[] = {"/stats.txt", "sccache"};
        struct buildkit_config cfg = {
            .markers = markers, .nmarkers = 2, .log = on_log, .ctx = on_ctx};
        struct buildkit *b = NULL;
        static struct targets ts; /* large: keep it off the stack */
        const char *c, *end;
        size_t logged = 0;
        double now = 0;

        if (size < 1)
                return 0;
        cfg.targets = targets;
        cfg.ntargets = data[0] % 3;
        cfg.userdata = &logged;
        if (buildkit_new(&cfg, &b) < 0)
                return 0;
        c = (const char *)data + 1;
        end = (const char *)data + size;
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;
                struct bkline bl;

                bkline_parse(c, (size_t)(le - c), &bl);
                (void)buildkit_feed_line_bk(b, c, (size_t)(le - c), now, &bl);
                now += 0.25;
                c = nl ? nl + 1 : end;
        }
        targets_init(&ts);
        buildkit_finish(b, &ts);
        if (ts.n > TARGETS_MAX || ts.cached > ts.steps || ts.nfailed > TARGETS_FAILED_MAX)
                abort();
        check_str(ts.builder, TARGET_FIELD_MAX);
        { /* the steps' critical path (model/critpath.c reads their names) */
                static struct critpath cp;

                if (critpath_buildkit(&ts, &cp) == 0 &&
                    (cp.n == 0 || cp.n > CRITPATH_MAX || !(cp.length_s >= 0) ||
                     !(cp.step[0].slack_s >= 0) || !memchr(cp.target, '\0', sizeof(cp.target))))
                        abort();
        }
        for (size_t i = 0; i < ts.n; i++) {
                const struct target *t = &ts.t[i];

                if (t->cached > t->steps || t->last_seen < t->first_seen)
                        abort();
                check_str(t->name, TARGET_NAME_MAX);
                check_str(t->builder, TARGET_FIELD_MAX);
        }
        for (size_t i = 0; i < ts.nfailed; i++) {
                check_str(ts.failed[i].name, TARGET_STEP_NAME_MAX);
                if (ts.failed[i].target >= (int)ts.n)
                        abort();
        }
        for (size_t i = 0; i < cfg.nmarkers; i++) {
                uint32_t v;
                if (buildkit_marker_vertex(b, i, &v) == 0)
                        (void)buildkit_vertex_target(b, v);
        }
        if (ts.nstepv > TARGETS_STEPS_MAX)
                abort();
        for (size_t i = 0; i < ts.nstepv; i++) {
                const struct step_fact *st = &ts.stepv[i];

                if (st->target >= (int)ts.n || st->end_s < st->start_s)
                        abort();
        }
        complete(b, &ts);
        targets_release(&ts);
        buildkit_free(b);
        {
                uint32_t steps = 0, cached = 0;

                if (buildkit_count_log((const char *)data + 1, size - 1, &steps, &cached) == 0 &&
                    cached > steps)
                        abort();
        }
        return 0;
}
