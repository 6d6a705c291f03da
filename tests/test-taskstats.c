/* SPDX-License-Identifier: MIT */
/* platform/taskstats: the parsers on datagrams made here, and the real
 * kernel (as root): a child's fork, exec and exit, its peak RSS and
 * status as the kernel accounted them. */
#include <errno.h>
#include <linux/acct.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/taskstats.h"

struct got {
        struct taskev ev[8];
        size_t n;
};

static void take(void *userdata, const struct taskev *ev)
{
        struct got *g = userdata;

        if (g->n < 8)
                g->ev[g->n++] = *ev;
}

static size_t put_attr(char *p, uint16_t type, const void *data, size_t len)
{
        struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};

        memcpy(p, &a, sizeof(a));
        memcpy(p + NLA_HDRLEN, data, len);
        return NLA_ALIGN(a.nla_len);
}

/* A genl datagram of family 0x1c holding one AGGR_PID record of ts
 * (cut to stats_len bytes); returns its length. */
static size_t make_genl(char *buf, const struct taskstats *ts, size_t stats_len)
{
        char nest[1024];
        uint32_t pid = ts->ac_pid;
        size_t nl = 0, off = NLMSG_HDRLEN + GENL_HDRLEN;
        struct nlmsghdr h = {.nlmsg_type = 0x1c};

        nl += put_attr(nest + nl, TASKSTATS_TYPE_PID, &pid, sizeof(pid));
        nl += put_attr(nest + nl, TASKSTATS_TYPE_STATS, ts, stats_len);
        memset(buf, 0, off);
        off += put_attr(buf + off, TASKSTATS_TYPE_AGGR_PID, nest, nl);
        h.nlmsg_len = (uint32_t)off;
        memcpy(buf, &h, sizeof(h));
        return off;
}

static void test_parse_exit(void **state)
{
        static char buf[2048];
        struct taskstats ts = {.version = 13, .ac_exitcode = 9, .ac_flag = AGROUP, .ac_pid = 4321,
                               .ac_ppid = 77, .ac_tgid = 4321, .ac_etime = 2500000,
                               .ac_utime = 1000000, .ac_stime = 250000, .hiwater_rss = 65536,
                               .read_bytes = 4096, .write_bytes = 8192,
                               .cpu_delay_total = 500000000};
        struct got g = {0};
        size_t len;

        (void)state;
        memcpy(ts.ac_comm, "cc1plus", 8);
        len = make_genl(buf, &ts, sizeof(ts));
        taskstats_parse(buf, len, 0x1c, take, &g);
        assert_int_equal(g.n, 1);
        assert_int_equal(g.ev[0].type, TASKEV_EXIT);
        assert_int_equal(g.ev[0].pid, 4321);
        assert_int_equal(g.ev[0].tgid, 4321);
        assert_int_equal(g.ev[0].ppid, 77);
        assert_true(g.ev[0].last);
        assert_int_equal(g.ev[0].status, 9); /* killed by SIGKILL, as wait() says */
        assert_string_equal(g.ev[0].comm, "cc1plus");
        assert_true(g.ev[0].wall_s == 2.5 && g.ev[0].cpu_s == 1.25);
        assert_int_equal(g.ev[0].rss_peak_kb, 65536);
        assert_int_equal(g.ev[0].write_bytes, 8192);
        assert_true(g.ev[0].delay_cpu_s == 0.5);

        /* another family, or a record cut before its comm: nothing */
        g.n = 0;
        taskstats_parse(buf, len, 0x1d, take, &g);
        len = make_genl(buf, &ts, offsetof(struct taskstats, ac_comm));
        taskstats_parse(buf, len, 0x1c, take, &g);
        assert_int_equal(g.n, 0);

        /* a thread of a process (version 12+): its tgid, not the last */
        ts.ac_pid = 4330;
        ts.ac_flag = 0;
        len = make_genl(buf, &ts, sizeof(ts));
        taskstats_parse(buf, len, 0x1c, take, &g);
        assert_int_equal(g.n, 1);
        assert_int_equal(g.ev[0].pid, 4330);
        assert_int_equal(g.ev[0].tgid, 4321);
        assert_false(g.ev[0].last);

        /* an old kernel's record (version 8, no tgid): a task is its process */
        g.n = 0;
        ts.version = 8;
        len = make_genl(buf, &ts, offsetof(struct taskstats, ac_btime64));
        taskstats_parse(buf, len, 0x1c, take, &g);
        assert_int_equal(g.n, 1);
        assert_int_equal(g.ev[0].tgid, 4330);
        assert_true(g.ev[0].last);

        /* every cut of the datagram parses without reading past it */
        len = make_genl(buf, &ts, sizeof(ts));
        for (size_t cut = 0; cut < len; cut++) {
                char *p = malloc(cut ? cut : 1);

                memcpy(p, buf, cut);
                taskstats_parse(p, cut, 0x1c, take, &g);
                free(p);
        }
}

static size_t make_cn(char *buf, const struct proc_event *pe)
{
        struct nlmsghdr h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(*pe)),
                             .nlmsg_type = NLMSG_DONE};
        struct cn_msg c = {.id = {CN_IDX_PROC, CN_VAL_PROC}, .len = sizeof(*pe)};

        memset(buf, 0, h.nlmsg_len);
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + NLMSG_HDRLEN, &c, sizeof(c));
        memcpy(buf + NLMSG_HDRLEN + sizeof(c), pe, sizeof(*pe));
        return h.nlmsg_len;
}

