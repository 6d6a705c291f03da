/* SPDX-License-Identifier: MIT */
/* CPU per tick: buildtel's whole per-tick path against the same reads done
 * raw, and the resident set over many ticks.
 *   bench-tick raw N | buildtel N | rss N */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"
#include "parse/logctx.h"
#include "pipeline/recorder.h"
#include "platform/cgroup.h"
#include "platform/sampler.h"
#include "util/util.h"
#include "runfiles/samplecsv.h"

static double cpu_seconds(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* A field of /proc/self/status in KiB ("VmRSS:", "RssAnon:", "RssFile:"). */
static long status_kb(const char *field)
{
        char buf[4096];
        int fd = open("/proc/self/status", O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        char *p;

        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strstr(buf, field);
        return p ? strtol(p + strlen(field), NULL, 10) : -1;
}

static long rss_kb(void)
{
        return status_kb("VmRSS:");
}

/* The same reads as a tick, with the least work a program can do on them:
 * pread of the three hot files on kept fds, statvfs, and one pass over
 * /proc reading every stat and comparing comm. */
static int raw_fds[3];
static unsigned long raw_tick(void)
{
        static const char *names[] = {"cc1plus",  "cc1",  "cc1obj", "clang",   "clang++",
                                      "rustc",    "lto1", "ld",     "ld.gold", "ld.lld",
                                      "collect2", "nvcc", "cicc",   "ptxas"};
        char buf[8192];
        unsigned long sum = 0;
        struct statvfs sv;
        struct dirent *de;
        int pfd;
        DIR *d;

        for (int i = 0; i < 3; i++) {
                ssize_t n = pread(raw_fds[i], buf, sizeof(buf), 0);
                sum += n > 0 ? (unsigned long)buf[0] : 0;
        }
        statvfs(".", &sv);
        sum += sv.f_bavail;
        pfd = open("/proc", O_RDONLY | O_DIRECTORY);
        d = fdopendir(pfd);
        while ((de = readdir(d))) {
                char path[300];
                ssize_t n;
                int fd, w;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                w = snprintf(path, sizeof(path), "%s/stat", de->d_name);
                if (w < 0 || (size_t)w >= sizeof(path))
                        continue;
                fd = openat(pfd, path, O_RDONLY);
                if (fd < 0)
                        continue;
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (n > 0) {
                        char *l = memchr(buf, '(', (size_t)n), *r = memrchr(buf, ')', (size_t)n);
                        if (l && r && r > l) {
                                *r = '\0';
                                for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
                                        sum += strcmp(l + 1, names[k]) == 0;
                        }
                }
        }
        closedir(d);
        return sum;
}

struct full {
        struct sampler *sampler;
        struct logctx *logctx;
        struct summary sum;
        struct dbuf row;
        int out;
};

static int full_init(struct full *f)
{
        struct sampler_config scfg = {.root = "/", .disk_path = "."};
        struct logctx_config lcfg = {0};
        struct summary_config sc = {.near_oom_mb = 4096, .low_disk_gb = 20};

        memset(f, 0, sizeof(*f));
        summary_init(&f->sum, &sc);
        if (sampler_new(&scfg, &f->sampler) < 0 || logctx_new(&lcfg, &f->logctx) < 0)
                return -1;
        logctx_feed_line_bk(f->logctx, "[12/345] Building CXX object a/b/c.cpp.o", 40, 0.0, NULL);
        f->out = open("/dev/null", O_WRONLY);
        return f->out < 0 ? -1 : 0;
}

/* What recorder_tick() does without a cgroup: sample, summarize, format
 * and write the CSV row. */
static void full_tick(struct full *f, double t)
{
        struct sample s;

        sample_clear(&s);
        s.epoch = 1.7e9 + t;
        s.elapsed_s = t;
        sampler_take(f->sampler, &s);
        s.stage = logctx_stage(f->logctx);
        s.context = logctx_context(f->logctx);
        summary_add(&f->sum, &s);
        dbuf_reset(&f->row);
        samplecsv_format(&s, &f->row);
        (void)!write(f->out, f->row.p, f->row.len);
}

/* ---- with a cgroup: the recorder's whole tick against the same files
 * read raw ---- */

/* A child in a new cgroup of ours (as `run` makes it), idle. */
static struct cgroup *cg_start(pid_t *ret_pid)
{
        struct cgroup_config cfg = {.mode = CGROUP_MODE_AUTO, .root = "/", .run_id = "bench"};
        struct cgroup *cg;
        int fds[8];
        size_t n;
        pid_t pid;

        if (cgroup_new(&cfg, &cg) < 0)
                return NULL;
        n = cgroup_procs_fds(cg, fds, 8);
        pid = fork();
        if (pid == 0) {
                for (size_t i = 0; i < n; i++)
                        (void)!write(fds[i], "0", 1);
                execlp("sleep", "sleep", "100000", (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 200; i++) { /* until it has joined and exec'd */
                char path[64], comm[32] = "";
                int fd;

                snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void)!read(fd, comm, sizeof(comm) - 1);
                        close(fd);
                }
                if (strncmp(comm, "sleep", 5) == 0)
                        break;
                usleep(10000);
        }
        *ret_pid = pid;
        return cg;
}

/* Split line at spaces (in place); returns the number of words. */
static int split_words(char *line, char **w, int max)
{
        int n = 0;

        for (char *p = line; *p && n < max;) {
                while (*p == ' ' || *p == '\n')
                        *p++ = '\0';
                if (!*p)
                        break;
                w[n++] = p;
                while (*p && *p != ' ' && *p != '\n')
                        p++;
        }
        return n;
}

/* The directory of pid's cgroup in the hierarchy with controller ctl
 * (NULL: the v2 one), from mountinfo and /proc/PID/cgroup. */
static int cg_dir(pid_t pid, const char *ctl, char *out, size_t cap)
{
        char line[1024], mnt[512] = "", path[512] = "", name[64];
        FILE *f = fopen("/proc/self/mountinfo", "r");

        while (f && !mnt[0] && fgets(line, sizeof(line), f)) {
                char *w[64];
                int n = split_words(line, w, 64), d;

                for (d = 0; d < n && strcmp(w[d], "-") != 0; d++)
                        ;
                if (d + 3 >= n || strncmp(w[4], "/proc", 5) == 0)
                        continue;
                if (ctl ? strcmp(w[d + 1], "cgroup") == 0 && strstr(w[d + 3], ctl)
                        : strcmp(w[d + 1], "cgroup2") == 0)
                        snprintf(mnt, sizeof(mnt), "%s", w[4]);
        }
        if (f)
                fclose(f);
        snprintf(name, sizeof(name), "/proc/%d/cgroup", (int)pid);
        f = fopen(name, "r");
        while (f && !path[0] && fgets(line, sizeof(line), f)) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

                if (!c2)
                        continue;
                *c2 = '\0';
                if (ctl ? strstr(c1 + 1, ctl) != NULL : c1[1] == '\0')
                        snprintf(path, sizeof(path), "%s", c2 + 1);
        }
        if (f)
                fclose(f);
        path[strcspn(path, "\n")] = '\0';
        if (!mnt[0] || !path[0])
                return -1;
        snprintf(out, cap, "%s%s", mnt, path);
        return 0;
}

/* The files a tick reads, on kept fds, as cgroup.c opens them. */
#define RAW_MAX 24
static int raw_cg_fds[RAW_MAX], raw_cg_n, raw_procs_fd = -1;

static void raw_open(const char *dir, const char *name)
{
        char path[1024];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && raw_cg_n < RAW_MAX)
                raw_cg_fds[raw_cg_n++] = fd;
}

