/* SPDX-License-Identifier: MIT */
/* CPU per tick: buildtel's whole per-tick path against the same reads done
 * raw, and the resident set over many ticks.
 *   bench-tick raw N | buildtel N | rss N */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "model/sample.h"
#include "model/summary.h"
#include "parse/logctx.h"
#include "platform/sampler.h"
#include "util/csv.h"
#include "util/util.h"

static double cpu_seconds(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long rss_kb(void)
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
        p = strstr(buf, "VmRSS:");
        return p ? strtol(p + 6, NULL, 10) : -1;
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
        struct sample_colmap colmap;
        struct dbuf row;
        struct csv_record rec;
        int out;
};

static int full_init(struct full *f)
{
        struct sampler_config scfg = {.root = "/", .disk_path = "."};
        struct logctx_config lcfg = {0};
        struct summary_config sc = {.near_oom_mb = 4096, .low_disk_gb = 20};
        size_t used;

        memset(f, 0, sizeof(*f));
        f->rec = (struct csv_record)CSV_RECORD_INIT;
        summary_init(&f->sum, &sc);
        if (sampler_new(&scfg, &f->sampler) < 0 || logctx_new(&lcfg, &f->logctx) < 0)
                return -1;
        sample_csv_header(&f->row);
        if (csv_parse_record(f->row.p, f->row.len, &f->rec, &used) <= 0 ||
            sample_colmap_init(&f->colmap, &f->rec) < 0)
                return -1;
        logctx_feed_line(f->logctx, "[12/345] Building CXX object a/b/c.cpp.o", 40);
        f->out = open("/dev/null", O_WRONLY);
        return f->out < 0 ? -1 : 0;
}

/* What recorder_tick() does: sample, format, write, read back, summarize. */
static void full_tick(struct full *f, double t)
{
        struct sample s, rs;
        size_t used;

        sample_clear(&s);
        s.epoch = 1.7e9 + t;
        s.elapsed_s = t;
        sampler_take(f->sampler, &s);
        s.stage = logctx_stage(f->logctx);
        s.context = logctx_context(f->logctx);
        dbuf_reset(&f->row);
        sample_csv_format(&s, &f->row);
        (void)!write(f->out, f->row.p, f->row.len);
        if (csv_parse_record(f->row.p, f->row.len, &f->rec, &used) > 0 &&
            sample_from_record(&f->colmap, &f->rec, &rs) == 0)
                summary_add(&f->sum, &rs);
}

int main(int argc, char **argv)
{
        long n = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
        volatile unsigned long sink = 0;
        double c0, c1;
        struct full f;

        if (argc < 2 || n <= 0) {
                fprintf(stderr, "usage: bench-tick raw|buildtel|rss N\n");
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
                return 0;
        }
        fprintf(stderr, "usage: bench-tick raw|buildtel|rss N\n");
        return 2;
}
