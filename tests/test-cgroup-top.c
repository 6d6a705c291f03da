/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/cgroup-top.h"
#include "platform/cgroup.h"
#include "platform/procfs.h"
#include "util/macro.h"

#define A(s) s, sizeof(s) - 1

/* ---- what a process compiles or links ---- */

static const struct {
        const char *comm, *cmdline;
        size_t len;
        enum procunit_kind kind;
        const char *name;
} classify_cases[] = {
    {"cc1",
     A("/usr/lib/gcc/x86_64-linux-gnu/12/cc1\0-quiet\0-I\0include\0src/heavy.c\0-quiet\0-dumpbase\0"
       "heavy.c\0-O2\0-o\0/tmp/ccX.s\0"),
     PROCUNIT_COMPILE, "src/heavy.c"},
    {"cc1plus", A("cc1plus\0-D\0X=a.c\0-include\0pre.h\0aten/Foo.cpp\0"), PROCUNIT_COMPILE,
     "aten/Foo.cpp"},
    {"gcc", A("gcc\0-O2\0-fPIC\0-c\0-o\0heavy.o\0heavy.c\0"), PROCUNIT_COMPILE, "heavy.c"},
    {"gcc-12", A("gcc-12\0-c\0a.c\0"), PROCUNIT_COMPILE, "a.c"},
    {"clang", A("clang\0-cc1\0-triple\0x86_64\0-main-file-name\0m.c\0-o\0m.o\0-x\0c\0../src/m.c\0"),
     PROCUNIT_COMPILE, "../src/m.c"},
    {"rustc", A("rustc\0--crate-name\0serde\0--edition=2021\0src/lib.rs\0"), PROCUNIT_COMPILE,
     "serde"},
    {"nvcc", A("nvcc\0-o\0k.cu\0kernel.cu\0"), PROCUNIT_COMPILE, "kernel.cu"},
    /* links: the output's base name */
    {"gcc", A("gcc\0-shared\0-o\0out/app.so\0s1.o\0heavy.o\0"), PROCUNIT_LINK, "app.so"},
    {"collect2",
     A("/usr/lib/gcc/x86_64-linux-gnu/12/collect2\0-plugin\0/x/liblto_plugin.so\0-o\0"
       "redis-server\0a.o\0"),
     PROCUNIT_LINK, "redis-server"},
    {"ld", A("/usr/bin/ld\0-plugin-opt=-fresolution=/tmp/ccX.res\0-o\0/b/app\0a.o\0"),
     PROCUNIT_LINK, "app"},
    {"ld.gold", A("ld.gold\0a.o\0b.o\0"), PROCUNIT_LINK, "a.out"},
    {"mold", A("mold\0-oapp\0a.o\0"), PROCUNIT_LINK, "app"},
    {"lto1-ltrans",
     A("lto1-ltrans\0-quiet\0-dumpbase\0./redis-server.ltrans1.ltrans\0-mtune=generic\0-o\0/tmp/"
       "ccY.ltrans1.ltrans.o\0"),
     PROCUNIT_LINK, "redis-server"},
    {"lto1-wpa", A("lto1-wpa\0-quiet\0-dumpbase\0./app.so.wpa\0-fwpa\0"), PROCUNIT_LINK, "app.so"},
    {"lto1", A("lto1\0-quiet\0-o\0/b/libx.so.ltrans0.ltrans.o\0"), PROCUNIT_LINK, "libx.so"},
    /* neither */
    {"as", A("as\0--64\0-o\0heavy.o\0/tmp/ccX.s\0"), PROCUNIT_NONE, ""},
    {"make", A("make\0-j2\0all.c\0"), PROCUNIT_NONE, ""},
    {"gcc", A("gcc\0--version\0"), PROCUNIT_NONE, ""},
    /* a driver over several sources: its cc1 children are the units (seen
     * on redis: `cc -MM acl.c adlist.c ...` made acl.c a unit from +1 s) */
    {"cc", A("cc\0-std=gnu11\0-MM\0acl.c\0adlist.c\0ae.c\0"), PROCUNIT_NONE, ""},
    {"gcc", A("gcc\0-O2\0-o\0app\0a.c\0b.c\0"), PROCUNIT_NONE, ""},
    {"cc", A("cc\0-MM\0acl.c\0"), PROCUNIT_COMPILE, "acl.c"},
    {"gcc", A("gcc\0-c\0-o\0x.o\0"), PROCUNIT_NONE, ""},
    {"lto1", A("lto1\0-quiet\0"), PROCUNIT_NONE, ""},
    {"cc1", "", 0, PROCUNIT_NONE, ""},
    /* hostile: control bytes, and a path cut at its head */
    {"cc1", A("cc1\0a\nb\x1b.c\0"), PROCUNIT_COMPILE, "a?b?.c"},
    {"cc1",
     A("cc1\0/very/long/path/"
       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/x.c\0"),
     PROCUNIT_COMPILE,
     "...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/"
     "x.c"},
};

static void test_classify(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(classify_cases); i++) {
                struct procunit u;

                print_message("case %zu\n", i);
                procunit_classify(classify_cases[i].comm, classify_cases[i].cmdline,
                                  classify_cases[i].len, &u);
                assert_int_equal(u.kind, classify_cases[i].kind);
                assert_string_equal(u.tool, classify_cases[i].comm);
                if (u.kind != PROCUNIT_NONE)
                        assert_string_equal(u.name, classify_cases[i].name);
                assert_true(strlen(u.name) <= PROCUNIT_NAME_MAX);
        }
}

