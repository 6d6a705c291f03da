/* SPDX-License-Identifier: MIT */
/* The RUN steps of a BuildKit build (parse/bkrun), the exec cgroups'
 * parsers (platform/bkexec: net/dev, the runc bundle's process.args, the
 * kernel's oom-kill record) and the per-step sums (model/execs). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/execs.h"
#include "model/targets.h"
#include "parse/bkrecord.h"
#include "parse/bkrun.h"
#include "platform/bkexec.h"
#include "platform/kmsg.h"
#include "platform/procfs.h"
#include "util/macro.h"
#include "helpers/parse.h"

static void test_vertex_cmd(void **state)
{
        static const struct {
                const char *name, *want; /* want NULL: not a RUN step */
        } cases[] = {
            {"[2/3] RUN head -c 300m /dev/zero | tail", "head -c 300m /dev/zero | tail"},
            {"[app common 2/3] RUN   make  -j8\tall ", "make -j8 all"},
            {"#6 [stage 1/2] RUN echo hi", "echo hi"},
            {"[2/2] RUN --mount=type=cache,target=/root/.cache --network=none cc -c a.c",
             "cc -c a.c"},
            {"[3/4] RUN [\"/bin/echo\", \"a b\", \"c\\\"d\"]", "/bin/echo a b c\"d"},
            {"[3/4] RUN [not json", "[not json"},
            {"RUN x", "x"},
            {"[1/2] FROM docker.io/local/busybox", NULL},
            {"[internal] load build definition from Dockerfile", NULL},
            {"[2/3] COPY a /b", NULL},
            {"[2/3] RUNNER x", NULL},
            {"[unterminated RUN x", NULL},
            {"", NULL},
        };
        char out[BKRUN_CMD_MAX + 1];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                int n = bkrun_vertex_cmd(cases[i].name, strlen(cases[i].name), out, sizeof(out));
                print_message("%s\n", cases[i].name);
                if (!cases[i].want) {
                        assert_int_equal(n, 0);
                        continue;
                }
                assert_string_equal(out, cases[i].want);
                assert_int_equal(n, (int)strlen(cases[i].want));
        }
        assert_int_equal(bkrun_vertex_cmd("RUN x", 5, out, 0), -EINVAL);
        /* cut at the buffer, never past it */
        assert_int_equal(bkrun_vertex_cmd("[1/1] RUN abcdefgh", 18, out, 4), 3);
        assert_string_equal(out, "abc");
}

#define A(s) s, sizeof(s) - 1
static void test_argv_cmd(void **state)
{
        static const struct {
                const char *argv;
                size_t len;
                const char *want;
        } cases[] = {
            {A("/bin/sh\0-c\0head -c 300m /dev/zero | tail\0"), "head -c 300m /dev/zero | tail"},
            {A("/bin/bash\0-o\0pipefail\0-c\0make  all\0"), "make all"},
            {A("/bin/sh\0-ec\0echo a\0"), "echo a"},
            {A("sh\0-c\0echo a\0arg0\0"), "echo a"},
            {A("/bin/echo\0a b\0c\0"), "/bin/echo a b c"},
            {A("/usr/bin/python3\0-c\0print(1)\0"), "/usr/bin/python3 -c print(1)"},
            {A("sleep\0001"), "sleep 1"},
            {A("\0"), ""},
        };
        char out[BKRUN_CMD_MAX + 1];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                int n = bkrun_argv_cmd(cases[i].argv, cases[i].len, out, sizeof(out));
                print_message("case %zu\n", i);
                assert_string_equal(out, cases[i].want);
                assert_int_equal(n, (int)strlen(cases[i].want));
        }
        /* both sides of a match give the same text */
        {
                char a[BKRUN_CMD_MAX + 1], b[BKRUN_CMD_MAX + 1];
                static const char name[] = "[2/2] RUN cc -O2 \\\n    -c a.c";
                static const char argv[] = "/bin/sh\0-c\0cc -O2 \\\n    -c a.c";
                bkrun_vertex_cmd(name, sizeof(name) - 1, a, sizeof(a));
                bkrun_argv_cmd(argv, sizeof(argv) - 1, b, sizeof(b));
                assert_string_equal(a, b);
        }
}

struct seen {
        char cmd[4][BKRUN_CMD_MAX + 1];
        size_t n;
};

