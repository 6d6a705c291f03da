/* SPDX-License-Identifier: MIT */
/* The cgroup file parsers (v2, v1, hybrid) on snapshots under
 * tests/fixtures/cgroup/, and the culprit labels. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ftw.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/cgroup-top.h"
#include "platform/cgroup.h"
#include "util/macro.h"
#include "util/util.h"

static char *load(const char *rel, size_t *ret_len)
{
        char path[1024];
        char *buf;
        size_t len;

        snprintf(path, sizeof(path), "%s/cgroup/%s", FIXTURES, rel);
        assert_int_equal(read_file_at(AT_FDCWD, path, 1 << 20, &buf, &len), 0);
        *ret_len = len;
        return buf;
}

static void test_mounts(void **state)
{
        static const struct {
                const char *file;
                const char *mnt[_CG_H_MAX];
                const char *root[_CG_H_MAX];
        } cases[] = {
            {"hybrid/mountinfo",
             {"/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpuacct",
              "/sys/fs/cgroup/blkio", "/sys/fs/cgroup/pids"},
             {"/", "/", "/", "/", "/"}},
            /* the first cgroup2 mount wins; \040 is unescaped in others */
            {"v2/mountinfo", {"/sys/fs/cgroup", "", "", "", ""}, {"/", "", "", "", ""}},
            /* co-mounted cpu,cpuacct; a container's bind mount of a subtree */
            {"v1/mountinfo",
             {"", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/blkio",
              "/sys/fs/cgroup/pids"},
             {"", "/docker/abc", "/docker/abc", "/", "/"}},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct cgroup_mounts *m = calloc(1, sizeof(*m));
                size_t len;
                char *buf = load(cases[i].file, &len);

                print_message("%s\n", cases[i].file);
                assert_int_equal(cgroup_mounts_parse(buf, len, m), 0);
                for (int h = 0; h < _CG_H_MAX; h++) {
                        assert_string_equal(m->mnt[h], cases[i].mnt[h]);
                        assert_string_equal(m->root[h], cases[i].root[h]);
                }
                free(buf);
                free(m);
        }
}

static void test_mounts_escape(void **state)
{
        static const char mi[] = "99 24 0:50 / /mnt/a\\040b rw - cgroup2 cgroup2 rw\n"
                                 "98 24 0:51 / /x rw - cgroup cgroup rw,memory\n";
        struct cgroup_mounts *m = calloc(1, sizeof(*m));

        (void)state;
        assert_int_equal(cgroup_mounts_parse(mi, sizeof(mi) - 1, m), 0);
        assert_string_equal(m->mnt[CG_H_V2], "/mnt/a b");
        assert_string_equal(m->mnt[CG_H_MEMORY], "/x");
        /* junk lines are skipped, not fatal */
        assert_int_equal(cgroup_mounts_parse("junk\n- - -\n", 11, m), 0);
        assert_string_equal(m->mnt[CG_H_V2], "");
        free(m);
}

static void test_self(void **state)
{
        struct cgroup_self *s = calloc(1, sizeof(*s));
        size_t len;
        char *buf = load("v1/cgroup", &len);

        (void)state;
        assert_int_equal(cgroup_self_parse(buf, len, s), 0);
        assert_string_equal(s->path[CG_H_V2], "");
        assert_string_equal(s->path[CG_H_MEMORY], "/docker/abc");
        assert_string_equal(s->path[CG_H_CPUACCT], "/docker/abc");
        assert_string_equal(s->path[CG_H_BLKIO], "/");
        assert_string_equal(s->path[CG_H_PIDS], "/");
        free(buf);
        buf = load("v2/cgroup", &len);
        assert_int_equal(cgroup_self_parse(buf, len, s), 0);
        assert_string_equal(s->path[CG_H_V2], "/user.slice/user-1000.slice/session-2.scope");
        assert_string_equal(s->path[CG_H_MEMORY], "");
        free(buf);
        buf = load("hybrid/cgroup", &len);
        assert_int_equal(cgroup_self_parse(buf, len, s), 0);
        assert_string_equal(s->path[CG_H_V2], "/");
        assert_true(strncmp(s->path[CG_H_MEMORY], "/process_api/", 13) == 0);
        free(buf);
        assert_int_equal(cgroup_self_parse("garbage", 7, s), -EINVAL);
        assert_int_equal(cgroup_self_parse("1:name=systemd:/\n", 17, s), -EINVAL);
        free(s);
}