/* A compile's identity: a hash of its -o (0 without), its -std=, its
 * output's directory; links have none. */
static const struct {
        const char *comm, *cmdline;
        size_t len;
        bool key;
        const char *std, *dir;
} identity_cases[] = {
    {"c++", A("c++\0-std=gnu++17\0-c\0x.cpp\0-o\0b/x.o\0"), true, "gnu++17", "b"},
    {"c++", A("c++\0-std=gnu++11\0-c\0x.cpp\0-o\0a.o\0"), true, "gnu++11", ""},
    {"cc1", A("cc1\0x.c\0"), false, "", ""},
    {"clang", A("clang\0-cc1\0-std=c17\0-o\0t/CMakeFiles/u_c17.dir/src/x.c.o\0x.c\0"), true, "c17",
     "t/CMakeFiles/u_c17.dir/src"},
    {"ld", A("ld\0-std=x\0-o\0out/app\0a.o\0"), false, "", ""},
};

static void test_identity(void **state)
{
        struct procunit u, v;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(identity_cases); i++) {
                print_message("case %zu\n", i);
                procunit_classify(identity_cases[i].comm, identity_cases[i].cmdline,
                                  identity_cases[i].len, &u);
                assert_int_not_equal(u.kind, PROCUNIT_NONE);
                assert_int_equal(u.key != 0, identity_cases[i].key);
                assert_string_equal(u.std, identity_cases[i].std);
                assert_string_equal(u.dir, identity_cases[i].dir);
        }
        /* two outputs, two keys */
        procunit_classify(identity_cases[0].comm, identity_cases[0].cmdline, identity_cases[0].len,
                          &u);
        procunit_classify(identity_cases[1].comm, identity_cases[1].cmdline, identity_cases[1].len,
                          &v);
        assert_true(u.key != v.key);
        /* the source whole for the model to resolve; none for a link */
        assert_string_equal(u.src, "x.cpp");
        procunit_classify(identity_cases[4].comm, identity_cases[4].cmdline, identity_cases[4].len,
                          &u);
        assert_string_equal(u.src, "");
}

/* ---- labels: never over 100 bytes ---- */

