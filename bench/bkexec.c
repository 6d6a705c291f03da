/* SPDX-License-Identifier: MIT */
/* CPU per tick with 20 BuildKit exec cgroups of the build alive, beside
 * the same tick without any (issue 25). The execs are real cgroups in
 * every mounted hierarchy (bench-bkexec-PID/buildkit/eN), each holding a
 * sleeping process whose parent is named runc under a process named
 * dockerd, as the platform layer finds BuildKit's; no daemon is needed.
 * One tick: the host sample over the pids, bkexec_tick, the walk's
 * per-process reads handed to bkexec_consider, bkexec_end and the totals.
 * Pairs of batches are interleaved (with, without) and the ratio is the
 * median of the pairs'. Root only.
 *   bench-bkexec [PAIRS [TICKS]] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/sample.h"
#include "platform/bkexec.h"
#include "platform/procfs.h"
#include "platform/sampler.h"

#define NEXEC 20

static const char *const hier[] = {"memory", "cpuacct", "cpu,cpuacct", "blkio", "pids",
                                   "unified", ""};
static char base[64];

static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(const char *path, long v)
{
        char s[32];
        int fd = open(path, O_WRONLY);
        int n = snprintf(s, sizeof(s), "%ld", v);

        if (fd >= 0) {
                if (write(fd, s, (size_t)n) < 0)
                        perror(path);
                close(fd);
        }
}

/* On cgroup v2, enable the controllers a step's exec cgroup is read for
 * down to the children of d (d and its parent). */
static void controllers(const char *d)
{
        char p[300];
        const char *c[] = {"+memory", "+cpu", "+io", "+pids"};

        for (int up = 1; up >= 0; up--) {
                snprintf(p, sizeof(p), "%s", d);
                if (up)
                        *strrchr(p, '/') = '\0';
                strcat(p, "/cgroup.subtree_control");
                for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                        int fd = open(p, O_WRONLY);

                        if (fd >= 0) {
                                if (write(fd, c[i], strlen(c[i])) < 0)
                                        perror(p);
                                close(fd);
                        }
                }
        }
}

/* Make or remove the exec cgroups in every hierarchy mounted here. */
static void cgroups(bool make)
{
        for (size_t h = 0; h < sizeof(hier) / sizeof(hier[0]); h++) {
                char d[256];
                struct stat st;

                snprintf(d, sizeof(d), "/sys/fs/cgroup/%s%s%s", hier[h], hier[h][0] ? "/" : "",
                         base);
                if (make) {
                        char up[256];
                        snprintf(up, sizeof(up), "/sys/fs/cgroup/%s", hier[h]);
                        if (stat(up, &st) < 0 || (h == 6 && stat("/sys/fs/cgroup/memory", &st) == 0))
                                continue; /* hybrid: the unified one is "unified" */
                        mkdir(d, 0755);
                        strcat(d, "/buildkit");
                        mkdir(d, 0755);
                        if (h == 6) /* pure v2: the execs' files, as dockerd's have them */
                                controllers(d);
                        for (int i = 0; i < NEXEC; i++) {
                                char e[300];
                                snprintf(e, sizeof(e), "%s/e%d", d, i);
                                mkdir(e, 0755);
                        }
                } else {
                        for (int i = 0; i < NEXEC; i++) {
                                char e[320];
                                snprintf(e, sizeof(e), "%s/buildkit/e%d", d, i);
                                rmdir(e);
                        }
                        strcat(d, "/buildkit");
                        rmdir(d);
                        *strrchr(d, '/') = '\0';
                        rmdir(d);
                }
        }
}

static void join(int i, pid_t pid)
{
        for (size_t h = 0; h < sizeof(hier) / sizeof(hier[0]); h++) {
                char p[320];
                snprintf(p, sizeof(p), "/sys/fs/cgroup/%s%s%s/buildkit/e%d/cgroup.procs", hier[h],
                         hier[h][0] ? "/" : "", base, i);
                if (access(p, W_OK) == 0)
                        put(p, pid);
        }
}

/* "dockerd" -> "runc" -> NEXEC sleepers, each in its exec cgroup. */
static pid_t start_tree(void)
{
        pid_t d = fork();

        if (d != 0)
                return d;
        setpgid(0, 0);
        prctl(PR_SET_NAME, "dockerd");
        if (fork() == 0) {
                prctl(PR_SET_NAME, "runc");
                for (int i = 0; i < NEXEC; i++) {
                        pid_t c = fork();
                        if (c == 0) {
                                join(i, getpid());
                                execl("/bin/sleep", "sleep", "3600", (char *)NULL);
                                _exit(127);
                        }
                }
                pause();
                _exit(0);
        }
        pause();
        _exit(0);
}

