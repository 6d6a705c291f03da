/* SPDX-License-Identifier: MIT */
/* The history database under a 24-hour run at 1 s: 86,400 sample rows
 * inserted through store.h as the sqlite sink does (256-row transactions,
 * WAL, synchronous=NORMAL, the running figures updated per batch); the
 * sink's re-reading of its own CSV rows is not counted. Prints the CPU time spent inserting and the
 * file size per 1,000 rows.
 *   bench-store DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "store/store.h"
#include "util/util.h"

#define ROWS 86400
#define BATCH 256

static double cpu_now(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static off_t size_of(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 ? st.st_size : 0;
}

int main(int argc, char **argv)
{
        static char *cmd[] = {(char *)(uintptr_t) "make", (char *)(uintptr_t) "-j8", NULL};
        struct run_info ri = {.run_id = (char *)(uintptr_t) "bench",
                              .kind = (char *)(uintptr_t) "run",
                              .argv = cmd,
                              .start_epoch = 1.8e9,
                              .end_epoch = NAN,
                              .exit_code = -1};
        char path[4096], ctx[128], wal[4200];
        struct store *st;
        struct summary sum;
        int64_t id;
        double t0, t1;
        off_t db, wl;

        if (argc != 2) {
                fprintf(stderr, "usage: bench-store DIR\n");
                return 2;
        }
        snprintf(path, sizeof(path), "%s/bench.db", argv[1]);
        snprintf(wal, sizeof(wal), "%s-wal", path);
        remove(path);
        remove(wal);
        summary_init(&sum, NULL);
        if (store_open(path, true, 1000, &st) < 0 ||
            store_run_begin(st, &ri, NULL, NULL, &id) < 0) {
                fprintf(stderr, "bench-store: cannot open %s\n", path);
                return 1;
        }
        t0 = cpu_now();
        for (int i = 0; i < ROWS; i += BATCH) {
                if (store_begin(st) < 0)
                        return 1;
                for (int k = i; k < i + BATCH && k < ROWS; k++) {
                        struct sample s;

                        sample_clear(&s);
                        s.epoch = 1.8e9 + k;
                        s.elapsed_s = k;
                        s.load1 = 3.5 + (k % 100) / 10.0;
                        s.cpu_pct = k % 1000 / 10.0;
                        s.mem_used_bytes = (12000 + k % 5000) * SAMPLE_MIB;
                        s.mem_avail_bytes = (20000 - k % 5000) * SAMPLE_MIB;
                        s.mem_pct = 40 + k % 30;
                        s.swap_used_bytes = 0;
                        s.disk_avail_bytes = (100 - k / 1000.0) * SAMPLE_GIB;
                        s.disk_pct = 60.5;
                        s.compilers = k % 17;
                        s.stage = "pytorch/builder";
                        /* a new log line about every 3 s, as a big C++ build prints */
                        snprintf(ctx, sizeof(ctx),
                                 "[%d/9600] Building CXX object "
                                 "caffe2/CMakeFiles/torch_cpu.dir/file%d.cpp.o",
                                 k / 3, k / 3);
                        s.context = ctx;
                        summary_add(&sum, &s);
                        if (store_sample_insert(st, id, (uint64_t)k, &s) < 0)
                                return 1;
                }
                if (store_run_update(st, id, NULL, &sum, NULL, 0) < 0 || store_commit(st) < 0)
                        return 1;
        }
        t1 = cpu_now();
        store_close(st); /* checkpoints the WAL into the file */
        db = size_of(path);
        wl = size_of(wal);
        printf("bench-store: %d sample rows in %d-row transactions: %.3f s CPU (%.2f us per row)\n",
               ROWS, BATCH, t1 - t0, (t1 - t0) / ROWS * 1e6);
        printf("bench-store: database %.1f MiB = %.1f KiB per 1,000 rows (WAL left: %lld bytes)\n",
               (double)db / 1048576, (double)db / 1024 / (ROWS / 1000.0), (long long)wl);
        return 0;
}