static const struct {
        const char *comm, *cmdline;
        size_t len;
        const char *want;
} label_cases[] = {
    {"lto1-ltrans",
     A("lto1-ltrans\0-quiet\0-dumpbase\0./redis-server.ltrans1.ltrans\0-mtune=generic\0-march=x86-"
       "64\0-O2\0-fno-omit-frame-pointer\0-fltrans\0-o\0/tmp/cc.ltrans1.ltrans.o\0"),
     "lto1-ltrans redis-server"},
    {"python3",
     A("python3\0setup.py\0build_ext\0--inplace\0--parallel\0--very-long-option-name-here\0and-"
       "more-"
       "words\0"),
     "python3 setup.py build_ext --inplace --parallel --very-long-option-"},
    {"gcc", A("gcc\0-shared\0-o\0out/app.so\0a.o\0"), "gcc app.so"},
};

static void test_labels(void **state)
{
        char out[PROCTOP_LABEL_MAX + 1], big[512], cmd[4096];
        size_t n;

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(label_cases); i++) {
                assert_int_equal(proctop_label(label_cases[i].comm, label_cases[i].cmdline,
                                               label_cases[i].len, out, sizeof(out)),
                                 (int)strlen(label_cases[i].want));
                assert_string_equal(out, label_cases[i].want);
        }
        /* a bigger buffer does not make a longer label: at most 100 bytes
         * for a long comm, a long source, a long output, many arguments */
        static const char *const comms[] = {
            "cc1", "ld", "lto1-ltrans", "python3",
            "a-very-long-comm-name-from-a-fixture-64-bytes-long-xxxxxxxxxxxxxx"};
        for (size_t c = 0; c < ARRAY_SIZE(comms); c++) {
                n = 0;
                n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s", comms[c]) + 1;
                n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "-o") + 1;
                memset(big, 'o', 300);
                big[300] = '\0';
                n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s", big) + 1;
                memset(big, 's', 300);
                memcpy(big + 300, ".c", 3);
                n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s", big) + 1;
                for (int k = 0; k < 50; k++)
                        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "-Dlong_define_%d", k) + 1;
                char wide[1024];
                int r = proctop_label(comms[c], cmd, n, wide, sizeof(wide));

                print_message("%s: %d '%s'\n", comms[c], r, wide);
                assert_true(r > 0 && r <= PROCTOP_LABEL_MAX);
                assert_int_equal((size_t)r, strlen(wide));
        }
}

/* ---- the running column ---- */

static void test_running_text(void **state)
{
        struct procscan_unit u[3] = {
            {.u = {PROCUNIT_COMPILE, "cc1", "src/heavy.c"}},
            {.u = {PROCUNIT_COMPILE, "cc1", "s5.c"}},
            {.u = {PROCUNIT_LINK, "ld", "app.so"}},
        };
        char out[300], small[14];

        (void)state;
        assert_int_equal(procscan_running_text(u, 3, out, sizeof(out)), 22);
        assert_string_equal(out, "heavy.c s5.c ld:app.so");
        /* whole words only */
        assert_int_equal(procscan_running_text(u, 3, small, sizeof(small)), 12);
        assert_string_equal(small, "heavy.c s5.c");
        assert_int_equal(procscan_running_text(u, 3, small, 8), 7);
        assert_int_equal(procscan_running_text(u, 3, small, 7), 0);
        assert_string_equal(small, "");
        assert_int_equal(procscan_running_text(u, 0, out, sizeof(out)), 0);
        assert_int_equal(procscan_running_text(u, 3, out, 0), -EINVAL);
}

/* Units of one word (one source built two ways) are said once, counted. */
static void test_running_twice(void **state)
{
        struct procscan_unit u[4] = {
            {.u = {PROCUNIT_COMPILE, "cc1plus", "a/x.cpp", .key = 1}},
            {.u = {PROCUNIT_LINK, "ld", "app"}},
            {.u = {PROCUNIT_COMPILE, "cc1plus", "x.cpp", .key = 2}},
            {.u = {PROCUNIT_COMPILE, "cc1plus", "b/x.cpp", .key = 3}},
        };
        char out[300], small[9];

        (void)state;
        assert_int_equal(procscan_running_text(u, 4, out, sizeof(out)), 15);
        assert_string_equal(out, "x.cpp x3 ld:app");
        assert_int_equal(procscan_running_text(u, 4, small, sizeof(small)), 8);
        assert_string_equal(small, "x.cpp x3");
        assert_int_equal(procscan_running_text(u, 2, out, sizeof(out)), 12);
        assert_string_equal(out, "x.cpp ld:app");
}