static void collect(void *userdata, const char *cmd, size_t len)
{
        struct seen *s = userdata;

        if (s->n < 4) {
                memcpy(s->cmd[s->n], cmd, len);
                s->cmd[s->n++][len] = '\0';
        }
}

static void test_feed_line(void **state)
{
        static const struct {
                const char *line;
                size_t n;
                const char *first;
        } cases[] = {
            {"#5 [2/3] RUN head -c 300m /dev/zero | tail >/dev/null", 1,
             "head -c 300m /dev/zero | tail >/dev/null"},
            {"#12 [app common 2/3] RUN make", 1, "make"},
            {"#5 0.123 RUN not a header", 0, NULL},
            {"#5 DONE 1.4s", 0, NULL},
            {"#3 sha256:abcdef", 0, NULL},
            {"{\"vertexes\":[{\"digest\":\"sha256:1\",\"name\":\"[2/2] RUN echo \\u003e x "
             "\\u0026\\u0026 cat x\",\"started\":\"t\"},{\"digest\":\"sha256:2\",\"name\":\"[1/2] "
             "FROM x\"},{\"name\":\"[3/3] RUN b\"}]}",
             2, "echo > x && cat x"},
            {"{\"vertexes\":[{\"name\":\"[2/2] RUN unterminated", 0, NULL},
            {"plain text RUN x", 0, NULL},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct seen s = {.n = 0};
                size_t n = bkrun_feed_line(cases[i].line, strlen(cases[i].line), collect, &s);
                print_message("%s\n", cases[i].line);
                assert_int_equal(n, cases[i].n);
                assert_int_equal(s.n, cases[i].n);
                if (cases[i].first)
                        assert_string_equal(s.cmd[0], cases[i].first);
        }
}

static void test_driver(void **state)
{
        static const struct {
                const char *line, *want, *builder;
        } cases[] = {
            {"#0 building with \"default\" instance using docker driver", "docker", "default"},
            {"#0 building with \"ci\" instance using docker-container driver", "docker-container",
             "ci"},
            {"#0 building with \"a-builder-named-long\" instance using remote driver", "remote",
             "a-builder-named"},
            {"#0 building with \"\" instance using remote driver", "remote", ""},
            {"#0 building with \"x\" instance using", "", ""},
            {"#1 building with \"x\" instance using docker driver", "", ""},
        };
        char out[32], builder[16];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                int n = bkrun_driver(cases[i].line, strlen(cases[i].line), out, sizeof(out),
                                     builder, sizeof(builder));
                assert_int_equal(n, (int)strlen(cases[i].want));
                assert_string_equal(out, cases[i].want);
                assert_string_equal(builder, cases[i].builder);
        }
}

static void test_netdev(void **state)
{
        static const char dev[] =
            "Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
            "errs drop fifo colls carrier compressed\n"
            "    lo:    1000      10    0    0    0     0          0         0     1000      10 "
            "   0    0    0     0       0          0\n"
            "  eth0: 123456     100    0    0    0     0          0         0    65432      50 "
            "   0    0    0     0       0          0\n"
            "  eth1:      4       1    0    0    0     0          0         0        6       1 "
            "   0    0    0     0       0          0\n";
        static const char lo_only[] = "Inter-|   Receive |  Transmit\n face |bytes |bytes\n"
                                      "    lo:  500 5 0 0 0 0 0 0  500 5 0 0 0 0 0 0\n";
        uint64_t rx = 1, tx = 1;

        (void)state;
        assert_int_equal(bkexec_netdev_parse(dev, sizeof(dev) - 1, &rx, &tx), 0);
        assert_int_equal(rx, 123460);
        assert_int_equal(tx, 65438);
        assert_int_equal(bkexec_netdev_parse(lo_only, sizeof(lo_only) - 1, &rx, &tx), 0);
        assert_int_equal(rx, 0);
        assert_int_equal(tx, 0);
        rx = 7;
        assert_int_equal(bkexec_netdev_parse("eth0: 1 2 3\n", 12, &rx, &tx), -EINVAL);
        assert_int_equal(rx, 7);
        assert_int_equal(bkexec_netdev_parse("garbage", 7, &rx, &tx), -EINVAL);
}