static int raw_cg_open(pid_t pid, enum cgroup_mode mode)
{
        static const char *const host[] = {"/proc/loadavg", "/proc/stat", "/proc/meminfo",
                                           "/proc/zoneinfo"};
        char v2[1024], d[1100];

        for (size_t i = 0; i < 4; i++)
                raw_open("", host[i] + 1);
        if (cg_dir(pid, NULL, v2, sizeof(v2)) < 0)
                return -1;
        raw_open(v2, "cpu.stat");
        raw_open(v2, "cpu.pressure");
        raw_open(v2, "memory.pressure");
        raw_open(v2, "io.pressure");
        if (mode == CGROUP_MODE_V2) {
                static const char *const names[] = {"memory.current", "memory.peak",
                                                    "memory.events",  "io.stat",
                                                    "pids.current",   "pids.peak"};
                for (size_t i = 0; i < 6; i++)
                        raw_open(v2, names[i]);
        } else {
                if (cg_dir(pid, "memory", d, sizeof(d)) == 0) {
                        raw_open(d, "memory.usage_in_bytes");
                        raw_open(d, "memory.max_usage_in_bytes");
                        raw_open(d, "memory.oom_control");
                }
                if (cg_dir(pid, "blkio", d, sizeof(d)) == 0)
                        raw_open(d, "blkio.throttle.io_service_bytes_recursive");
                if (cg_dir(pid, "pids", d, sizeof(d)) == 0) {
                        raw_open(d, "pids.current");
                        raw_open(d, "pids.peak");
                }
        }
        snprintf(d, sizeof(d), "%s/cgroup.procs", v2);
        raw_procs_fd = open(d, O_RDONLY | O_CLOEXEC);
        return raw_procs_fd < 0 ? -1 : 0;
}