static bool all_ours(void *u, const char *c, size_t l, double t, char *ret, size_t cap)
{
        (void)u, (void)c, (void)l, (void)t;
        snprintf(ret, cap, "sleep 3600");
        return true;
}

struct ctx {
        struct bkexec *b;
        struct sampler *s;
        struct procfs *p;
};

static void on_proc(void *u, const struct pidstat *ps)
{
        struct ctx *c = u;

        bkexec_consider(c->b, ps);
}

static double batch(struct ctx *c, bool with, int ticks, double *t)
{
        static const long none[1];
        double c0 = cpu_now();

        for (int k = 0; k < ticks; k++) {
                struct sample smp;
                struct bkexec_totals tot;
                const long *pids;
                size_t n;

                sample_clear(&smp);
                if (with) {
                        bkexec_tick(c->b, c->p, *t, true);
                        bkexec_pids(c->b, &pids, &n);
                        sampler_set_pids(c->s, pids, n, on_proc, c);
                } else {
                        sampler_set_pids(c->s, none, 0, NULL, NULL);
                }
                sampler_take(c->s, &smp);
                if (with) {
                        bkexec_end(c->b, c->p);
                        bkexec_totals(c->b, &tot);
                }
                *t += 1.0;
        }
        return (cpu_now() - c0) / ticks;
}

static int cmpd(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
        int pairs = argc > 1 ? atoi(argv[1]) : 21, ticks = argc > 2 ? atoi(argv[2]) : 200;
        struct sampler_config scfg = {.root = "/", .disk_path = "/"};
        struct bkexec_config bc = {.root = "/", .match = all_ours};
        struct ctx c = {0};
        double *r = calloc((size_t)pairs, sizeof(double)), *tw = calloc((size_t)pairs, sizeof(double)),
               *to = calloc((size_t)pairs, sizeof(double)), t = 0;
        pid_t tree;
        size_t nf;

        if (getuid() != 0) {
                fprintf(stderr, "bench-bkexec: needs root (cgroups)\n");
                return 77;
        }
        snprintf(base, sizeof(base), "bench-bkexec-%d", (int)getpid());
        cgroups(true);
        tree = start_tree();
        usleep(300000);
        if (bkexec_new(&bc, &c.b) < 0 || sampler_new(&scfg, &c.s) < 0 || procfs_new("/", &c.p) < 0)
                return 1;
        batch(&c, true, 3, &t); /* find them */
        bkexec_facts(c.b, &nf);
        for (int i = 0; i < pairs; i++) {
                tw[i] = batch(&c, true, ticks, &t);
                to[i] = batch(&c, false, ticks, &t);
                r[i] = tw[i] / to[i];
        }
        qsort(r, (size_t)pairs, sizeof(double), cmpd);
        qsort(tw, (size_t)pairs, sizeof(double), cmpd);
        qsort(to, (size_t)pairs, sizeof(double), cmpd);
        {
                double p0 = cpu_now();
                for (int k = 0; k < 1000; k++)
                        bkexec_poll(c.b, c.p, t + k * 0.1);
                printf("execs found %zu; per tick: %.1f us with %d execs, %.1f us without; "
                       "median ratio %.2fx (%d interleaved pairs of %d ticks); "
                       "poll (0.1 s, OOM count and peak) %.1f us\n",
                       nf, tw[pairs / 2] * 1e6, NEXEC, to[pairs / 2] * 1e6, r[pairs / 2], pairs,
                       ticks, (cpu_now() - p0) / 1000 * 1e6);
        }
        kill(-tree, SIGKILL);
        kill(tree, SIGKILL);
        waitpid(tree, NULL, 0);
        /* the sleepers: kill what is in each exec cgroup */
        for (int i = 0; i < NEXEC; i++) {
                char p[320], buf[256];
                snprintf(p, sizeof(p), "/sys/fs/cgroup/memory/%s/buildkit/e%d/cgroup.procs", base, i);
                FILE *f = fopen(p, "r");
                if (!f) {
                        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/buildkit/e%d/cgroup.procs", base, i);
                        f = fopen(p, "r");
                }
                while (f && fgets(buf, sizeof(buf), f))
                        kill((pid_t)atol(buf), SIGKILL);
                if (f)
                        fclose(f);
        }
        usleep(200000);
        cgroups(false);
        bkexec_free(c.b);
        sampler_free(c.s);
        procfs_free(c.p);
        return 0;
}
