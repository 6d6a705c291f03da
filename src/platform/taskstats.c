/* SPDX-License-Identifier: MIT */
/* taskstats over generic netlink and the process connector (kernel
 * Documentation/accounting/taskstats.rst, include/uapi/linux/cn_proc.h). */
#include "platform/taskstats.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/acct.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

#define RCVBUF_BYTES (8 << 20)

struct tstats {
        int gfd, cfd;
        uint16_t family;
        char cpumask[64];
        uint64_t lost;
        struct taskev *exits; /* a drain's records, held until its fork and exec events are read */
        size_t nexits, cap;
};

/* One request: header, genl header, one string attribute. */
static int genl_send(int fd, uint16_t type, uint8_t cmd, uint16_t attr, const char *s)
{
        struct {
                struct nlmsghdr n;
                struct genlmsghdr g;
                char buf[128];
        } req = {0};
        struct nlattr *a = (struct nlattr *)(void *)req.buf;
        size_t sl = strlen(s) + 1;

        if (NLA_HDRLEN + sl > sizeof(req.buf))
                return -EINVAL;
        req.n.nlmsg_type = type;
        req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        req.g.cmd = cmd;
        req.g.version = 1;
        a->nla_type = attr;
        a->nla_len = (uint16_t)(NLA_HDRLEN + sl);
        memcpy(req.buf + NLA_HDRLEN, s, sl);
        req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(a->nla_len));
        return send(fd, &req, req.n.nlmsg_len, 0) < 0 ? -errno : 0;
}

/* The attributes in [p, p + len), each as a. */
#define NLA_EACH(a, p, len)                                                                        \
        for (const struct nlattr *a = (const void *)(p);                                           \
             (len) >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= (len);          \
             (len) -= NLA_ALIGN(a->nla_len),                                                       \
                                 a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len)))

/* The answer to a request: the family id (CTRL_CMD_GETFAMILY) or the ack's
 * error. Waits at most a second. */
static int genl_answer(int fd, uint16_t *ret_family)
{
        union {
                char b[4096];
                struct nlmsghdr align;
        } u;
        struct pollfd p = {.fd = fd, .events = POLLIN};

        for (;;) {
                ssize_t n;

                if (poll(&p, 1, 1000) <= 0)
                        return -ETIMEDOUT;
                n = recv(fd, u.b, sizeof(u.b), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                for (struct nlmsghdr *h = (struct nlmsghdr *)(void *)u.b; NLMSG_OK(h, (size_t)n);
                     h = NLMSG_NEXT(h, n)) {
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);

                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                                        return -EIO;
                                if (e->error || !ret_family)
                                        return e->error;
                                continue;
                        }
                        if (ret_family && h->nlmsg_type == GENL_ID_CTRL) {
                                int len = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

                                NLA_EACH(a, (char *)NLMSG_DATA(h) + GENL_HDRLEN, len)
                                {
                                        if (a->nla_type == CTRL_ATTR_FAMILY_ID &&
                                            a->nla_len >= NLA_HDRLEN + 2) {
                                                memcpy(ret_family, (const char *)a + NLA_HDRLEN, 2);
                                                return 0;
                                        }
                                }
                        }
                }
        }
}

static int nl_socket(int type, int proto, unsigned groups)
{
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = groups};
        _cleanup_close_ int fd = socket(AF_NETLINK, type | SOCK_CLOEXEC, proto);
        int sz = RCVBUF_BYTES;

        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
                (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* The process connector: listen to every process's fork, exec and exit. */
static int cn_listen(int fd)
{
        union {
                char b[NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(uint32_t))];
                struct nlmsghdr align;
        } u = {0};
        struct nlmsghdr *n = &u.align;
        struct cn_msg *c = NLMSG_DATA(n);
        uint32_t op = PROC_CN_MCAST_LISTEN;

        n->nlmsg_len = sizeof(u.b);
        n->nlmsg_type = NLMSG_DONE;
        c->id.idx = CN_IDX_PROC;
        c->id.val = CN_VAL_PROC;
        c->len = sizeof(op);
        memcpy(c->data, &op, sizeof(op));
        return send(fd, u.b, sizeof(u.b), 0) < 0 ? -errno : 0;
}