/* ---- a scan over real processes ---- */

/* A script named like a compiler: its comm is the script's name, its
 * cmdline "/bin/sh DIR/cc1 ARGS...". */
static void write_tool(const char *dir, const char *name)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("#!/bin/sh\nsleep 30\n:\n", f);
        fclose(f);
        assert_int_equal(chmod(path, 0755), 0);
}

static pid_t spawn(const char *dir, const char *name, const char *a1, const char *a2,
                   const char *a3)
{
        char path[256];
        pid_t p;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                /* its own group, so the script's sleep goes with it; and
                 * not on the test's output, which meson waits on */
                int null = open("/dev/null", O_RDWR);

                setpgid(0, 0);
                if (chdir(dir) < 0) /* the cwd the scan reads */
                        _exit(126);
                if (null >= 0) {
                        dup2(null, 1);
                        dup2(null, 2);
                }
                execl(path, name, a1, a2, a3, (char *)NULL);
                _exit(127);
        }
        return p;
}

static void scan(struct procscan *s, struct procfs *pf, const pid_t *pids, size_t n)
{
        procscan_begin(s);
        for (size_t i = 0; i < n; i++) {
                struct pidstat ps;

                if (procfs_pidstat(pf, pids[i], &ps) >= 0)
                        procscan_consider(s, &ps);
        }
        procscan_end(s, pf);
}

static void test_scan_real(void **state)
{
        char dir[] = "/tmp/buildtel-top.XXXXXX", text[300];
        struct procscan *s = NULL;
        struct procfs *pf = NULL;
        const struct procscan_unit *u;
        pid_t pids[3];
        size_t n;

        (void)state;
        assert_non_null(mkdtemp(dir));
        write_tool(dir, "cc1");
        write_tool(dir, "ld");
        pids[0] = spawn(dir, "cc1", "-quiet", "src/heavy.c", "-O2");
        pids[1] = spawn(dir, "cc1", "-quiet", "s5.c", "-O2");
        pids[2] = spawn(dir, "ld", "-o", "out/app.so", "a.o");
        usleep(200000); /* the scripts are running */
        assert_int_equal(procfs_new("/", &pf), 0);
        assert_int_equal(procscan_new(&s), 0);
        for (int round = 0; round < 2; round++) { /* the second from the cache */
                scan(s, pf, pids, 3);
                u = procscan_units(s, &n);
                assert_int_equal(n, 3);
                assert_int_equal(procscan_running_text(u, n, text, sizeof(text)) > 0, 1);
                print_message("running: %s\n", text);
                assert_non_null(strstr(text, "heavy.c"));
                assert_non_null(strstr(text, "s5.c"));
                assert_non_null(strstr(text, "ld:app.so"));
                for (size_t i = 0; i < n; i++) {
                        bool link = u[i].u.kind == PROCUNIT_LINK;

                        assert_true(u[i].rss_pages > 0 && u[i].nprocs == 1);
                        /* a compile's source as given, and its cwd */
                        assert_string_equal(u[i].u.src, link ? "" : u[i].u.name);
                        assert_string_equal(u[i].u.cwd, link ? "" : dir);
                }
        }
        u = procscan_ended(s, &n);
        assert_int_equal(n, 0);
        assert_int_equal(procfs_cwd(pf, pids[0], text, sizeof(text)), (ssize_t)strlen(dir));
        assert_string_equal(text, dir);
        assert_int_equal(procfs_cwd(pf, pids[0], text, 4), -ENAMETOOLONG);
        kill(-pids[0], SIGKILL);
        waitpid(pids[0], NULL, 0);
        assert_int_equal(procfs_cwd(pf, pids[0], text, sizeof(text)), -ENOENT); /* gone */
        scan(s, pf, pids, 3);
        u = procscan_units(s, &n);
        assert_int_equal(n, 2);
        u = procscan_ended(s, &n); /* heavy.c's process ended: its CPU is kept */
        assert_int_equal(n, 1);
        assert_string_equal(u[0].u.name, "src/heavy.c");
        assert_int_equal(u[0].nprocs, 1);
        assert_true(u[0].cpu_s >= 0.0 && u[0].rss_pages == 0);
        scan(s, pf, pids, 3); /* and said once */
        (void)procscan_ended(s, &n);
        assert_int_equal(n, 0);
        u = procscan_units(s, &n);
        assert_int_equal(n, 2);
        (void)procscan_running_text(u, n, text, sizeof(text));
        assert_null(strstr(text, "heavy.c"));
        for (size_t i = 1; i < 3; i++) {
                kill(-pids[i], SIGKILL);
                waitpid(pids[i], NULL, 0);
        }
        procscan_free(s);
        procscan_free(NULL);
        procfs_free(pf);
        snprintf(text, sizeof(text), "%s/cc1", dir);
        unlink(text);
        snprintf(text, sizeof(text), "%s/ld", dir);
        unlink(text);
        rmdir(dir);
}

