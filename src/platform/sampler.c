/* SPDX-License-Identifier: MIT */
#include "platform/sampler.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "platform/procfs.h"
#include "util/macro.h"

/* The kernel keeps a task's comm in 16 bytes with the NUL. */
#define COMM_MAX 15

const char *const sampler_default_compilers[] = {
    "cc1plus", "cc1",    "cc1obj",   "clang", "clang++", "rustc", "lto1", "ld",
    "ld.gold", "ld.lld", "collect2", "nvcc",  "cicc",    "ptxas", NULL,
};

struct sampler {
        struct procfs *procfs;
        char *disk_path;
        char **names; /* NULL-terminated, each cut to COMM_MAX bytes */
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
        if (s->names)
                for (size_t i = 0; i < s->n_names; i++)
                        free(s->names[i]);
        free(s->names);
        free(s);
}

int sampler_new(const struct sampler_config *cfg, struct sampler **ret)
{
        const char *const *list;
        struct sampler *s;
        size_t n = 0;
        int r;

        if (!cfg || !ret)
                return -EINVAL;
        list = cfg->compilers ? cfg->compilers : sampler_default_compilers;
        while (list[n])
                n++;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        r = procfs_new(cfg->root ? cfg->root : "/", &s->procfs);
        if (r < 0)
                goto fail;
        if (cfg->disk_path) {
                s->disk_path = strdup(cfg->disk_path);
                if (!s->disk_path)
                        goto nomem;
        }
        s->names = calloc(n + 1, sizeof(*s->names));
        if (!s->names)
                goto nomem;
        for (size_t i = 0; i < n; i++) {
                /* comm holds only the first 15 bytes of a longer name, so
                 * "x86_64-linux-gnu-gcc" is matched as "x86_64-linux-gn". */
                s->names[i] = strndup(list[i], COMM_MAX);
                if (!s->names[i])
                        goto nomem;
                s->n_names++;
        }
        s->have_prev = procfs_cpustat(s->procfs, &s->prev) >= 0;
        *ret = s;
        return 0;
nomem:
        r = -ENOMEM;
fail:
        sampler_free(s);
        return r;
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

static double kb_to_mb(uint64_t kb)
{
        return (double)kb / 1024.0;
}

int sampler_take(struct sampler *s, struct sample *ret)
{
        struct cpustat cs;
        struct meminfo mi;
        struct loadavg la;
        struct statvfs sv;
        struct walk w = {.s = s};
        int first_err = 0, ok = 0, r;

#define FAILED(err)                                                                                \
        do {                                                                                       \
                if (first_err == 0)                                                                \
                        first_err = (err);                                                         \
        } while (0)

        r = procfs_loadavg(s->procfs, &la);
        if (r >= 0) {
                ret->load1 = la.load1;
                ok++;
        } else {
                ret->load1 = NAN;
                FAILED(r);
        }

        r = procfs_cpustat(s->procfs, &cs);
        ret->cpu_pct = NAN;
        if (r >= 0) {
                if (s->have_prev) {
                        uint64_t t0 = cpustat_total(&s->prev), t1 = cpustat_total(&cs);
                        uint64_t b0 = cpustat_busy(&s->prev), b1 = cpustat_busy(&cs);

                        /* iowait may go backwards on some kernels, which can
                         * drive busy past total: clamp into [0, 100]. */
                        if (t1 > t0) {
                                double busy = b1 > b0 ? (double)(b1 - b0) : 0.0;
                                double total = (double)(t1 - t0);

                                ret->cpu_pct = MIN(busy, total) / total * 100.0;
                        }
                }
                s->prev = cs;
                s->have_prev = true;
                ok++;
        } else {
                FAILED(r);
        }

        r = procfs_meminfo(s->procfs, &mi);
        if (r >= 0) {
                uint64_t pcp_kb;

                /* Free pages on the per-CPU lists are free to any allocation
                 * but missing from MemAvailable: without them an allocation
                 * served from those lists would not show as used. */
                if (procfs_pcp_free_kb(s->procfs, &pcp_kb) >= 0)
                        mi.available_kb = MIN(mi.total_kb, mi.available_kb + pcp_kb);
        }
        if (r >= 0) {
                uint64_t used = mi.total_kb > mi.available_kb ? mi.total_kb - mi.available_kb : 0;
                uint64_t swap =
                    mi.swap_total_kb > mi.swap_free_kb ? mi.swap_total_kb - mi.swap_free_kb : 0;

                ret->mem_used_mb = kb_to_mb(used);
                ret->mem_avail_mb = kb_to_mb(mi.available_kb);
                ret->mem_pct = mi.total_kb > 0 ? (double)used / (double)mi.total_kb * 100.0 : NAN;
                ret->swap_used_mb = kb_to_mb(swap);
                ok++;
        } else {
                ret->mem_used_mb = ret->mem_avail_mb = ret->mem_pct = ret->swap_used_mb = NAN;
                FAILED(r);
        }

        ret->disk_avail_gb = ret->disk_pct = NAN;
        if (s->disk_path) {
                if (statvfs(s->disk_path, &sv) >= 0) {
                        /* As df: used over what root sees used plus what a
                         * user may still take, so reserved blocks count as
                         * neither. */
                        double used = (double)(sv.f_blocks - MIN(sv.f_bfree, sv.f_blocks));
                        double denom = used + (double)sv.f_bavail;

                        ret->disk_avail_gb =
                            (double)sv.f_bavail * (double)sv.f_frsize / 1073741824.0;
                        if (denom > 0)
                                ret->disk_pct = used / denom * 100.0;
                        ok++;
                } else {
                        FAILED(-errno);
                }
        }

        if (s->pids) {
                /* The build's own processes only; one that is gone since
                 * the list was read is simply not counted. */
                for (size_t i = 0; i < s->npids; i++) {
                        struct pidstat ps;

                        if (procfs_pidstat(s->procfs, s->pids[i], &ps) >= 0)
                                (void)count_compiler(&ps, &w);
                }
                r = 0;
        } else {
                r = procfs_foreach_pid(s->procfs, count_compiler, &w);
        }
        if (r >= 0) {
                ret->compilers = (double)w.count;
                ok++;
        } else {
                ret->compilers = NAN;
                FAILED(r);
        }
#undef FAILED

        return ok > 0 ? 0 : first_err;
}