int taskstats_open(struct tstats **ret)
{
        struct tstats *t = calloc(1, sizeof(*t));
        long ncpu = sysconf(_SC_NPROCESSORS_CONF);
        int e;

        if (!t)
                return -ENOMEM;
        t->cfd = -1;
        t->gfd = nl_socket(SOCK_RAW, NETLINK_GENERIC, 0);
        e = t->gfd < 0 ? t->gfd
                       : genl_send(t->gfd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME,
                                   TASKSTATS_GENL_NAME);
        if (e >= 0)
                e = genl_answer(t->gfd, &t->family);
        if (e >= 0) {
                /* every configured CPU, as a cpulist */
                (void)snprintf(t->cpumask, sizeof(t->cpumask), "0-%ld", ncpu > 1 ? ncpu - 1 : 0);
                e = genl_send(t->gfd, t->family, TASKSTATS_CMD_GET,
                              TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, t->cpumask);
        }
        if (e >= 0)
                e = genl_answer(t->gfd, NULL);
        if (e >= 0)
                e = t->cfd = nl_socket(SOCK_DGRAM, NETLINK_CONNECTOR, CN_IDX_PROC);
        if (e >= 0)
                e = cn_listen(t->cfd);
        if (e >= 0 &&
            (fcntl(t->gfd, F_SETFL, O_NONBLOCK) < 0 || fcntl(t->cfd, F_SETFL, O_NONBLOCK) < 0))
                e = -errno;
        if (e < 0) {
                taskstats_free(t);
                return e;
        }
        *ret = t;
        return 0;
}

void taskstats_free(struct tstats *t)
{
        if (!t)
                return;
        if (t->gfd >= 0 && t->family)
                (void)genl_send(t->gfd, t->family, TASKSTATS_CMD_GET,
                                TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, t->cpumask);
        closep(&t->gfd);
        closep(&t->cfd);
        free(t->exits);
        free(t);
}

void taskstats_fds(const struct tstats *t, int fds[2])
{
        fds[0] = t->gfd;
        fds[1] = t->cfd;
}

bool taskstats_delayacct(void)
{
        _cleanup_close_ int fd = open("/proc/sys/kernel/task_delayacct", O_RDONLY | O_CLOEXEC);
        char c;

        return fd >= 0 && read(fd, &c, 1) == 1 && c == '1';
}

uint64_t taskstats_lost(const struct tstats *t)
{
        return t ? t->lost : 0;
}

/* A wait longer than the task's life is none it had (seen here: a block
 * IO delay of the uptime, twice, after the sysctl was set). */
static double delay_s(uint64_t ns, double wall_s)
{
        double s = (double)ns / 1e9;

        return s <= wall_s ? s : 0;
}

/* One struct taskstats (len bytes, of any version) as an exit event. */
static void exit_event(const void *p, size_t len, taskev_fn fn, void *userdata)
{
        struct taskstats ts = {0};
        struct taskev ev = {.type = TASKEV_EXIT};

        memcpy(&ts, p, MIN(len, sizeof(ts)));
        if (len < offsetof(struct taskstats, ac_comm) + sizeof(ts.ac_comm))
                return;
        ev.pid = ts.ac_pid;
        ev.ppid = ts.ac_ppid;
        /* before version 12 no thread group: a task is its process */
        ev.tgid = ts.version >= 12 && ts.ac_tgid ? (long)ts.ac_tgid : ev.pid;
        ev.last = ts.version >= 12 ? (ts.ac_flag & AGROUP) != 0 : ev.tgid == ev.pid;
        ev.status = (int)ts.ac_exitcode;
        copy_utf8(ev.comm, sizeof(ev.comm), ts.ac_comm, strnlen(ts.ac_comm, sizeof(ts.ac_comm)));
        ev.wall_s = (double)ts.ac_etime / 1e6;
        ev.cpu_s = (double)(ts.ac_utime + ts.ac_stime) / 1e6;
        ev.rss_peak_kb = ts.hiwater_rss;
        ev.read_bytes = ts.read_bytes;
        ev.write_bytes = ts.write_bytes;
        ev.delay_cpu_s = delay_s(ts.cpu_delay_total, ev.wall_s);
        ev.delay_io_s = delay_s(ts.blkio_delay_total, ev.wall_s);
        ev.delay_mem_s = delay_s(
            ts.swapin_delay_total + ts.freepages_delay_total + ts.thrashing_delay_total, ev.wall_s);
        if (ev.pid > 0)
                fn(userdata, &ev);
}

