/* SPDX-License-Identifier: MIT */
/* The end-of-run critical-path analysis of a ninja build (issue 38), its
 * steps as `buildtel run` takes them (pipeline/endinputs.c): the
 * .ninja_log's edges read, `ninja -C DIR -t graph` run and parsed, the
 * chain, the weighted time and the stretches under -j found. Prints each
 * step's wall time, the whole's CPU (ninja's included) and the peak RSS of
 * buildtel (VmHWM) and of ninja.
 *   bench-critpath DIR [JOBS]     (bench/gen-graph.py DIR makes one) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "model/critpath.h"
#include "parse/ninjagraph.h"
#include "parse/ninjalog.h"
#include "platform/spawn.h"
#include "util/util.h"

struct edges {
        struct ninja_edge *v;
        size_t n, cap;
};

static void keep(void *userdata, int64_t start_ms, int64_t end_ms, const char *out, size_t len)
{
        struct edges *e = userdata;

        if (e->n == e->cap) {
                e->cap = e->cap ? 2 * e->cap : 1024;
                e->v = reallocarray(e->v, e->cap, sizeof(*e->v));
                if (!e->v)
                        exit(1);
        }
        e->v[e->n] = (struct ninja_edge){start_ms, end_ms, ""};
        copy_utf8(e->v[e->n++].output, sizeof(e->v[0].output), out, len);
}

static long vmhwm_kib(void)
{
        char buf[4096], *p;
        int fd = open("/proc/self/status", O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strstr(buf, "VmHWM:");
        return p ? strtol(p + 6, NULL, 10) : -1;
}

static double cpu_s(int who)
{
        struct rusage ru;

        getrusage(who, &ru);
        return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
        char log[4096], a0[] = "ninja", a1[] = "-C", a3[] = "-t", a4[] = "graph";
        char *av[] = {a0, a1, argc > 1 ? argv[1] : NULL, a3, a4, NULL};
        struct spawn_config sc = {.argv = av, .out_max = 256u << 20, .timeout_s = 120};
        struct spawn_result res;
        struct edges e = {0};
        struct ninjagraph *g = NULL;
        struct critpath *p = malloc(sizeof(*p));
        struct rusage ru;
        double t0, t1, t2 = 0, t3, t4;
        int fd, r;

        if (argc < 2 || !p) {
                fprintf(stderr, "usage: bench-critpath DIR [JOBS]\n");
                return 2;
        }
        snprintf(log, sizeof(log), "%s/.ninja_log", argv[1]);
        t0 = now_monotonic();
        fd = open(log, O_RDONLY | O_CLOEXEC);
        r = fd < 0 ? -errno : ninjalog_read_range(fd, 0, UINT64_MAX, NULL, 0, keep, &e);
        t1 = now_monotonic();
        if (r >= 0 && (r = spawn_capture(&sc, &res)) == 0) {
                t2 = now_monotonic();
                r = ninjagraph_parse(res.out, res.out_len, &g);
                spawn_result_release(&res);
        }
        t3 = now_monotonic();
        if (r >= 0)
                r = critpath_ninja(ninjagraph_inputs, g, e.v, e.n,
                                   argc > 2 ? (unsigned)atoi(argv[2]) : 32, p);
        t4 = now_monotonic();
        if (r < 0) {
                fprintf(stderr, "bench-critpath: %s\n", strerror(-r));
                return 1;
        }
        getrusage(RUSAGE_CHILDREN, &ru);
        printf("%zu edges; the path: %zu edges, %.1f s of the %.1f s wall, ends at %s\n", e.n,
               p->n + p->dropped, p->length_s, p->wall_s, p->step[p->n - 1].name);
        printf("read the log %.3f s, ninja -t graph %.3f s, parse %.3f s, path %.3f s\n", t1 - t0,
               t2 - t1, t3 - t2, t4 - t3);
        printf("total: %.3f s wall, %.3f s CPU (buildtel %.3f, ninja %.3f)\n", t4 - t0,
               cpu_s(RUSAGE_SELF) + cpu_s(RUSAGE_CHILDREN), cpu_s(RUSAGE_SELF),
               cpu_s(RUSAGE_CHILDREN));
        printf("peak RSS: buildtel %.1f MiB, ninja %.1f MiB\n", vmhwm_kib() / 1024.0,
               ru.ru_maxrss / 1024.0);
        ninjagraph_free(g);
        free(e.v);
        free(p);
        return 0;
}
