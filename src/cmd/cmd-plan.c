/* SPDX-License-Identifier: MIT */
/* buildtel plan: from the job's unit ledger, the -j that fits a machine
 * and the pool that keeps its heavy units apart (issue 37). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "model/jobname.h"
#include "model/ledger.h"
#include "model/plan.h"
#include "platform/procfs.h"
#include "render/plan.h"
#include "util/util.h"

/* The newest run's job: the default. */
static int newest_job(void *userdata, const struct store_run *r)
{
        char **job = userdata;

        if (!*job && r->info.job && r->info.job[0])
                *job = strdup(r->info.job);
        return 0;
}

/* This host's memory (MiB) and CPUs, for what was not given. */
static void host_size(double *mb, unsigned *cpus)
{
        struct procfs *p;
        struct meminfo mi;
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        if (*mb <= 0 && procfs_new("/", &p) >= 0) {
                if (procfs_meminfo(p, &mi) >= 0)
                        *mb = (double)mi.total_kb / 1024.0;
                procfs_free(p);
        }
        if (*cpus == 0)
                *cpus = n > 0 ? (unsigned)n : 1;
}

int cmd_plan(int argc, char **argv)
{
        struct common_opts co;
        struct store *st = NULL;
        struct ledger *l = NULL;
        _cleanup_free_ char *job = NULL;
        struct plan p;
        _cleanup_dbuf_ struct dbuf out = DBUF_INIT;
        double mb;
        unsigned cpus;
        int k, n, ret;

        ret = history_opts_parse("plan", argc, argv, &co, &k);
        if (ret >= 0)
                return ret;
        if (k < argc) {
                fprintf(stderr, "buildtel plan: no operands, only options\n");
                return EXIT_BT_USAGE;
        }
        ret = 1;
        mb = (double)co.plan_memory / 1048576.0;
        cpus = (unsigned)co.plan_cpus;
        host_size(&mb, &cpus);
        if (history_open("plan", co.rec.db_path, false, &st) != 0)
                goto out;
        /* given, or the CI's; else the newest run's (a name from the cwd
         * would be run's with no command: no job of the history) */
        if (co.job || getenv("BUILDTEL_JOB") || getenv("GITHUB_JOB") || getenv("CI_JOB_NAME")) {
                if (jobname_get(co.job, NULL, NULL, common_getenv, NULL, &job) < 0)
                        goto oom;
        } else {
                (void)store_runs_each(st, NAN, 1, newest_job, &job);
        }
        if (!job) {
                fprintf(stderr, "buildtel plan: no run recorded yet: nothing to plan from\n");
                goto out;
        }
        if (ledger_new(&l) < 0)
                goto oom;
        n = store_job_ledger(st, job, NULL, l);
        if (n < 0) {
                fprintf(stderr, "buildtel plan: the history: %s\n", store_strerror(n));
                goto out;
        }
        if (plan_make(l, mb, cpus,
                      isnan(co.guard_headroom_mb) || co.guard_headroom_mb <= 0
                          ? plan_headroom_mb(mb)
                          : co.guard_headroom_mb,
                      &p) < 0) {
                fprintf(stderr,
                        "buildtel plan: job '%s' has no measured units (%d runs; a unit the "
                        "compiler cache served measures nothing)\n",
                        job, n);
                goto out;
        }
        if ((co.json ? render_plan_json(job, (unsigned)n, l, &p, &out)
                     : render_plan_text(job, (unsigned)n, l, &p, &out)) < 0)
                goto oom;
        fwrite(out.p, 1, out.len, stdout);
        if (co.json)
                fputc('\n', stdout);
        ret = fflush(stdout) == 0 ? 0 : 1;
        goto out;
oom:
        fprintf(stderr, "buildtel plan: out of memory\n");
out:
        ledger_free(l);
        store_close(st);
        return ret;
}
