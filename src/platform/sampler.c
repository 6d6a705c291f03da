/* SPDX-License-Identifier: MIT */
#include "platform/sampler.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "platform/procfs.h"
#include "model/compilers.h"
#include "util/macro.h"

/* The kernel keeps a task's comm in 16 bytes with the NUL. */
#define COMM_MAX 15

struct sampler {
        struct procfs *procfs;
        char *disk_path;
        char (*names)[COMM_MAX + 1]; /* each cut to COMM_MAX bytes */
        size_t n_names;
        struct cpustat prev;
        bool have_prev;
        const long *pids; /* NULL: walk all of /proc */
        size_t npids;
        sampler_proc_fn proc_cb;
        void *proc_userdata;
};

void sampler_free(struct sampler *s)
{
        if (!s)
                return;
        procfs_free(s->procfs);
        free(s->disk_path);
        free(s->names);
        free(s);
}

int sampler_new(const struct sampler_config *cfg, struct sampler **ret)
{
        const char *defaults[64];
        const char *const *list;
        struct sampler *s;
        size_t n = 0;
        int r;

        if (!cfg || !ret)
                return -EINVAL;
        if (!cfg->compilers)
                (void)compilers_list(TOOL_COUNTED, defaults, ARRAY_SIZE(defaults));
        list = cfg->compilers ? cfg->compilers : defaults;
        while (list[n])
                n++;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->disk_path = cfg->disk_path ? strdup(cfg->disk_path) : NULL;
        s->names = calloc(n + 1, sizeof(*s->names));
        r = !s->names || (cfg->disk_path && !s->disk_path)
                ? -ENOMEM
                : procfs_new(cfg->root ? cfg->root : "/", &s->procfs);
        if (r < 0) {
                sampler_free(s);
                return r;
        }
        /* comm holds only the first 15 bytes of a longer name, so
         * "x86_64-linux-gnu-gcc" is matched as "x86_64-linux-gn". */
        for (size_t i = 0; i < n; i++)
                memcpy(s->names[i], list[i], strnlen(list[i], COMM_MAX));
        s->n_names = n;
        s->have_prev = procfs_cpustat(s->procfs, &s->prev) >= 0;
        *ret = s;
        return 0;
}

struct procfs *sampler_procfs(struct sampler *s)
{
        return s->procfs;
}

void sampler_set_pids(struct sampler *s, const long *pids, size_t n, sampler_proc_fn cb,
                      void *userdata)
{
        s->pids = pids;
        s->npids = pids ? n : 0;
        s->proc_cb = cb;
        s->proc_userdata = userdata;
}

struct walk {
        const struct sampler *s;
        unsigned count;
};

static int count_compiler(const struct pidstat *ps, void *userdata)
{
        struct walk *w = userdata;

        if (w->s->proc_cb)
                w->s->proc_cb(w->s->proc_userdata, ps);
        /* A zombie has stopped compiling; it only waits to be reaped. */
        if (ps->state == 'Z' || ps->state == 'X' || ps->state == 'x')
                return 0;
        for (size_t i = 0; i < w->s->n_names; i++)
                if (strcmp(ps->comm, w->s->names[i]) == 0) {
                        w->count++;
                        break;
                }
        return 0;
}

/* A tick's reads each fill their fields (NAN when unreadable) and say how
 * it went: the take fails only when nothing could be read. */
struct take {
        int ok;
        int first_err;
};

static void took(struct take *t, int r)
{
        if (r >= 0)
                t->ok++;
        else if (t->first_err == 0)
                t->first_err = r;
}

static void take_load(struct sampler *s, struct take *t, struct sample *ret)
{
        struct loadavg la;
        int r = procfs_loadavg(s->procfs, &la);

        ret->load1 = r >= 0 ? la.load1 : NAN;
        took(t, r);
}