/* Single numbers and keyed files, as files and as inline edge cases. */
static void test_numbers(void **state)
{
        static const struct {
                const char *file, *text, *key; /* key NULL: a single number */
                int ret;
                uint64_t want;
        } cases[] = {
            {"hybrid/memory.max_usage_in_bytes", NULL, NULL, 0, 538128384},
            {"hybrid/pids.peak", NULL, NULL, 0, 3},
            {"v2/memory.peak", NULL, NULL, 0, 536870912},
            {"v1/cpuacct.usage_user", NULL, NULL, 0, 1960000000},
            {"v1/pids.max", NULL, NULL, 0, UINT64_MAX},
            {"hybrid/memory.oom_control", NULL, "oom_kill", 0, 1},
            {"hybrid/memory.oom_control", NULL, "under_oom", 0, 0},
            {"v2/memory.events", NULL, "oom_kill", 0, 1},
            {"v2/memory.events", NULL, "oom", 0, 1},
            {"v2/memory.events", NULL, "max", 0, 12},
            {"hybrid/cpu.stat", NULL, "user_usec", 0, 1966001},
            {"hybrid/cpu.stat", NULL, "system_usec", 0, 38111},
            {"v1/cpuacct.stat", NULL, "system", 0, 4},
            {NULL, "12", NULL, 0, 12},
            {NULL, "12\n", NULL, 0, 12},
            {NULL, "", NULL, -EINVAL, 0},
            {NULL, "12 13\n", NULL, -EINVAL, 0},
            {NULL, "-1\n", NULL, -EINVAL, 0},
            {NULL, "99999999999999999999\n", NULL, -ERANGE, 0},
            {NULL, "oom 1\n", "oom_kill", -ENOENT, 0},
            {NULL, "oom_kill x\n", "oom_kill", -EINVAL, 0},
            {NULL, "oom_kill 3x\n", "oom_kill", -EINVAL, 0},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                uint64_t v = 777;
                size_t len;
                char *buf = cases[i].file ? load(cases[i].file, &len) : NULL;
                const char *p = buf ? buf : cases[i].text;
                int r;

                if (!buf)
                        len = strlen(p);
                print_message("case %zu\n", i);
                r = cases[i].key ? cgroup_keyed_parse(p, len, cases[i].key, &v)
                                 : cgroup_u64_parse(p, len, &v);
                assert_int_equal(r, cases[i].ret);
                assert_true(v == (r == 0 ? cases[i].want : 777));
                free(buf);
        }
}

static void test_io(void **state)
{
        static const struct {
                const char *file, *text;
                bool v2;
                int ret;
                uint64_t rd, wr;
        } cases[] = {
            {"v2/io.stat", NULL, true, 0, 1048576 + 4096, 268435456},
            {"hybrid/blkio.throttle.io_service_bytes_recursive", NULL, false, 0, 4096, 268443649},
            {NULL, "", true, 0, 0, 0},
            {NULL, "Total 0\n", false, 0, 0, 0},
            {NULL, "8:0 rbytes=x wbytes=2\n", true, -EINVAL, 0, 0},
            {NULL, "8:0 Read 1x\n", false, -EINVAL, 0, 0},
            {NULL, "8:0 Read 18446744073709551615\n8:1 Read 5\n", false, 0, UINT64_MAX, 0},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                uint64_t rd = 7, wr = 7;
                size_t len;
                char *buf = cases[i].file ? load(cases[i].file, &len) : NULL;
                const char *p = buf ? buf : cases[i].text;
                int r;

                if (!buf)
                        len = strlen(p);
                print_message("case %zu\n", i);
                r = cases[i].v2 ? cgroup_iostat_parse(p, len, &rd, &wr)
                                : cgroup_blkio_parse(p, len, &rd, &wr);
                assert_int_equal(r, cases[i].ret);
                if (r == 0) {
                        assert_true(rd == cases[i].rd);
                        assert_true(wr == cases[i].wr);
                } else {
                        assert_true(rd == 7 && wr == 7);
                }
                free(buf);
        }
}

