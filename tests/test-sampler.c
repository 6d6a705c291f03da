/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/sample.h"
#include "platform/procfs.h"
#include "platform/sampler.h"
#include "util/macro.h"
#include "util/util.h"

/* Fields the sampler must not touch get these, to see that it did not. */
#define SENTINEL_EPOCH 1234.5
#define SENTINEL_STAGE "stage-x"

static void poison(struct sample *s)
{
        memset(s, 0, sizeof(*s));
        s->epoch = SENTINEL_EPOCH;
        s->elapsed_s = SENTINEL_EPOCH;
        s->stage = SENTINEL_STAGE;
        s->context = SENTINEL_STAGE;
        s->load1 = s->cpu_pct = s->mem_used_bytes = s->mem_avail_bytes = s->mem_pct = -1.0;
        s->swap_used_bytes = s->disk_avail_bytes = s->disk_pct = s->compilers = -1.0;
}

static void assert_caller_fields_kept(const struct sample *s)
{
        assert_true(s->epoch == SENTINEL_EPOCH);
        assert_true(s->elapsed_s == SENTINEL_EPOCH);
        assert_string_equal(s->stage, SENTINEL_STAGE);
        assert_string_equal(s->context, SENTINEL_STAGE);
}

#define assert_double_equal(a, b)                                                                  \
        do {                                                                                       \
                double _a = (a), _b = (b);                                                         \
                if (!(fabs(_a - _b) <= 1e-9 * fmax(1.0, fabs(_b))))                                \
                        fail_msg("%s = %.17g, want %.17g", #a, _a, _b);                            \
        } while (0)

/* ---- a writable copy of a fixture tree ---- */

static int copy_tree_at(int from_dir, int to_dir)
{
        DIR *d;
        struct dirent *de;
        int fd = openat(from_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(from_dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        goto fail;
                if (S_ISDIR(st.st_mode)) {
                        int a, b, r;

                        if (mkdirat(to_dir, de->d_name, 0755) < 0)
                                goto fail;
                        a = openat(from_dir, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        b = openat(to_dir, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        r = a >= 0 && b >= 0 ? copy_tree_at(a, b) : -EIO;
                        if (a >= 0)
                                close(a);
                        if (b >= 0)
                                close(b);
                        if (r < 0)
                                goto fail;
                } else {
                        _cleanup_free_ char *buf = NULL;
                        _cleanup_close_ int out = -1;
                        size_t len;

                        if (read_file_at(from_dir, de->d_name, 1 << 20, &buf, &len) < 0)
                                goto fail;
                        out = openat(to_dir, de->d_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                                     0644);
                        if (out < 0 || write_all(out, buf, len) < 0)
                                goto fail;
                }
        }
        closedir(d);
        return 0;
fail:
        closedir(d);
        return -EIO;
}

static void copy_fixture(const char *name, char dir[static 64])
{
        _cleanup_close_ int from = -1, to = -1;
        char src[4096];

        snprintf(dir, 64, "/tmp/test-sampler-XXXXXX");
        assert_non_null(mkdtemp(dir));
        assert_true(snprintf(src, sizeof(src), "%s/%s", FIXTURES, name) < (int)sizeof(src));
        from = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        to = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(from >= 0 && to >= 0);
        assert_int_equal(copy_tree_at(from, to), 0);
}

static void remove_tree(const char *dir)
{
        /* Fixed argv, a path we made ourselves. */
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                execl("/bin/rm", "rm", "-rf", "--", dir, (char *)NULL);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* Rewrite in place (O_TRUNC on the same inode): procfs keeps the fd. */
static void write_file(const char *dir, const char *rel, const char *text)
{
        char path[4096];
        int fd;

        assert_true(snprintf(path, sizeof(path), "%s/%s", dir, rel) < (int)sizeof(path));
        fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, text, strlen(text)), 0);
        close(fd);
}

static void want_disk(const char *path, double *avail_gb, double *pct)
{
        struct statvfs sv;

        assert_int_equal(statvfs(path, &sv), 0);
        *avail_gb = (double)sv.f_bavail * (double)sv.f_frsize / (1024.0 * 1024.0 * 1024.0);
        *pct = (double)(sv.f_blocks - sv.f_bfree) /
               (double)(sv.f_blocks - sv.f_bfree + sv.f_bavail) * 100.0;
}

/* ---- fixture trees ---- */

static void test_basic(void **state)
{
        char dir[64];
        struct sampler_config cfg = {0};
        struct sampler *s = NULL;
        struct sample smp;
        double gb, pct;

        copy_fixture("proc-basic", dir);
        cfg.root = dir;
        cfg.disk_path = dir;
        assert_int_equal(sampler_new(&cfg, &s), 0);

        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_caller_fields_kept(&smp);
        assert_double_equal(smp.load1, 1.25);
        /* Same /proc/stat as the baseline: no time passed. */
        assert_true(isnan(smp.cpu_pct));
        assert_double_equal((smp.mem_used_bytes / SAMPLE_MIB), 8000.0);
        assert_double_equal((smp.mem_avail_bytes / SAMPLE_MIB), 8000.0);
        assert_double_equal(smp.mem_pct, 50.0);
        assert_double_equal((smp.swap_used_bytes / SAMPLE_MIB), 1024.0);
        /* cc1plus (R) and ld (D); not the zombie cc1plus, not cc1plusx,
         * not the truncated gcc name (not in the default list). */
        assert_double_equal(smp.compilers, 2.0);
        want_disk(dir, &gb, &pct);
        assert_true(gb > 0);
        /* A live filesystem that other tests write to: the two statvfs
         * calls may see a few blocks apart. */
        assert_true(fabs((smp.disk_avail_bytes / SAMPLE_GIB) - gb) < 0.05);
        assert_true(fabs(smp.disk_pct - pct) < 0.05);

        /* +200 user, +50 system, +750 idle: 250 busy of 1000 ticks. */
        write_file(dir, "proc/stat", "cpu  1200 200 350 8750 100 50 25 25 0 0\n");
        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal(smp.cpu_pct, 25.0);
        assert_caller_fields_kept(&smp);

        /* iowait-only growth counts as idle: +100 iowait, +300 softirq
         * (busy) of 400 ticks. */
        write_file(dir, "proc/stat", "cpu  1200 200 350 8750 200 50 325 25 0 0\n");
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal(smp.cpu_pct, 75.0);

        /* Counters going backwards (a bad snapshot) give NAN, and the next
         * delta starts from the new values. */
        write_file(dir, "proc/stat", "cpu  10 0 0 90 0 0 0 0 0 0\n");
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_true(isnan(smp.cpu_pct));
        write_file(dir, "proc/stat", "cpu  110 0 0 90 0 0 0 0 0 0\n");
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal(smp.cpu_pct, 100.0);

        /* A new compiler appears, the running one becomes a zombie. */
        write_file(dir, "proc/1240/stat",
                   "1240 (clang++) R 1234 1240 1240 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7\n");
        write_file(dir, "proc/1237/stat",
                   "1237 (cc1plus) Z 1234 1237 1237 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 6 7\n");
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal(smp.compilers, 2.0); /* clang++ and ld */

        sampler_free(s);
        remove_tree(dir);
}

static void test_custom_compilers(void **state)
{
        static const char *const names[] = {"x86_64-linux-gnu-gcc-12", "make", "(a) b)", "cc1plus",
                                            NULL};
        struct sampler_config cfg = {.root = FIXTURES "/proc-basic", .compilers = names};
        struct sampler *s = NULL;
        struct sample smp;

        assert_int_equal(sampler_new(&cfg, &s), 0);
        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        /* 1239 (the gcc name cut to 15), make, "(a) b)", the live cc1plus. */
        assert_double_equal(smp.compilers, 4.0);
        /* No disk_path: the disk columns are unknown. */
        assert_true(isnan((smp.disk_avail_bytes / SAMPLE_GIB)));
        assert_true(isnan(smp.disk_pct));
        sampler_free(s);

        /* An empty list counts nothing. */
        {
                static const char *const none[] = {NULL};

                cfg.compilers = none;
                assert_int_equal(sampler_new(&cfg, &s), 0);
                assert_int_equal(sampler_take(s, &smp), 0);
                assert_double_equal(smp.compilers, 0.0);
                sampler_free(s);
        }
}

static void test_old_kernel(void **state)
{
        struct sampler_config cfg = {.root = FIXTURES "/proc-old",
                                     .disk_path = FIXTURES "/does-not-exist"};
        struct sampler *s = NULL;
        struct sample smp;

        assert_int_equal(sampler_new(&cfg, &s), 0);
        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal(smp.load1, 0.0);
        /* No MemAvailable: 102400 free + 51200 buffers + 256000 cached. */
        assert_double_equal((smp.mem_avail_bytes / SAMPLE_MIB), 400.0);
        assert_double_equal((smp.mem_used_bytes / SAMPLE_MIB), 600.0);
        assert_double_equal(smp.mem_pct, 60.0);
        assert_double_equal((smp.swap_used_bytes / SAMPLE_MIB), 0.0);
        assert_double_equal(smp.compilers, 0.0);
        assert_true(isnan(smp.cpu_pct));
        assert_true(isnan((smp.disk_avail_bytes / SAMPLE_GIB)));
        assert_true(isnan(smp.disk_pct));
        sampler_free(s);
}

static void test_missing_sources(void **state)
{
        char dir[64], path[128];
        struct sampler_config cfg = {0};
        struct sampler *s = (struct sampler *)0x1;
        struct sample smp;

        cfg.root = FIXTURES "/does-not-exist";
        assert_int_equal(sampler_new(&cfg, &s), -ENOENT);
        assert_ptr_equal(s, (struct sampler *)0x1);
        assert_int_equal(sampler_new(NULL, &s), -EINVAL);

        copy_fixture("proc-old", dir);
        cfg.root = dir;
        snprintf(path, sizeof(path), "%s/proc/meminfo", dir);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(sampler_new(&cfg, &s), 0);

        /* meminfo missing: its columns are NAN, the rest still come. */
        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal(smp.load1, 0.0);
        assert_true(isnan((smp.mem_used_bytes / SAMPLE_MIB)) &&
                    isnan((smp.mem_avail_bytes / SAMPLE_MIB)) && isnan(smp.mem_pct) &&
                    isnan((smp.swap_used_bytes / SAMPLE_MIB)));

        /* It appears later: picked up on the next take. */
        write_file(dir, "proc/meminfo",
                   "MemTotal: 2048 kB\nMemFree: 0 kB\nMemAvailable: 1024 kB\n"
                   "SwapTotal: 0 kB\nSwapFree: 0 kB\n");
        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_double_equal((smp.mem_used_bytes / SAMPLE_MIB), 1.0);
        assert_double_equal(smp.mem_pct, 50.0);

        /* A garbled loadavg is not fatal either. */
        write_file(dir, "proc/loadavg", "garbage\n");
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_true(isnan(smp.load1));
        assert_double_equal(smp.compilers, 0.0);

        sampler_free(s);
        remove_tree(dir);
}

/* ---- the real machine ---- */

static int copy_file(const char *from, const char *to)
{
        _cleanup_close_ int in = -1, out = -1;
        char buf[65536];
        ssize_t n;

        in = open(from, O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return -errno;
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (out < 0)
                return -errno;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write_all(out, buf, (size_t)n) < 0)
                        return -EIO;
        return n < 0 ? -errno : 0;
}

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* Wait until pid shows state (or any state when 0) with the given comm. */
static bool wait_for(struct procfs *p, pid_t pid, const char *comm, char state)
{
        for (int i = 0; i < 5000; i++) {
                struct pidstat ps;

                if (procfs_pidstat(p, pid, &ps) == 0 && strcmp(ps.comm, comm) == 0 &&
                    (state == 0 || ps.state == state))
                        return true;
                sleep_ms(1);
        }
        return false;
}

static double take_compilers(struct sampler *s)
{
        struct sample smp;

        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        return smp.compilers;
}

static void test_live(void **state)
{
        char dir[] = "/tmp/test-sampler-live-XXXXXX", exe[128];
        struct sampler_config cfg = {.root = "/", .disk_path = "/"};
        struct sampler *s = NULL;
        struct sample smp;
        bool ok = false;

        if (access("/proc/self/stat", R_OK) < 0 || access("/bin/sleep", X_OK) < 0) {
                print_message("skip: needs /proc and /bin/sleep\n");
                skip();
        }
        assert_int_equal(sampler_new(&cfg, &s), 0);
        sleep_ms(20);
        poison(&smp);
        assert_int_equal(sampler_take(s, &smp), 0);
        assert_caller_fields_kept(&smp);
        assert_true(smp.load1 >= 0);
        assert_true((smp.mem_avail_bytes / SAMPLE_MIB) > 0);
        assert_true((smp.mem_used_bytes / SAMPLE_MIB) >= 0 && smp.mem_pct >= 0 &&
                    smp.mem_pct <= 100);
        assert_true((smp.swap_used_bytes / SAMPLE_MIB) >= 0);
        assert_true((smp.disk_avail_bytes / SAMPLE_GIB) >= 0 && smp.disk_pct >= 0 &&
                    smp.disk_pct <= 100);
        assert_true(isnan(smp.cpu_pct) || (smp.cpu_pct >= 0 && smp.cpu_pct <= 100));
        assert_true(smp.compilers >= 0);

        assert_non_null(mkdtemp(dir));
        assert_true(snprintf(exe, sizeof(exe), "%s/cc1plus", dir) < (int)sizeof(exe));
        assert_int_equal(copy_file("/bin/sleep", exe), 0);

        /* Other builds on this machine may start or stop compilers while
         * we count: retry until one round sees only our own change. */
        for (int attempt = 0; attempt < 5 && !ok; attempt++) {
                double before, with, zombie, after;
                pid_t child;

                before = take_compilers(s);
                child = fork();
                assert_true(child >= 0);
                if (child == 0) {
                        execl(exe, "cc1plus", "60", (char *)NULL);
                        _exit(127);
                }
                assert_true(wait_for(sampler_procfs(s), child, "cc1plus", 0));
                with = take_compilers(s);
                kill(child, SIGKILL);
                /* Killed but not reaped: a zombie is not a live compiler. */
                assert_true(wait_for(sampler_procfs(s), child, "cc1plus", 'Z'));
                zombie = take_compilers(s);
                assert_int_equal(waitpid(child, NULL, 0), child);
                after = take_compilers(s);
                print_message("compilers: before %g, running %g, zombie %g, reaped %g\n", before,
                              with, zombie, after);
                ok = with == before + 1 && zombie == before && after == before;
        }
        assert_true(ok);

        unlink(exe);
        rmdir(dir);
        sampler_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_basic),      cmocka_unit_test(test_custom_compilers),
            cmocka_unit_test(test_old_kernel), cmocka_unit_test(test_missing_sources),
            cmocka_unit_test(test_live),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