static void take_cpu(struct sampler *s, struct take *t, struct sample *ret)
{
        struct cpustat cs;
        int r = procfs_cpustat(s->procfs, &cs);

        ret->cpu_pct = NAN;
        took(t, r);
        if (r < 0)
                return;
        if (s->have_prev) {
                uint64_t t0 = cpustat_total(&s->prev), t1 = cpustat_total(&cs);
                uint64_t b0 = cpustat_busy(&s->prev), b1 = cpustat_busy(&cs);

                /* iowait may go backwards on some kernels, which can drive
                 * busy past total: clamp into [0, 100]. */
                if (t1 > t0) {
                        double busy = b1 > b0 ? (double)(b1 - b0) : 0.0;
                        double total = (double)(t1 - t0);

                        ret->cpu_pct = MIN(busy, total) / total * 100.0;
                }
        }
        s->prev = cs;
        s->have_prev = true;
}

static void take_mem(struct sampler *s, struct take *t, struct sample *ret)
{
        struct meminfo mi;
        uint64_t pcp_kb, used, swap;
        int r = procfs_meminfo(s->procfs, &mi);

        took(t, r);
        if (r < 0) {
                ret->mem_used_bytes = ret->mem_avail_bytes = ret->mem_pct = NAN;
                ret->swap_used_bytes = NAN;
                return;
        }
        /* Free pages on the per-CPU lists are free to any allocation but
         * missing from MemAvailable: without them an allocation served from
         * those lists would not show as used. */
        if (procfs_pcp_free_kb(s->procfs, &pcp_kb) >= 0)
                mi.available_kb = MIN(mi.total_kb, mi.available_kb + pcp_kb);
        used = mi.total_kb > mi.available_kb ? mi.total_kb - mi.available_kb : 0;
        swap = mi.swap_total_kb > mi.swap_free_kb ? mi.swap_total_kb - mi.swap_free_kb : 0;
        ret->mem_used_bytes = (double)used * 1024.0;
        ret->mem_avail_bytes = (double)mi.available_kb * 1024.0;
        ret->mem_pct = mi.total_kb > 0 ? (double)used / (double)mi.total_kb * 100.0 : NAN;
        ret->swap_used_bytes = (double)swap * 1024.0;
}

static void take_disk(struct sampler *s, struct take *t, struct sample *ret)
{
        struct statvfs sv;
        double used, denom;

        ret->disk_avail_bytes = ret->disk_pct = NAN;
        if (!s->disk_path)
                return;
        if (statvfs(s->disk_path, &sv) < 0) {
                took(t, -errno);
                return;
        }
        /* As df: used over what root sees used plus what a user may still
         * take, so reserved blocks count as neither. */
        used = (double)(sv.f_blocks - MIN(sv.f_bfree, sv.f_blocks));
        denom = used + (double)sv.f_bavail;
        ret->disk_avail_bytes = (double)sv.f_bavail * (double)sv.f_frsize;
        if (denom > 0)
                ret->disk_pct = used / denom * 100.0;
        took(t, 0);
}

static void take_compilers(struct sampler *s, struct take *t, struct sample *ret)
{
        struct walk w = {.s = s};
        int r = 0;

        if (s->pids) {
                /* The build's own processes only; one that is gone since
                 * the list was read is simply not counted. */
                for (size_t i = 0; i < s->npids; i++) {
                        struct pidstat ps;

                        if (procfs_pidstat(s->procfs, s->pids[i], &ps) >= 0)
                                (void)count_compiler(&ps, &w);
                }
        } else {
                r = procfs_foreach_pid(s->procfs, count_compiler, &w);
        }
        ret->compilers = r >= 0 ? (double)w.count : NAN;
        took(t, r);
}

int sampler_take(struct sampler *s, struct sample *ret)
{
        struct take t = {0};

        take_load(s, &t, ret);
        take_cpu(s, &t, ret);
        take_mem(s, &t, ret);
        take_disk(s, &t, ret);
        take_compilers(s, &t, ret);
        return t.ok > 0 ? 0 : t.first_err;
}