static void test_bundle_args(void **state)
{
        static const char cfg[] =
            "{\"ociVersion\":\"1.0.2\",\"process\":{\"terminal\":false,\"user\":{\"uid\":0},"
            "\"args\":[\"/bin/sh\",\"-c\",\"head -c 1m /dev/zero \\u003e /x \\u0026\\u0026 echo "
            "\\\"ok\\\"\"],\"env\":[\"PATH=/bin\"]},\"linux\":{\"seccomp\":{\"syscalls\":[{"
            "\"args\":[{\"index\":0}]}]}}}";
        static const char want[] = "/bin/sh\0-c\0head -c 1m /dev/zero > /x && echo \"ok\"";
        char out[256];
        int n;

        (void)state;
        n = bkexec_bundle_args_parse(cfg, sizeof(cfg) - 1, false, out, sizeof(out));
        assert_int_equal(n, (int)sizeof(want));
        assert_memory_equal(out, want, sizeof(want));
        assert_int_equal(
            bkexec_bundle_args_parse("{\"args\":[\"x\"]}", 14, false, out, sizeof(out)), -EINVAL);
        assert_int_equal(
            bkexec_bundle_args_parse("{\"process\":{\"args\":[\"x", 22, false, out, sizeof(out)),
            -EINVAL);
        assert_int_equal(
            bkexec_bundle_args_parse("{\"process\":{\"args\":[]}}", 23, false, out, sizeof(out)),
            -EINVAL);
        /* a small buffer keeps what fits */
        n = bkexec_bundle_args_parse(cfg, sizeof(cfg) - 1, false, out, 6);
        assert_true(n > 0 && n <= 6);
}

/* A RUN step's build arguments replaced from the bundle's env, as the
 * build's log prints the step: $X and ${X}, an unset one by nothing, not
 * inside single quotes nor after a backslash. */
static void test_bundle_args_expand(void **state)
{
        static const struct {
                const char *arg, *want;
        } cases[] = {
            {"make -j${JOBS}", "make -j2"},
            {"make -j$JOBS all", "make -j2 all"},
            {"cc $CFLAGS_X-$J_2 x.c", "cc -O2 -g-7 x.c"},
            {"echo '$JOBS' \"$JOBS\" \\$JOBS", "echo '$JOBS' \"2\" \\$JOBS"},
            {"echo \"it's $JOBS\"", "echo \"it's 2\""},
            {"echo ${UNSET}x $UNSET", "echo x "},
            {"echo $ ${ ${JOBS $1 $$", "echo $ ${ ${JOBS $1 $$"},
            {"JOBSX=$JOBSX", "JOBSX="},
        };
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char cfg[512], out[256], raw[256];
                json_t *o = json_pack("{s:{s:[s,s,s],s:[s,s,s,s]}}", "process", "args", "/bin/sh",
                                      "-c", cases[i].arg, "env", "PATH=/bin", "JOBS=2",
                                      "CFLAGS_X=-O2 -g", "J_2=7");
                char *text = json_dumps(o, 0);
                int n;

                print_message("case %zu: %s\n", i, cases[i].arg);
                assert_non_null(text);
                snprintf(cfg, sizeof(cfg), "%s", text);
                free(text);
                json_decref(o);
                n = bkexec_bundle_args_parse(cfg, strlen(cfg), true, out, sizeof(out));
                assert_true(n > 0);
                assert_string_equal(out + strlen("/bin/sh") + 4, cases[i].want);
                /* without expand: the text as it is */
                n = bkexec_bundle_args_parse(cfg, strlen(cfg), false, raw, sizeof(raw));
                assert_true(n > 0);
                assert_string_equal(raw + strlen("/bin/sh") + 4, cases[i].arg);
        }
}

static void test_status_uids(void **state)
{
        /* the kernel escapes a newline of a comm (\n): "Uid:" in a Name is not the line */
        static const char st[] = "Name:\tdockerd\\nUid:\t0\t0\t0\t0\nUmask:\t0022\nState:\tS\n"
                                 "PPid:\t1\nUid:\t65534\t0\t65534\t65534\nGid:\t0\t0\t0\t0\n";
        static const char short_[] = "Name:\tx\nUid:\t0\t0\n", first[] = "Uid:\t0\t0\t0\t0\n";
        uint64_t u[4] = {9, 9, 9, 9};

        (void)state;
        assert_int_equal(bkexec_status_uids_parse(st, sizeof(st) - 1, u), 0);
        assert_int_equal(u[0], 65534);
        assert_int_equal(u[1], 0);
        assert_int_equal(u[3], 65534);
        assert_int_equal(bkexec_status_uids_parse(short_, sizeof(short_) - 1, u), -EINVAL);
        assert_int_equal(u[0], 65534); /* untouched */
        assert_int_equal(bkexec_status_uids_parse(first, sizeof(first) - 1, u), -EINVAL);
}