/* ---- /proc/PID/statm ---- */

static const struct {
        const char *in;
        int ret;
        uint64_t anon, file;
} statm_cases[] = {
    {"2730 402 310 46 0 151 0\n", 0, 92, 310},
    {"1 0 0 0 0 0 0", 0, 0, 0},
    {"100 40", -EINVAL, 0, 0},
    {"100 40 50 1 0 1 0\n", -EINVAL, 0, 0}, /* shared over resident */
    {"x 1 2", -EINVAL, 0, 0},
    {"1 99999999999999999999999 1", -ERANGE, 0, 0},
    {"", -EINVAL, 0, 0},
};

static void test_statm(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(statm_cases); i++) {
                struct pidmem m = {7, 7};
                int r = pidmem_parse(statm_cases[i].in, strlen(statm_cases[i].in), &m);

                print_message("'%s'\n", statm_cases[i].in);
                assert_int_equal(r, statm_cases[i].ret);
                if (r == 0) {
                        assert_int_equal(m.anon_pages, statm_cases[i].anon);
                        assert_int_equal(m.file_pages, statm_cases[i].file);
                } else {
                        assert_int_equal(m.anon_pages, 7); /* untouched */
                }
        }
}

/* ---- memory.stat: the keys read for the anon/file split ---- */

static void test_memstat_keys(void **state)
{
        /* v2 puts anon_thp, file_mapped and friends beside the two we want;
         * v1 has rss and cache for the group itself before the total_ ones */
        static const char v2[] = "anon 257982464\nfile 16777216\nkernel 1048576\n"
                                 "anon_thp 2097152\nfile_mapped 524288\nfile_dirty 0\n";
        static const char v1[] = "cache 10121216\nrss 15306752\nrss_huge 0\n"
                                 "total_cache 16515072\ntotal_rss 258256896\n";
        uint64_t v = 0;

        (void)state;
        assert_int_equal(cgroup_keyed_parse(v2, sizeof(v2) - 1, "anon", &v), 0);
        assert_int_equal(v, 257982464);
        assert_int_equal(cgroup_keyed_parse(v2, sizeof(v2) - 1, "file", &v), 0);
        assert_int_equal(v, 16777216);
        assert_int_equal(cgroup_keyed_parse(v1, sizeof(v1) - 1, "total_rss", &v), 0);
        assert_int_equal(v, 258256896);
        assert_int_equal(cgroup_keyed_parse(v1, sizeof(v1) - 1, "total_cache", &v), 0);
        assert_int_equal(v, 16515072);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_classify),     cmocka_unit_test(test_labels),
            cmocka_unit_test(test_running_text), cmocka_unit_test(test_scan_real),
            cmocka_unit_test(test_identity),     cmocka_unit_test(test_running_twice),
            cmocka_unit_test(test_statm),        cmocka_unit_test(test_memstat_keys),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
