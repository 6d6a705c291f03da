/* SPDX-License-Identifier: MIT */
#include "parse/bkrecord.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>

#include "util/util.h"

/* A number of the sample (path: up to two member names), NAN absent. */
static double num(const json_t *o, const char *a, const char *b)
{
        const json_t *v = json_object_get(json_object_get(o, a), b);

        return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The usage of one step from its samples: counters (CPU, IO, network) at
 * the last sample, peaks the largest of any. */
static void usage(const json_t *samples, struct step_exec *u)
{
        const json_t *last = json_array_get(samples, json_array_size(samples) - 1), *s;
        size_t i;

        step_exec_clear(u);
        if (!json_is_object(last))
                return;
        u->cpu_s = num(last, "cpuStat", "usageNanos") / 1e9;
        u->io_read_bytes = num(last, "ioStat", "readBytes");
        u->io_write_bytes = num(last, "ioStat", "writeBytes");
        u->net_rx_bytes = num(last, "netStat", "rxBytes");
        u->net_tx_bytes = num(last, "netStat", "txBytes");
        json_array_foreach(samples, i, s)
        {
                u->mem_peak_bytes = execs_max(u->mem_peak_bytes, num(s, "memoryStat", "peak"));
                u->anon_peak_bytes = execs_max(u->anon_peak_bytes, num(s, "memoryStat", "anon"));
                u->oom_kills = execs_max(u->oom_kills, num(s, "memoryStat", "oomKillEvents"));
        }
        /* omitempty: a sampled memory controller with no kill says none */
        if (isnan(u->oom_kills) && json_object_get(last, "memoryStat"))
                u->oom_kills = 0;
        /* samples of nothing (dockerd's systemd driver: BuildKit looks for
         * the exec cgroup where it is not) are no usage */
        u->set = u->from_record = !isnan(u->cpu_s) || !isnan(u->mem_peak_bytes);
}

/* The command of an exec op's argv (NULL env: as written). */
static void command(const json_t *meta, const json_t *env, char *out, size_t cap)
{
        char argv[4 * BKRUN_CMD_MAX];
        int n = json_argv(json_object_get(meta, "args"), env, argv, sizeof(argv));

        out[0] = '\0';
        if (n > 0)
                (void)bkrun_argv_cmd(argv, (size_t)n, out, cap);
}

int bkrecord_parse(const char *buf, size_t len, bkrecord_fn cb, void *userdata)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *p, *defs, *d;
        size_t i;
        int n = 0;

        p = json_object_get(root, "predicate") ? json_object_get(root, "predicate") : root;
        defs = json_object_get(json_object_get(p, "buildConfig"), "llbDefinition");
        if (!defs) /* SLSA v1 */
                defs = json_object_get(
                    json_object_get(json_object_get(json_object_get(p, "buildDefinition"),
                                                    "externalParameters"),
                                    "buildConfig"),
                    "llbDefinition");
        if (!json_is_array(defs)) {
                json_decref(root);
                return -EINVAL;
        }
        json_array_foreach(defs, i, d)
        {
                const json_t *meta = json_object_get(
                    json_object_get(json_object_get(json_object_get(d, "op"), "Op"), "exec"),
                    "meta");
                struct bkrecord_step st;

                if (!json_is_object(meta))
                        continue;
                command(meta, NULL, st.cmd, sizeof(st.cmd));
                command(meta, json_object_get(meta, "env"), st.xcmd, sizeof(st.xcmd));
                usage(json_object_get(json_object_get(d, "resourceUsage"), "samples"), &st.u);
                n += st.u.set;
                cb(userdata, &st);
        }
        json_decref(root);
        return n;
}