static void test_parse_cn(void **state)
{
        static char buf[1024];
        struct proc_event pe = {.what = PROC_EVENT_FORK};
        struct got g = {0};
        size_t len;

        (void)state;
        pe.event_data.fork.parent_pid = pe.event_data.fork.parent_tgid = 10;
        pe.event_data.fork.child_pid = pe.event_data.fork.child_tgid = 11;
        len = make_cn(buf, &pe);
        taskstats_parse_cn(buf, len, take, &g);
        pe = (struct proc_event){.what = PROC_EVENT_EXEC};
        pe.event_data.exec.process_pid = pe.event_data.exec.process_tgid = 11;
        len = make_cn(buf, &pe);
        taskstats_parse_cn(buf, len, take, &g);
        pe.what = PROC_EVENT_UID; /* not ours: skipped */
        taskstats_parse_cn(buf, make_cn(buf, &pe), take, &g);
        assert_int_equal(g.n, 2);
        assert_int_equal(g.ev[0].type, TASKEV_FORK);
        assert_int_equal(g.ev[0].pid, 11);
        assert_int_equal(g.ev[0].ppid, 10);
        assert_int_equal(g.ev[1].type, TASKEV_EXEC);
        assert_int_equal(g.ev[1].tgid, 11);
        for (size_t cut = 0; cut < len; cut++)
                taskstats_parse_cn(buf, cut, take, &g);
        assert_int_equal(g.n, 2);
}

/* The real kernel: a child that forks, execs and exits. */
struct live {
        long child;
        bool forked, execd, ended;
        struct taskev exit;
};

static void on_live(void *userdata, const struct taskev *ev)
{
        struct live *l = userdata;

        if (ev->tgid != l->child)
                return;
        if (ev->type == TASKEV_FORK && ev->ppid == (long)getpid())
                l->forked = true;
        if (ev->type == TASKEV_EXEC)
                l->execd = true;
        if (ev->type == TASKEV_EXIT && ev->last) {
                l->ended = true;
                l->exit = *ev;
        }
}

static void test_live(void **state)
{
        struct tstats *t;
        struct live l = {0};
        int fds[2], st, e = taskstats_open(&t);

        (void)state;
        if (e == -EPERM || e == -ENOENT || e == -EPROTONOSUPPORT) {
                print_message("taskstats not ours here (%s): the live case is not run\n",
                              strerror(-e));
                skip();
        }
        assert_int_equal(e, 0);
        l.child = fork();
        assert_true(l.child >= 0);
        if (l.child == 0) {
                /* 64 MiB touched, then exit 3 through an exec'd shell */
                size_t n = 64u << 20;
                char *p = malloc(n);

                memset(p, 1, n);
                execl("/bin/sh", "sh", "-c", "exit 3", (char *)NULL);
                _exit(127);
        }
        assert_int_equal(waitpid((pid_t)l.child, &st, 0), l.child);
        taskstats_fds(t, fds);
        for (int i = 0; i < 50 && !l.ended; i++) {
                struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};

                (void)poll(p, 2, 100);
                taskstats_drain(t, on_live, &l);
        }
        assert_true(l.forked && l.execd && l.ended);
        assert_int_equal(l.exit.status, st);
        assert_int_equal(WEXITSTATUS(l.exit.status), 3);
        /* hiwater is the exec'd image's own: the shell's, small */
        assert_true(l.exit.rss_peak_kb > 0 && l.exit.rss_peak_kb < 64 * 1024);
        assert_string_equal(l.exit.comm, "sh");
        assert_int_equal(taskstats_lost(t), 0);
        taskstats_free(t);
}

/* A child that holds 64 MiB and exits without exec: its peak is that. */
static void test_live_peak(void **state)
{
        struct tstats *t;
        struct live l = {0};
        int fds[2], st, e = taskstats_open(&t);

        struct rusage ru;
        long most;

        (void)state;
        if (e < 0)
                skip();
        /* the child starts with this process's pages mapped: at most its peak */
        assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
        most = 64 * 1024 + ru.ru_maxrss + 8192;
        l.child = fork();
        assert_true(l.child >= 0);
        if (l.child == 0) {
                size_t n = 64u << 20;
                volatile char *p = malloc(n);

                for (size_t i = 0; i < n; i += 4096)
                        p[i] = 1;
                _exit(0);
        }
        assert_int_equal(waitpid((pid_t)l.child, &st, 0), l.child);
        taskstats_fds(t, fds);
        for (int i = 0; i < 50 && !l.ended; i++) {
                struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};

                (void)poll(p, 2, 100);
                taskstats_drain(t, on_live, &l);
        }
        assert_true(l.forked && l.ended);
        assert_false(l.execd);
        assert_true(l.exit.rss_peak_kb >= 64 * 1024 && (long)l.exit.rss_peak_kb < most);
        taskstats_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_exit),
            cmocka_unit_test(test_parse_cn),
            cmocka_unit_test(test_live),
            cmocka_unit_test(test_live_peak),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