static void test_kmsg(void **state)
{
        static const char rec[] =
            "6,974,1488248804,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=6y5,"
            "mems_allowed=0,oom_memcg=/bxexectest,task_memcg=/bxexectest/buildkit/6y53e8,"
            "task=tail,pid=24076,uid=0\n";
        struct kmsg_oom o;

        (void)state;
        assert_int_equal(kmsg_oom_parse(rec, sizeof(rec) - 1, &o), 1);
        assert_string_equal(o.memcg, "/bxexectest/buildkit/6y53e8");
        assert_string_equal(o.task, "tail");
        assert_int_equal(o.pid, 24076);
        assert_int_equal(kmsg_oom_parse("3,975,1,-;Memory cgroup out of memory: Killed", 45, &o),
                         0);
        assert_int_equal(kmsg_oom_parse("6,1,1,-;oom-kill:constraint=X,task=a", 36, &o), -EINVAL);
        assert_int_equal(kmsg_oom_parse("no semicolon", 12, &o), 0);
        assert_int_equal(kmsg_oom_parse("6,1,1,-;oom-kill:task_memcg=/a,task=b,pid=x1", 44, &o),
                         -EINVAL);
        /* a comm may hold ",pid=": the last one ends it */
        static const char odd[] = "6,2,1,-;oom-kill:task_memcg=/a/b,task=x,pid=1,pid=7,uid=0";
        assert_int_equal(kmsg_oom_parse(odd, sizeof(odd) - 1, &o), KMSG_OOM_KILL);
        assert_string_equal(o.task, "x,pid=1");
        assert_int_equal(o.pid, 7);
        assert_true(kmsg_oom_within(&o, "/a"));
        assert_true(kmsg_oom_within(&o, "/a/b"));
        assert_false(kmsg_oom_within(&o, "/a/"));
        assert_false(kmsg_oom_within(&o, "/a/bc"));
        assert_false(kmsg_oom_within(&o, "/x"));
        /* the older report: no cgroup; a record ends at its newline */
        static const char k[] = "3,9,1,-;Killed process 812 (cc1\x1bplus) total-vm:1kB\nnext";
        assert_int_equal(kmsg_oom_parse(k, sizeof(k) - 1, &o), KMSG_KILLED);
        assert_int_equal(o.pid, 812);
        assert_string_equal(o.task, "cc1?plus");
        assert_string_equal(o.memcg, "");
        assert_int_equal(kmsg_oom_parse("Killed process 0 (x) total-vm:1kB", 33, &o), KMSG_OTHER);
}

static void test_step_sums(void **state)
{
        struct step_fact v[3];
        struct step_exec a, b;
        struct target_exec te;

        (void)state;
        memset(v, 0, sizeof(v));
        step_exec_clear(&a);
        a.set = true;
        a.execs = 1;
        a.mem_peak_bytes = 100;
        a.cpu_s = 1;
        a.oom_kills = 0;
        step_exec_clear(&b);
        b.set = true;
        b.execs = 1;
        b.mem_peak_bytes = 300;
        b.cpu_s = 2;
        b.oom_kills = 1;
        b.oom_at_s = 5;
        strcpy(b.oom_victim, "tail (pid 9)");
        v[0].target = 0;
        step_exec_add(&v[0].exec, &a);
        v[1].target = 1;
        step_exec_add(&v[1].exec, &b);
        step_exec_add(&v[1].exec, &a); /* two execs for one step */
        v[2].target = 1;               /* not measured */
        assert_int_equal(v[1].exec.execs, 2);
        assert_true(v[1].exec.mem_peak_bytes == 300);
        assert_true(v[1].exec.cpu_s == 3);
        assert_string_equal(v[1].exec.oom_victim, "tail (pid 9)");
        /* an exec whose count rose first but that knows no victim keeps it */
        a.oom_at_s = 4;
        step_exec_add(&v[1].exec, &a);
        assert_string_equal(v[1].exec.oom_victim, "tail (pid 9)");
        assert_true(v[1].exec.oom_at_s == 4);
        a.oom_at_s = NAN;
        execs_target(v, 3, 1, &te);
        assert_int_equal(te.measured, 1);
        assert_true(te.mem_peak_bytes == 300 && te.oom_kills == 1 && te.peak_step == 1);
        execs_target(v, 3, -1, &te);
        assert_int_equal(te.measured, 2);
        assert_true(te.cpu_s == 5);
        execs_target(v, 3, 5, &te);
        assert_int_equal(te.measured, 0);
        assert_true(isnan(te.mem_peak_bytes) && te.peak_step == -1);
        assert_true(execs_sum(NAN, 2) == 2 && execs_max(3, NAN) == 3 && isnan(execs_sum(NAN, NAN)));
}