void taskstats_parse(const void *buf, size_t len, uint16_t family, taskev_fn fn, void *userdata)
{
        int n = (int)MIN(len, (size_t)INT32_MAX);

        for (const struct nlmsghdr *h = buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
                int alen = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

                if (h->nlmsg_type != family || alen < 0)
                        continue;
                NLA_EACH(a, (const char *)NLMSG_DATA(h) + GENL_HDRLEN, alen)
                {
                        int ilen = a->nla_len - NLA_HDRLEN;

                        /* the thread's record; TASKSTATS_TYPE_AGGR_TGID adds nothing of use */
                        if ((a->nla_type & NLA_TYPE_MASK) != TASKSTATS_TYPE_AGGR_PID)
                                continue;
                        NLA_EACH(in, (const char *)a + NLA_HDRLEN, ilen)
                        {
                                if (in->nla_type == TASKSTATS_TYPE_STATS)
                                        exit_event((const char *)in + NLA_HDRLEN,
                                                   in->nla_len - NLA_HDRLEN, fn, userdata);
                        }
                }
        }
}

void taskstats_parse_cn(const void *buf, size_t len, taskev_fn fn, void *userdata)
{
        int n = (int)MIN(len, (size_t)INT32_MAX);

        for (const struct nlmsghdr *h = buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
                const struct cn_msg *c = NLMSG_DATA(h);
                struct proc_event pe = {0};
                struct taskev ev = {0};

                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*c)) || c->id.idx != CN_IDX_PROC ||
                    c->id.val != CN_VAL_PROC || c->len > h->nlmsg_len - NLMSG_LENGTH(sizeof(*c)))
                        continue;
                memcpy(&pe, c->data, MIN((size_t)c->len, sizeof(pe)));
                if (c->len < offsetof(struct proc_event, event_data) + sizeof(pe.event_data.exit))
                        continue;
                if (pe.what == PROC_EVENT_FORK) {
                        ev = (struct taskev){.type = TASKEV_FORK,
                                             .pid = pe.event_data.fork.child_pid,
                                             .tgid = pe.event_data.fork.child_tgid,
                                             .ppid = pe.event_data.fork.parent_tgid};
                } else if (pe.what == PROC_EVENT_EXEC) {
                        ev = (struct taskev){.type = TASKEV_EXEC,
                                             .pid = pe.event_data.exec.process_pid,
                                             .tgid = pe.event_data.exec.process_tgid};
                } else if (pe.what == PROC_EVENT_EXIT) {
                        ev = (struct taskev){.type = TASKEV_END,
                                             .pid = pe.event_data.exit.process_pid,
                                             .tgid = pe.event_data.exit.process_tgid};
                } else {
                        continue;
                }
                ev.at_s = (double)pe.timestamp_ns / 1e9;
                if (ev.pid > 0 && ev.tgid > 0)
                        fn(userdata, &ev);
        }
}

static void hold_exit(void *userdata, const struct taskev *ev)
{
        struct tstats *t = userdata;

        if (array_grow(&t->exits, &t->cap, t->nexits, sizeof(*t->exits), 256) < 0) {
                t->lost++;
                return;
        }
        t->exits[t->nexits++] = *ev;
}

/* Every datagram waiting on fd, parsed, to fn, DRAIN_BATCH a recvmmsg (one
 * recv each made 9 calls a process, 7 us each); one cut short is lost. */
#define DRAIN_BATCH 32
static void drain_fd(struct tstats *t, int fd, taskev_fn fn, void *userdata)
{
        static union {
                char b[4096];
                struct nlmsghdr align;
        } buf[DRAIN_BATCH];
        struct iovec iov[DRAIN_BATCH];
        struct mmsghdr mm[DRAIN_BATCH];
        int k;

        for (int i = 0; i < DRAIN_BATCH; i++) {
                iov[i] = (struct iovec){.iov_base = buf[i].b, .iov_len = sizeof(buf[i].b)};
                mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
        }
        do {
                k = recvmmsg(fd, mm, DRAIN_BATCH, MSG_DONTWAIT, NULL);
                if (k < 0 && errno == ENOBUFS) {
                        t->lost++;
                        continue;
                }
                for (int i = 0; i < k; i++) {
                        size_t n = mm[i].msg_len;

                        if (mm[i].msg_hdr.msg_flags & MSG_TRUNC)
                                t->lost++;
                        else if (fd == t->cfd)
                                taskstats_parse_cn(buf[i].b, n, fn, userdata);
                        else
                                taskstats_parse(buf[i].b, n, t->family, fn, userdata);
                }
        } while (k == DRAIN_BATCH || (k < 0 && errno == ENOBUFS));
}

/* The records first, held; then the connector's events, which include the
 * fork and exec of every process those records end; then the records. */
void taskstats_drain(struct tstats *t, taskev_fn fn, void *userdata)
{
        t->nexits = 0;
        drain_fd(t, t->gfd, hold_exit, t);
        drain_fd(t, t->cfd, fn, userdata);
        for (size_t i = 0; i < t->nexits; i++)
                fn(userdata, &t->exits[i]);
}