static void test_pressure(void **state)
{
        struct cgroup_pressure p = {1, 1};
        size_t len;
        char *buf = load("hybrid/cpu.pressure", &len);

        (void)state;
        assert_int_equal(cgroup_pressure_parse(buf, len, &p), 0);
        assert_true(p.some_us == 146112 && p.full_us == 146001);
        free(buf);
        /* cpu.pressure before 5.13 has no full line */
        buf = load("v2/cpu.pressure", &len);
        assert_int_equal(cgroup_pressure_parse(buf, len, &p), 0);
        assert_true(p.some_us == 1500000 && p.full_us == UINT64_MAX);
        free(buf);
        p.some_us = 9;
        assert_int_equal(cgroup_pressure_parse("full total=1\n", 13, &p), -EINVAL);
        assert_int_equal(cgroup_pressure_parse("some total=1x\n", 14, &p), -EINVAL);
        assert_true(p.some_us == 9);
}

static void test_procs(void **state)
{
        long pids[2];
        size_t n = 0, len;
        char *buf = load("hybrid/cgroup.procs", &len);

        (void)state;
        assert_int_equal(cgroup_procs_parse(buf, len, pids, 2, &n), 0);
        assert_int_equal(n, 3); /* more than fit */
        assert_true(pids[0] == 4242 && pids[1] == 4243);
        free(buf);
        assert_int_equal(cgroup_procs_parse("", 0, pids, 2, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(cgroup_procs_parse("0\n", 2, pids, 2, &n), -ERANGE);
        assert_int_equal(cgroup_procs_parse("12 x\n", 5, pids, 2, &n), -EINVAL);
        assert_int_equal(cgroup_procs_parse("3000000000\n", 11, pids, 2, &n), -ERANGE);
}

static void test_modes(void **state)
{
        enum cgroup_mode m;

        (void)state;
        assert_int_equal(cgroup_mode_parse("hybrid", &m), 0);
        assert_int_equal(m, CGROUP_MODE_HYBRID);
        assert_string_equal(cgroup_mode_name(m), "hybrid");
        assert_int_equal(cgroup_mode_parse("none", &m), 0);
        assert_string_equal(cgroup_mode_name(m), "none");
        assert_int_equal(cgroup_mode_parse("v3", &m), -EINVAL);
}

#define A(s) s, sizeof(s) - 1

static void test_labels(void **state)
{
        static const struct {
                const char *comm, *cmdline;
                size_t len;
                const char *want;
        } cases[] = {
            {"cc1plus",
             A("/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus\0-quiet\0-I\0inc.cpp\0aten/src/ATen/"
               "native/Foo.cpp\0-o\0/tmp/ccX.s\0"),
             "cc1plus aten/src/ATen/native/Foo.cpp"},
            {"rustc", A("rustc\0--crate-name\0foo\0--edition=2021\0src/lib.rs\0"), "rustc foo"},
            {"nvcc", A("nvcc\0-o\0k.cu\0kernel.cu\0"), "nvcc kernel.cu"},
            {"python3", A("python3\0setup.py\0build\0"), "python3 setup.py build"},
            /* a linker: its output */
            {"ld", A("ld\0-o\0a.out\0x.o\0"), "ld a.out"},
            {"kthreadd", "", 0, "kthreadd"},
            {"make", A("make\0-j8\0line\nbreak\0"), "make -j8 line?break"},
            /* the tail of a long source path, after "..." */
            {"cc1",
             A("cc1\0/very/long/path/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
               "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/"
               "x.c\0"),
             "cc1 ...aaaaaaaaaaaa/"
             "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/x.c"},
        };
        char out[PROCTOP_LABEL_MAX + 1], small[8];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                print_message("case %zu\n", i);
                assert_int_equal(
                    proctop_label(cases[i].comm, cases[i].cmdline, cases[i].len, out, sizeof(out)),
                    (int)strlen(cases[i].want));
                assert_string_equal(out, cases[i].want);
        }
        /* cut on a UTF-8 boundary: never half of a 2-byte "é" */
        assert_int_equal(proctop_label("x", A("x\0ab\xc3\xa9\xc3\xa9"), small, 7), 6);
        assert_string_equal(small, "x ab\xc3\xa9");
        assert_int_equal(proctop_label("x", A("x\0ab\xc3\xa9\xc3\xa9"), small, 6), 4);
        assert_string_equal(small, "x ab");
        assert_int_equal(proctop_label("x", "", 0, small, 0), -EINVAL);
}

static void test_top(void **state)
{
        struct proctop t;
        struct pidstat ps = {0};
        const uint64_t rss[] = {5, 50, 7, 50, 1, 90};

        (void)state;
        proctop_reset(&t);
        for (size_t i = 0; i < ARRAY_SIZE(rss); i++) {
                ps.pid = (long)i + 100;
                ps.rss_pages = rss[i];
                ps.state = 'R';
                snprintf(ps.comm, sizeof(ps.comm), "p%zu", i);
                proctop_consider(&t, &ps);
        }
        ps.pid = 999;
        ps.rss_pages = 1000;
        ps.state = 'Z'; /* a zombie holds nothing */
        proctop_consider(&t, &ps);
        assert_int_equal(t.n, 3);
        assert_int_equal(t.e[0].pid, 105);
        assert_int_equal(t.e[1].pid, 101); /* ties: the first seen stays ahead */
        assert_int_equal(t.e[2].pid, 103);
}

/* The OOM killer's report: the victim of the build's memcg only. */
static void test_kmsg(void **state)
{
        static const char oomkill[] =
            "6,900,1,-;cgload invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0\n"
            "3,901,2,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
            "mems_allowed=0,oom_memcg=/buildtel/run-a-1,task_memcg=/buildtel/run-a-1,"
            "task=cgload,pid=4242,uid=0\n"
            "3,902,3,-;Memory cgroup out of memory: Killed process 4242 (cgload) "
            "total-vm:1052812kB, anon-rss:101888kB, file-rss:1280kB, shmem-rss:0kB, UID:0\n"
            " SUBSYSTEM=memory\n";
        static const struct {
                const char *text, *memcg;
                int ret;
                long pid;
                const char *comm;
        } cases[] = {
            {oomkill, "/buildtel/run-a-1", 1, 4242, "cgload"},
            {oomkill, NULL, 1, 4242, "cgload"},
            /* another cgroup's kill; a prefix that is not a parent */
            {oomkill, "/buildtel/run-b-2", 0, 0, NULL},
            {oomkill, "/buildtel/run-a", 0, 0, NULL},
            /* a cgroup below the build's (a nested scope) is the build's */
            {"oom-kill:constraint=CONSTRAINT_MEMCG,task_memcg=/b/run-a-1/x.scope,task=cc1,"
             "pid=7,uid=0\n",
             "/b/run-a-1", 1, 7, "cc1"},
            /* a comm with ',' and ')' and a control character */
            {"oom-kill:task_memcg=/r,task=a,pid=b,pid=12,uid=0\n", "/r", 1, 12, "a,pid=b"},
            {"x;Out of memory: Killed process 99 (we)ird\x01) total-vm:1kB\n", NULL, 1, 99,
             "we)ird?"},
            /* "Killed process" lines alone do not say which memcg */
            {"x;Killed process 99 (a) total-vm:1kB\n", "/r", 0, 0, NULL},
            /* the last victim of the buffer wins */
            {"oom-kill:task_memcg=/r,task=a,pid=1,uid=0\noom-kill:task_memcg=/r,task=b,pid=2\n",
             "/r", 1, 2, "b"},
            /* junk: no pid, pid 0, pid over INT_MAX, a pid with trailing junk */
            {"oom-kill:task_memcg=/r,task=a,uid=0\n", "/r", 0, 0, NULL},
            {"oom-kill:task_memcg=/r,task=a,pid=0\n", "/r", 0, 0, NULL},
            {"oom-kill:task_memcg=/r,task=a,pid=3000000000\n", "/r", 0, 0, NULL},
            {"x;Killed process 12x (a) total-vm:1kB\n", NULL, 0, 0, NULL},
            {"", NULL, 0, 0, NULL},
        };
        char comm[8];
        long pid;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                print_message("case %zu\n", i);
                pid = -1;
                assert_int_equal(cgroup_kmsg_victim_parse(cases[i].text, strlen(cases[i].text),
                                                          cases[i].memcg, &pid, comm, sizeof(comm)),
                                 cases[i].ret);
                if (cases[i].ret == 1) {
                        assert_int_equal(pid, cases[i].pid);
                        assert_string_equal(comm, cases[i].comm);
                } else {
                        assert_int_equal(pid, -1);
                }
        }
        /* a comm longer than the buffer is cut */
        assert_int_equal(
            cgroup_kmsg_victim_parse(A("oom-kill:task_memcg=/r,task=abcdefghijk,pid=5\n"), "/r",
                                     &pid, comm, sizeof(comm)),
            1);
        assert_string_equal(comm, "abcdefg");
        assert_int_equal(cgroup_kmsg_victim_parse(NULL, 0, NULL, &pid, comm, 8), -EINVAL);
}