static void test_drives(void **state)
{
        static const struct {
                const char *argv[4];
                bool want;
        } cases[] = {
            {{"docker", "buildx", "build", NULL}, true},
            {{"/usr/bin/docker", "build", ".", NULL}, true},
            {{"sh", "-c", "cd x && docker buildx bake app", NULL}, true},
            {{"docker-buildx", "buildx", "bake", NULL}, true},
            {{"cat", "tests/fixtures/bake-multi.log", NULL}, false},
            {{"make", "-j8", "docker-image", NULL}, false},
            {{"sh", "-c", "echo mydocker", NULL}, false},
        };

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *argv[4] = {NULL};
                for (size_t k = 0; k < 3 && cases[i].argv[k]; k++)
                        argv[k] = strdup(cases[i].argv[k]);
                assert_int_equal(bkrun_argv_drives(argv), cases[i].want);
                for (size_t k = 0; k < 3; k++)
                        free(argv[k]);
        }
        assert_false(bkrun_argv_drives(NULL));
}

/* A fake root for bkexec's walk: proc/ of a daemon (100), its runc (200)
 * and a step (300), the cgroup mounts, and the exec's directories. */
static void put_file(const char *root, const char *rel, const char *text)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                (void)mkdir(path, 0755);
                *s = '/';
        }
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static void put_proc(const char *root, long pid, const char *comm, long ppid, const char *cgroup,
                     const char *cmdline, size_t cmdlen)
{
        char rel[64], text[512];
        unsigned uid = (unsigned)geteuid();
        FILE *f;

        snprintf(rel, sizeof(rel), "proc/%ld/stat", pid);
        snprintf(text, sizeof(text),
                 "%ld (%s) S %ld 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 %ld 1000 10 0\n", pid, comm,
                 ppid, 1000 + pid);
        put_file(root, rel, text);
        snprintf(rel, sizeof(rel), "proc/%ld/status", pid);
        snprintf(text, sizeof(text), "Name:\t%s\nUid:\t%u\t%u\t%u\t%u\n", comm, uid, uid, uid, uid);
        put_file(root, rel, text);
        snprintf(rel, sizeof(rel), "proc/%ld/exe", pid);
        put_file(root, rel, "");
        snprintf(rel, sizeof(rel), "proc/%ld/cgroup", pid);
        put_file(root, rel, cgroup);
        snprintf(rel, sizeof(rel), "%s/proc/%ld/cmdline", root, pid);
        f = fopen(rel, "w");
        assert_non_null(f);
        fwrite(cmdline, 1, cmdlen, f);
        fclose(f);
}

static bool match_token(void *userdata, const char *cmdline, size_t len, double first_s,
                        char *ret_cmd, size_t cap)
{
        (void)first_s;
        if (!memmem(cmdline, len, userdata, strlen(userdata)))
                return false;
        snprintf(ret_cmd, cap, "%s", (const char *)userdata);
        return true;
}

