/* SPDX-License-Identifier: MIT */
/* `buildtel export --trace` of a 24-hour run from its files: a CSV of
 * 86,400 samples (every column, written by the CSV writer), its run record,
 * 20 targets and a .ninja_log of EDGES edges (default 100,000) on 8 lanes,
 * written to DIR; then the trace made from them as export does. Prints the
 * wall and CPU seconds and the trace's size.
 *   bench-trace DIR [EDGES] */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd/cmd-trace.h"
#include "pipeline/replay.h"
#include "model/run.h"
#include "model/sample.h"
#include "util/dbuf.h"
#include "util/outfile.h"
#include "util/util.h"
#include "runfiles/samplecsv.h"
#include "runfiles/runjson.h"

#define SAMPLES 86400
#define START 1700000000.0

/* CPU seconds of this process so far. */
static double cpu_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int put(const char *dir, const char *name, const struct dbuf *b)
{
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return write_file_atomic(path, b->p, b->len);
}

static int make_csv(const char *dir)
{
        struct dbuf b = DBUF_INIT;
        struct sample s;
        int e = samplecsv_header(&b);

        for (int i = 0; i < SAMPLES && e >= 0; i++) {
                sample_clear(&s);
                s.epoch = START + i;
                s.elapsed_s = i;
                s.load1 = 3 + sin(i / 600.0);
                s.cpu_pct = 50 + 40 * sin(i / 300.0);
                s.mem_used_bytes = (8000 + (i % 3600)) * SAMPLE_MIB;
                s.mem_avail_bytes = (24000 - (i % 3600)) * SAMPLE_MIB;
                s.mem_pct = 25;
                s.swap_used_bytes = 0;
                s.disk_avail_bytes = (100 - i / 1000.0) * SAMPLE_GIB;
                s.disk_pct = 50;
                s.compilers = (i / 5) % 9;
                s.stage = "build";
                s.context = "[123/4567] Building CXX object src/CMakeFiles/x.dir/y.cc.o";
                s.cg_mode = "v2";
                s.cg_cpu_user_s = i * 1.5;
                s.cg_cpu_sys_s = i * 0.2;
                s.cg_mem_bytes = (4000 + (i % 2000)) * SAMPLE_MIB;
                s.cg_mem_anon_bytes = s.cg_mem_bytes * 0.7;
                s.cg_mem_file_bytes = s.cg_mem_bytes * 0.3;
                s.cg_mem_peak_bytes = 6000 * SAMPLE_MIB;
                s.cg_oom_kills = i / 20000;
                s.cg_io_read_bytes = i * SAMPLE_MIB;
                s.cg_io_write_bytes = i * SAMPLE_MIB;
                s.cg_psi.some_s[PSI_CPU] = s.cg_psi.some_s[PSI_MEM] = s.cg_psi.some_s[PSI_IO] = i * 0.01;
                s.cg_pids = 40;
                s.cg_pids_peak = 60;
                s.top_proc = "cc1plus -O2 big.cc";
                s.top_proc_bytes = 900 * SAMPLE_MIB;
                s.running = "big.cc s5.c ld:app";
                s.top_pid = 4242;
                e = samplecsv_format(&s, &b);
        }
        if (e >= 0)
                e = put(dir, "resources-b24.csv", &b);
        dbuf_release(&b);
        return e;
}

static int make_runinfo(const char *dir)
{
        char a0[] = "make", a1[] = "-j8", id[] = "b24", kind[] = "run", cwd[] = "/src",
             host[] = "h";
        char *argv[] = {a0, a1, NULL};
        struct run_info ri = {.run_id = id,
                              .kind = kind,
                              .argv = argv,
                              .cwd = cwd,
                              .host = host,
                              .start_epoch = START,
                              .end_epoch = START + SAMPLES,
                              .finished = true,
                              .exit_code = 0,
                              .ncpu = 8,
                              .interval = 1};
        struct dbuf b = DBUF_INIT;
        int e = runjson_format(&ri, &b);

        if (e >= 0)
                e = put(dir, "resources-b24.run.json", &b);
        dbuf_release(&b);
        return e;
}

static int make_targets_and_log(const char *dir, long edges)
{
        struct dbuf b = DBUF_INIT;
        int e = dbuf_puts(&b, "{\"targets\": [");

        for (int i = 0; i < 20 && e >= 0; i++)
                e = dbuf_printf(&b,
                                "%s{\"name\": \"t%d\", \"first_seen_s\": %d, \"last_seen_s\": "
                                "%d, \"steps\": 40, \"cached\": 10, \"success\": true}",
                                i ? "," : "", i, i * 4000, i * 4000 + 9000);
        if (e >= 0)
                e = dbuf_puts(&b, "]}\n");
        if (e >= 0)
                e = put(dir, "resources-b24.targets.json", &b);
        dbuf_reset(&b);
        /* 8 lanes of back-to-back edges over the day, in end order */
        e = e >= 0 ? dbuf_puts(&b, "# ninja log v5\n") : e;
        for (long i = 0; i < edges && e >= 0; i++) {
                long per = (long)SAMPLES * 1000 / (edges / 8 + 1), k = i / 8;
                e = dbuf_printf(&b, "%ld\t%ld\t0\tobj/dir%ld/file%ld.o\t%lx\n", k * per,
                                k * per + per - 8 + (i % 8), i % 50, i, 0x1000 + i);
        }
        if (e >= 0)
                e = put(dir, "ninja_log", &b);
        dbuf_release(&b);
        return e;
}

int main(int argc, char **argv)
{
        char csv[4096], out[4096], nlog[4096];
        struct timespec a, z;
        struct stat st;
        long edges = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
        double c0;
        struct timespec mt[2];

        if (argc < 2) {
                fprintf(stderr, "usage: bench-trace DIR [EDGES]\n");
                return 2;
        }
        if (make_csv(argv[1]) < 0 || make_runinfo(argv[1]) < 0 ||
            make_targets_and_log(argv[1], edges) < 0) {
                fprintf(stderr, "bench-trace: cannot write the run's files in %s\n", argv[1]);
                return 1;
        }
        snprintf(csv, sizeof(csv), "%s/resources-b24.csv", argv[1]);
        snprintf(out, sizeof(out), "%s/trace-b24.json", argv[1]);
        snprintf(nlog, sizeof(nlog), "%s/ninja_log", argv[1]);
        mt[0] = mt[1] = (struct timespec){(time_t)START + SAMPLES, 0};
        utimensat(AT_FDCWD, nlog, mt, 0);
        struct trace_job j = {.out_path = out, .ninja_log = nlog, .cmd = "bench"};
        struct replay_ref ref = {.run = csv,
                                 .no_db = true,
                                 .need_record = true,
                                 .own_thresholds = true,
                                 .thresholds = {.near_oom_mb = 4096, .low_disk_gb = 20}};
        struct replay *rp = NULL;
        char why[256];
        int e;

        c0 = cpu_now();
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (replay_open(&ref, &rp, why, sizeof(why)) < 0)
                return 1;
        e = trace_write(&j, rp);
        replay_free(rp);
        if (e != 0)
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &z);
        if (stat(out, &st) < 0)
                return 1;
        printf("trace of a 24 h run (%d samples, %ld ninja edges, 20 targets): %.2f s wall, "
               "%.2f s CPU, %.1f MiB\n",
               SAMPLES, edges,
               (double)(z.tv_sec - a.tv_sec) + (double)(z.tv_nsec - a.tv_nsec) / 1e9,
               cpu_now() - c0, (double)st.st_size / (1 << 20));
        return 0;
}