/* How a v2 cgroup with memory is had: the decision alone. */
static void test_v2_plan(void **state)
{
        static const struct {
                bool root, offered;
                size_t nprocs;
                bool only_us, writable, systemd;
                enum cgroup_v2_plan want;
        } cases[] = {
            /* the hybrid host's v2: nothing to enable, cpu.stat only */
            {true, false, 40, false, true, true, CG_PLAN_PLAIN},
            {false, false, 1, true, true, true, CG_PLAN_PLAIN},
            /* the root cgroup may hold processes and pass controllers on */
            {true, true, 40, false, true, true, CG_PLAN_DIRECT},
            /* alone in a delegated scope or service */
            {false, true, 1, true, true, true, CG_PLAN_LEAF},
            /* a root service without Delegate, a login session: systemd */
            {false, true, 5, false, true, true, CG_PLAN_SCOPE},
            {false, true, 1, true, false, true, CG_PLAN_SCOPE},
            {false, true, 5, false, true, false, CG_PLAN_FAIL},
            /* alone but not ours to write, and no systemd to ask */
            {false, true, 1, true, false, false, CG_PLAN_FAIL},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                print_message("case %zu\n", i);
                assert_int_equal(cgroup_v2_plan(cases[i].root, cases[i].offered, cases[i].nprocs,
                                                cases[i].only_us, cases[i].writable,
                                                cases[i].systemd),
                                 cases[i].want);
        }
}