/* The least a program can do: pread every file, statvfs, and for each pid
 * of cgroup.procs its stat and its cmdline (the recorder labels the
 * largest processes with it). */
static unsigned long raw_cg_tick(void)
{
        char buf[16384];
        unsigned long sum = 0;
        struct statvfs sv;
        ssize_t n;

        for (int i = 0; i < raw_cg_n; i++) {
                n = pread(raw_cg_fds[i], buf, sizeof(buf), 0);
                sum += n > 0 ? (unsigned long)buf[0] : 0;
        }
        statvfs(".", &sv);
        sum += sv.f_bavail;
        n = pread(raw_procs_fd, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        for (char *p = buf; *p;) {
                char path[64], st[1024];
                long pid = strtol(p, &p, 10);
                const char *files[2] = {"stat", "cmdline"};

                while (*p == '\n')
                        p++;
                for (int k = 0; pid > 0 && k < 2; k++) {
                        int fd;

                        snprintf(path, sizeof(path), "/proc/%ld/%s", pid, files[k]);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                continue;
                        sum += (unsigned long)read(fd, st, sizeof(st));
                        close(fd);
                }
        }
        return sum;
}

static void rm_files(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        if (d)
                closedir(d);
        (void)rmdir(dir);
}

static void note_nothing(void *userdata, const char *fmt, ...) {}

/* raw-cgroup N | cgroup N: the files of a tick with a cgroup (an idle
 * child in it, as `run -- sleep` has), read raw or by the recorder's whole
 * tick (sampler, cgroup, the build's pids and labels, summary, every sink
 * with --no-db: CSV row, build log). */
static int bench_cgroup(bool raw, long n, double interval)
{
        struct run_info ri = {.run_id = (char *)(uintptr_t) "bench",
                              .kind = (char *)(uintptr_t) "run",
                              .start_epoch = now_realtime(),
                              .end_epoch = NAN,
                              .exit_code = -1,
                              .interval = 0.05};
        char dir[] = "/tmp/bench-tick-XXXXXX";
        struct recorder_config rc = {.interval = 0.05,
                                     .disk_path = ".",
                                     .quiet = true,
                                     .no_db = true,
                                     .note = note_nothing,
                                     .summary = {.near_oom_mb = 4096, .low_disk_gb = 20}};
        struct recorder *r = NULL;
        struct cgroup *cg;
        double c0, c1;
        pid_t pid;
        int status;

        cg = cg_start(&pid);
        if (!cg || !mkdtemp(dir)) {
                fprintf(stderr, "bench-tick: cannot make a cgroup (root?)\n");
                return 77;
        }
        rc.cgroup = cg;
        rc.log_dir = dir;
        if (raw ? raw_cg_open(pid, cgroup_mode(cg)) < 0 : recorder_new(&rc, &ri, &r) < 0) {
                fprintf(stderr, "bench-tick: cannot set up\n");
                return 1;
        }
        c0 = cpu_seconds();
        for (long i = 0; i < n; i++) {
                if (raw)
                        (void)raw_cg_tick();
                else
                        (void)recorder_tick(r);
                /* As a run spaces them: caches go cold between ticks. */
                if (interval > 0)
                        usleep((useconds_t)(interval * 1e6));
        }
        c1 = cpu_seconds();
        printf("%s, cgroup %s, every %.3f s: %.1f us CPU per tick over %ld ticks\n",
               raw ? "raw reads" : "recorder tick", cgroup_mode_name(cgroup_mode(cg)), interval,
               (c1 - c0) / (double)n * 1e6, n);
        recorder_free(r);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        cgroup_free(cg);
        rm_files(dir);
        return 0;
}

int main(int argc, char **argv)
{
        long n = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
        volatile unsigned long sink = 0;
        double c0, c1;
        struct full f;

        if (argc < 2 || n <= 0) {
                fprintf(stderr, "usage: bench-tick raw|buildtel|rss|raw-cgroup|cgroup N\n");
                return 2;
        }
        if (strcmp(argv[1], "raw") == 0) {
                raw_fds[0] = open("/proc/stat", O_RDONLY);
                raw_fds[1] = open("/proc/meminfo", O_RDONLY);
                raw_fds[2] = open("/proc/loadavg", O_RDONLY);
                c0 = cpu_seconds();
                for (long i = 0; i < n; i++)
                        sink += raw_tick();
                c1 = cpu_seconds();
                (void)sink;
                printf("raw reads: %.1f us CPU per tick over %ld ticks\n",
                       (c1 - c0) / (double)n * 1e6, n);
                return 0;
        }
        if (strcmp(argv[1], "cgroup") == 0 || strcmp(argv[1], "raw-cgroup") == 0)
                return bench_cgroup(argv[1][0] == 'r', n, argc > 3 ? strtod(argv[3], NULL) : 0);
        if (full_init(&f) < 0) {
                fprintf(stderr, "bench-tick: cannot set up the sampler\n");
                return 1;
        }
        if (strcmp(argv[1], "buildtel") == 0) {
                c0 = cpu_seconds();
                for (long i = 0; i < n; i++)
                        full_tick(&f, (double)i);
                c1 = cpu_seconds();
                printf("buildtel tick: %.1f us CPU per tick over %ld ticks\n",
                       (c1 - c0) / (double)n * 1e6, n);
                return 0;
        }
        if (strcmp(argv[1], "rss") == 0) {
                long r0, r1k, r1;
                for (long i = 0; i < 1000 && i < n; i++)
                        full_tick(&f, (double)i);
                r1k = rss_kb();
                r0 = r1k;
                for (long i = 1000; i < n; i++)
                        full_tick(&f, (double)i);
                r1 = rss_kb();
                printf("rss: %ld KiB after 1,000 ticks, %ld KiB after %ld ticks (growth %ld KiB)\n",
                       r0, r1, n, r1 - r0);
                /* What the process allocated, apart from the shared
                 * libraries' pages it maps (the same files every process
                 * using them shares). */
                printf("rss: anonymous %ld KiB, file-backed %ld KiB (shared libraries and the "
                       "binary)\n",
                       status_kb("RssAnon:"), status_kb("RssFile:"));
                return 0;
        }
        fprintf(stderr, "usage: bench-tick raw|buildtel|rss|raw-cgroup|cgroup N\n");
        return 2;
}