static void put_memdir(const char *root, const char *dir, const char *peak)
{
        char rel[256];

        snprintf(rel, sizeof(rel), "%s/memory.usage_in_bytes", dir);
        put_file(root, rel, "1000\n");
        snprintf(rel, sizeof(rel), "%s/memory.max_usage_in_bytes", dir);
        put_file(root, rel, peak);
        snprintf(rel, sizeof(rel), "%s/memory.oom_control", dir);
        put_file(root, rel, "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
}

/* A step caught mid-move registered its parent from the unified
 * hierarchy alone (its v1 memory path the root's): the exec's memory is
 * still read from its v1 directory, found by its unified path, and a
 * directory that comes later is found on a later walk (issue 40: a race
 * lost every memory figure of a build). */
static void test_walk_half_parent(void **state)
{
        char root[] = "/tmp/test-bkexec.XXXXXX";
        const char ID[] = "pzcq8vbaalndqxskmadxh8er7";
        char cmd[] = "/bin/sh\0-c\0echo tok42; sleep 1", tok[] = "tok42";
        struct bkexec_config cfg = {.root = root, .match = match_token, .userdata = tok};
        struct bkexec *b = NULL;
        struct procfs *p = NULL;
        const struct exec_fact *f;
        size_t nf;
        char rm[300];

        (void)state;
        assert_non_null(mkdtemp(root));
        put_file(root, "proc/self/mountinfo",
                 "30 20 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
                 "34 20 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
        put_proc(root, 100, "dockerd", 1, "4:memory:/\n0::/\n", "dockerd", 8);
        put_proc(root, 200, "runc", 100, "4:memory:/process_api/x\n0::/\n", "runc", 5);
        put_proc(root, 300, "sh", 200,
                 "4:memory:/\n0::/docker/buildkit/pzcq8vbaalndqxskmadxh8er7\n", cmd, sizeof(cmd));
        put_file(root,
                 "sys/fs/cgroup/unified/docker/buildkit/pzcq8vbaalndqxskmadxh8er7/cgroup.procs",
                 "300\n");
        assert_int_equal(procfs_new(root, &p), 0);
        assert_int_equal(bkexec_new(&cfg, &b), 0);

        /* 1: the v1 directory not made yet: the step's memory is unknown */
        assert_int_equal(bkexec_tick(b, p, 1.0, true), 1);
        f = bkexec_facts(b, &nf);
        assert_int_equal(nf, 1);
        assert_string_equal(f[0].id, ID);
        assert_true(isnan(f[0].u.mem_peak_bytes));
        /* 2: runc made it and moved the step: a later walk finds it */
        put_memdir(root, "sys/fs/cgroup/memory/docker/buildkit/pzcq8vbaalndqxskmadxh8er7",
                   "314572800\n");
        bkexec_hunt(b, true);
        assert_int_equal(bkexec_tick(b, p, 2.0, true), 1);
        f = bkexec_facts(b, &nf);
        assert_int_equal(nf, 1);
        assert_true(f[0].u.mem_peak_bytes == 314572800.0);
        bkexec_free(b);
        procfs_free(p);

        /* a fresh walk of the same half-moved step: its memory read at once */
        assert_int_equal(procfs_new(root, &p), 0);
        assert_int_equal(bkexec_new(&cfg, &b), 0);
        assert_int_equal(bkexec_tick(b, p, 1.0, true), 1);
        f = bkexec_facts(b, &nf);
        assert_int_equal(nf, 1);
        assert_true(f[0].u.mem_peak_bytes == 314572800.0);
        bkexec_free(b);
        procfs_free(p);
        snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
        assert_int_equal(system(rm), 0);
}

/* BuildKit's record (parse/bkrecord): a provenance predicate of our own
 * writing, in the shape buildx 0.29 prints (SLSA v0.2): a source step, two
 * exec steps (one with a build argument, samples and an OOM kill; one
 * without samples), and a merge op. */
struct rec_seen {
        int n;
        struct bkrecord_step st[4];
};

static void rec_cb(void *userdata, const struct bkrecord_step *st)
{
        struct rec_seen *r = userdata;

        if (r->n < 4)
                r->st[r->n] = *st;
        r->n++;
}

static void test_record(void **state)
{
        static const char v02[] =
            "{\"buildType\":\"https://mobyproject.org/buildkit@v1\",\"buildConfig\":{"
            "\"llbDefinition\":["
            "{\"id\":\"step0\",\"op\":{\"Op\":{\"source\":{\"identifier\":\"docker-image://x\"}}}},"
            "{\"id\":\"step1\",\"op\":{\"Op\":{\"exec\":{\"meta\":{"
            "\"args\":[\"/bin/sh\",\"-c\",\"make -j${JOBS} \\\"all\\\"\"],"
            "\"env\":[\"PATH=/bin\",\"JOBS=4\"]}}}},\"inputs\":[\"step0:0\"],"
            "\"resourceUsage\":{\"samples\":["
            "{\"timestamp\":\"2026-12-06T00:00:00Z\",\"cpuStat\":{\"usageNanos\":500000000},"
            "\"memoryStat\":{\"anon\":1000,\"peak\":314572800},\"ioStat\":{\"readBytes\":10}},"
            "{\"timestamp\":\"2026-12-06T00:00:02Z\",\"cpuStat\":{\"usageNanos\":2250000000},"
            "\"memoryStat\":{\"anon\":3000,\"peak\":209715200,\"oomKillEvents\":1},"
            "\"ioStat\":{\"readBytes\":4096,\"writeBytes\":8192},"
            "\"netStat\":{\"rxBytes\":5,\"txBytes\":6}}]}},"
            "{\"id\":\"step2\",\"op\":{\"Op\":{\"exec\":{\"meta\":{\"args\":[\"true\"]}}}}},"
            "{\"id\":\"step3\",\"op\":{\"Op\":{}}}]}}";
        static const char v1[] = "{\"predicate\":{\"buildDefinition\":{\"externalParameters\":{"
                                 "\"buildConfig\":{\"llbDefinition\":[{\"op\":{\"Op\":{\"exec\":{"
                                 "\"meta\":{\"args\":[\"echo\",\"hi\"]}}}},\"resourceUsage\":{"
                                 "\"samples\":[{\"memoryStat\":{\"peak\":7}}]}}]}}}}}";
        static const char empty[] =
            "{\"buildConfig\":{\"llbDefinition\":[{\"op\":{\"Op\":{\"exec\":{\"meta\":{"
            "\"args\":[\"true\"]}}}},\"resourceUsage\":{\"samples\":[{\"timestamp\":"
            "\"2026-12-06T03:14:11Z\",\"pidsStat\":{}}]}}]}}";
        struct rec_seen r = {0};
        const struct step_exec *u = &r.st[0].u;

        (void)state;
        assert_int_equal(bkrecord_parse(v02, sizeof(v02) - 1, rec_cb, &r), 1);
        assert_int_equal(r.n, 2);
        /* as written, and as the log prints it: the argument expanded */
        assert_string_equal(r.st[0].cmd, "make -j${JOBS} \"all\"");
        assert_string_equal(r.st[0].xcmd, "make -j4 \"all\"");
        assert_true(u->set && u->from_record);
        assert_int_equal(u->execs, 0);
        assert_float_equal(u->cpu_s, 2.25, 1e-9);          /* the last sample's */
        assert_float_equal(u->mem_peak_bytes, 314572800, 0); /* the largest */
        assert_float_equal(u->anon_peak_bytes, 3000, 0);
        assert_float_equal(u->io_read_bytes, 4096, 0);
        assert_float_equal(u->io_write_bytes, 8192, 0);
        assert_float_equal(u->net_tx_bytes, 6, 0);
        assert_float_equal(u->oom_kills, 1, 0);
        /* no samples: not measured */
        assert_string_equal(r.st[1].cmd, "true");
        assert_false(r.st[1].u.set);

        memset(&r, 0, sizeof(r));
        assert_int_equal(bkrecord_parse(v1, sizeof(v1) - 1, rec_cb, &r), 1);
        assert_string_equal(r.st[0].cmd, "echo hi");
        assert_float_equal(r.st[0].u.mem_peak_bytes, 7, 0);
        assert_float_equal(r.st[0].u.oom_kills, 0, 0); /* omitempty: none */
        assert_true(isnan(r.st[0].u.cpu_s));

        /* samples of nothing (BuildKit under dockerd's systemd driver, as
         * the pure-v2 guest of tools/vm-check found): no usage */
        memset(&r, 0, sizeof(r));
        assert_int_equal(bkrecord_parse(empty, sizeof(empty) - 1, rec_cb, &r), 0);
        assert_int_equal(r.n, 1);
        assert_false(r.st[0].u.set || r.st[0].u.from_record);

        /* not a provenance predicate */
        assert_int_equal(bkrecord_parse("{}", 2, rec_cb, &r), -EINVAL);
        assert_int_equal(bkrecord_parse("[1", 2, rec_cb, &r), -EINVAL);
        assert_int_equal(bkrecord_parse("{\"buildConfig\":{\"llbDefinition\":{}}}", 36, rec_cb, &r),
                         -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_vertex_cmd),
            cmocka_unit_test(test_argv_cmd),
            cmocka_unit_test(test_feed_line),
            cmocka_unit_test(test_driver),
            cmocka_unit_test(test_netdev),
            cmocka_unit_test(test_bundle_args),
            cmocka_unit_test(test_bundle_args_expand),
            cmocka_unit_test(test_status_uids),
            cmocka_unit_test(test_kmsg),
            cmocka_unit_test(test_step_sums),
            cmocka_unit_test(test_drives),
            cmocka_unit_test(test_walk_half_parent),
            cmocka_unit_test(test_record),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