/* ---- setup on fake trees: a root dir holding proc/self/{mountinfo,cgroup}
 * and the cgroup files, as cgroup_new reads them relative to cfg->root ---- */

static void put(const char *root, const char *rel, const char *text)
{
        char path[1024], *slash;

        assert_true(snprintf(path, sizeof(path), "%s/%s", root, rel) < (int)sizeof(path));
        for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                (void)mkdir(path, 0755);
                *slash = '/';
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, text, strlen(text)), 0);
        close(fd);
}

static char notes[4096];

static void collect(void *userdata, const char *fmt, ...)
{
        va_list ap;
        size_t n = strlen(notes);

        (void)userdata;
        va_start(ap, fmt);
        vsnprintf(notes + n, sizeof(notes) - n, fmt, ap);
        va_end(ap);
        if (strlen(notes) + 1 < sizeof(notes))
                strcat(notes, "\n");
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path) < 0 ? -1 : 0;
}

static void rm_tree(const char *dir)
{
        assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void test_setup_fake(void **state)
{
        static const char v2mi[] = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        static const char hymi[] =
            "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
            "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        static const struct {
                const char *name, *mountinfo, *self, *own, *controllers;
                bool others; /* another process shares our cgroup */
                int ret;
                const char *note_has, *note_lacks, *why_has;
        } cases[] = {
            /* cgroup2 with no memory to give: cpu.stat only; no v1 here, so
             * no word of --cgroup=hybrid */
            {"v2 without memory", v2mi, "0::/\n", "sys/fs/cgroup", "cpu io", false, 0,
             "offers no memory controller", "--cgroup=hybrid", NULL},
            {"hybrid's v2", hymi, "0::/\n4:memory:/\n", "sys/fs/cgroup/unified", "", false, 0,
             "(--cgroup=hybrid reads them from v1)", NULL, NULL},
            /* a root service without Delegate=, with no systemd to ask */
            {"shared service cgroup", v2mi, "0::/system.slice/ci.service\n",
             "sys/fs/cgroup/system.slice/ci.service", "memory pids", true, -EBUSY, NULL, NULL,
             "holds 1 other process(es)"},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char dir[] = "/tmp/test-cgroup-XXXXXX", rel[512], text[64], why[512] = "";
                struct cgroup_config cfg = {
                    .mode = CGROUP_MODE_V2,
                    .root = dir,
                    .run_id = "t",
                    .note = collect,
                    .why = why,
                    .why_cap = sizeof(why),
                };
                struct cgroup *cg = NULL;
                char *after;
                size_t len;
                int r;

                print_message("%s\n", cases[i].name);
                notes[0] = '\0';
                assert_non_null(mkdtemp(dir));
                put(dir, "proc/self/mountinfo", cases[i].mountinfo);
                put(dir, "proc/self/cgroup", cases[i].self);
                snprintf(rel, sizeof(rel), "%s/cgroup.controllers", cases[i].own);
                put(dir, rel, cases[i].controllers);
                snprintf(rel, sizeof(rel), "%s/cgroup.subtree_control", cases[i].own);
                put(dir, rel, "");
                if (cases[i].others)
                        snprintf(text, sizeof(text), "1\n%ld\n", (long)getpid());
                else
                        snprintf(text, sizeof(text), "%ld\n", (long)getpid());
                snprintf(rel, sizeof(rel), "%s/cgroup.procs", cases[i].own);
                put(dir, rel, text);
                /* the files the kernel would make in the build's cgroup */
                snprintf(rel, sizeof(rel), "%s/buildtel/run-t-%ld/cgroup.procs", cases[i].own,
                         (long)getpid());
                if (cases[i].ret == 0)
                        put(dir, rel, "");
                r = cgroup_new(&cfg, &cg);
                assert_int_equal(r, cases[i].ret);
                if (cases[i].note_has)
                        assert_non_null(strstr(notes, cases[i].note_has));
                if (cases[i].note_lacks)
                        assert_null(strstr(notes, cases[i].note_lacks));
                if (cases[i].why_has) {
                        assert_non_null(strstr(why, cases[i].why_has));
                        /* the remedy, and nothing written to the caller's cgroup */
                        assert_non_null(strstr(why, "systemd-run --scope -p Delegate=yes"));
                        snprintf(rel, sizeof(rel), "%s/%s/cgroup.subtree_control", dir,
                                 cases[i].own);
                        assert_int_equal(read_file_at(AT_FDCWD, rel, 4096, &after, &len), 0);
                        assert_int_equal(len, 0);
                        free(after);
                        snprintf(rel, sizeof(rel), "%s/%s/buildtel", dir, cases[i].own);
                        assert_int_equal(access(rel, F_OK), -1);
                }
                cgroup_free(cg);
                rm_tree(dir);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mounts),     cmocka_unit_test(test_mounts_escape),
            cmocka_unit_test(test_self),       cmocka_unit_test(test_numbers),
            cmocka_unit_test(test_io),         cmocka_unit_test(test_pressure),
            cmocka_unit_test(test_procs),      cmocka_unit_test(test_modes),
            cmocka_unit_test(test_labels),     cmocka_unit_test(test_top),
            cmocka_unit_test(test_kmsg),       cmocka_unit_test(test_v2_plan),
            cmocka_unit_test(test_setup_fake),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
