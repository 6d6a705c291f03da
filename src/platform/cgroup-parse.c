/* SPDX-License-Identifier: MIT */
/* The parsers of cgroup files and of the kernel's OOM report: a buffer in,
 * a value out, no I/O (fuzz/fuzz-cgroup.c, fuzz/fuzz-kmsg.c). */
#include "platform/cgroup.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/cgroup-int.h"
#include "platform/kmsg.h"
#include "util/util.h"

/* The v1 controllers, by enum cgroup_hier. */
static const char *const v1_ctl[_CG_H_MAX] = {[CG_H_MEMORY] = "memory",
                                              [CG_H_CPUACCT] = "cpuacct",
                                              [CG_H_BLKIO] = "blkio",
                                              [CG_H_PIDS] = "pids"};

/* Bits (1u << enum cgroup_hier) of the v1 controllers in the comma-separated
 * list [o, end). */
static unsigned hiers_of(const char *o, const char *end)
{
        unsigned mask = 0;

        while (o < end) {
                const char *comma = memchr(o, ',', (size_t)(end - o)), *ce = comma ? comma : end;

                for (int h = CG_H_MEMORY; h < _CG_H_MAX; h++)
                        if (word_is(o, (size_t)(ce - o), v1_ctl[h]))
                                mask |= 1u << h;
                o = comma ? comma + 1 : end;
        }
        return mask;
}

/* Copy a mountinfo path, undoing its \ooo escapes. */
static int unescape_path(const char *w, size_t n, char out[static CG_PATH_MAX])
{
        size_t o = 0;

        for (size_t i = 0; i < n; i++) {
                char c = w[i];

                if (c == '\\' && n - i >= 4 && w[i + 1] >= '0' && w[i + 1] <= '3' &&
                    w[i + 2] >= '0' && w[i + 2] <= '7' && w[i + 3] >= '0' && w[i + 3] <= '7') {
                        c = (char)((w[i + 1] - '0') * 64 + (w[i + 2] - '0') * 8 + (w[i + 3] - '0'));
                        i += 3;
                }
                if (c == '\0' || o + 1 >= CG_PATH_MAX)
                        return -ENAMETOOLONG;
                out[o++] = c;
        }
        out[o] = '\0';
        return 0;
}

int cgroup_mounts_parse(const char *buf, size_t len, struct cgroup_mounts *ret)
{
        struct cgroup_mounts *m = ret;
        const char *p = buf, *end = buf + len;

        memset(m, 0, sizeof(*m));
        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *w, *root_w = NULL, *mnt_w = NULL, *type_w;
                const char *opts_w;
                size_t n, root_n = 0, mnt_n = 0, type_n, opts_n;
                bool sep = false;
                unsigned hs;
                int field = 0;

                eol = line_end(p, end);
                /* id parent maj:min root mountpoint opts [optional...] - type source superopts */
                while (next_word(&p, eol, &w, &n)) {
                        field++;
                        if (field == 4) {
                                root_w = w;
                                root_n = n;
                        } else if (field == 5) {
                                mnt_w = w;
                                mnt_n = n;
                        } else if (field > 6 && word_is(w, n, "-")) {
                                sep = true;
                                break;
                        }
                }
                if (!sep || !next_word(&p, eol, &type_w, &type_n) || !next_word(&p, eol, &w, &n) ||
                    !next_word(&p, eol, &opts_w, &opts_n))
                        continue;
                hs = word_is(type_w, type_n, "cgroup2")  ? 1u << CG_H_V2
                     : word_is(type_w, type_n, "cgroup") ? hiers_of(opts_w, opts_w + opts_n)
                                                         : 0;
                /* The first mount of a hierarchy is the one used. */
                for (int h = 0; h < _CG_H_MAX; h++)
                        if ((hs & (1u << h)) && !m->mnt[h][0] &&
                            unescape_path(mnt_w, mnt_n, m->mnt[h]) >= 0 &&
                            unescape_path(root_w, root_n, m->root[h]) < 0)
                                m->mnt[h][0] = '\0';
        }
        return 0;
}

int cgroup_self_parse(const char *buf, size_t len, struct cgroup_self *ret)
{
        struct cgroup_self s = {0};
        const char *p = buf, *end = buf + len;
        bool any = false;

        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *c1, *c2 = NULL, *path;
                size_t plen;
                unsigned hs;

                eol = line_end(p, end);
                c1 = memchr(p, ':', (size_t)(eol - p));
                if (c1)
                        c2 = memchr(c1 + 1, ':', (size_t)(eol - c1 - 1));
                path = c2 ? c2 + 1 : eol;
                plen = (size_t)(eol - path);
                if (plen == 0 || path[0] != '/' || plen >= CG_PATH_MAX || memchr(path, '\0', plen))
                        continue;
                /* "0::/path" is v2's; "N:ctl,ctl:/path" a v1 hierarchy's */
                hs = c2 == c1 + 1 && c1 - p == 1 && p[0] == '0' ? 1u << CG_H_V2
                                                                : hiers_of(c1 + 1, c2);
                for (int h = 0; h < _CG_H_MAX; h++)
                        if ((hs & (1u << h)) && !s.path[h][0]) {
                                memcpy(s.path[h], path, plen);
                                s.path[h][plen] = '\0';
                                any = true;
                        }
        }
        if (!any)
                return -EINVAL;
        *ret = s;
        return 0;
}

int cgroup_u64_parse(const char *buf, size_t len, uint64_t *ret)
{
        const char *p = buf, *end = buf + len;
        uint64_t v = UINT64_MAX;
        int r;

        skip_spaces(&p, end);
        if (!skip_prefix(&p, end, "max") && (r = parse_u64(&p, end, &v)) < 0)
                return r;
        skip_spaces(&p, end);
        if (p < end && *p == '\n')
                p++;
        if (p != end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int cgroup_keyed_parse(const char *buf, size_t len, const char *key, uint64_t *ret)
{
        const char *p = buf, *end = buf + len;

        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *w;
                size_t n;
                uint64_t v;
                int r;

                eol = line_end(p, end);
                if (next_word(&p, eol, &w, &n) && word_is(w, n, key)) {
                        skip_spaces(&p, eol);
                        r = parse_u64(&p, eol, &v);
                        if (r < 0)
                                return r;
                        if (!at_field_end(p, eol))
                                return -EINVAL;
                        *ret = v;
                        return 0;
                }
        }
        return -ENOENT;
}

int cgroup_cpu_parse(const char *buf, size_t len, double hz, double *ret_user, double *ret_sys)
{
        uint64_t u, s;
        int r = cgroup_keyed_parse(buf, len, hz ? "user" : "user_usec", &u);

        if (r >= 0)
                r = cgroup_keyed_parse(buf, len, hz ? "system" : "system_usec", &s);
        if (r < 0)
                return r;
        *ret_user = (double)u / (hz ? hz : 1e6);
        *ret_sys = (double)s / (hz ? hz : 1e6);
        return 0;
}

/* A word "<key>N": 1 with N, 0 for another word, -EINVAL for no number. */
static int key_value(const char *w, size_t n, const char *key, uint64_t *ret)
{
        const char *q = w, *end = w + n;

        if (!skip_prefix(&q, end, key))
                return 0;
        return parse_u64(&q, end, ret) < 0 || q != end ? -EINVAL : 1;
}

int cgroup_iostat_parse(const char *buf, size_t len, uint64_t *ret_read, uint64_t *ret_write)
{
        const char *p = buf, *end = buf + len;
        uint64_t rd = 0, wr = 0;

        /* "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0" */
        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *w;
                size_t n;

                eol = line_end(p, end);
                (void)next_word(&p, eol, &w, &n); /* MAJ:MIN */
                while (next_word(&p, eol, &w, &n)) {
                        uint64_t v;
                        int r = key_value(w, n, "rbytes=", &v);
                        int k = r ? 0 : key_value(w, n, "wbytes=", &v);

                        if (r < 0 || k < 0)
                                return -EINVAL;
                        if (r)
                                rd = add_sat(rd, v);
                        else if (k)
                                wr = add_sat(wr, v);
                }
        }
        *ret_read = rd;
        *ret_write = wr;
        return 0;
}

int cgroup_blkio_parse(const char *buf, size_t len, uint64_t *ret_read, uint64_t *ret_write)
{
        const char *p = buf, *end = buf + len;
        uint64_t rd = 0, wr = 0;

        /* "254:0 Read 123" ... "254:0 Total 456", then "Total 456". */
        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *dev, *op;
                size_t dn, on;
                uint64_t v;
                int r;

                eol = line_end(p, end);
                if (!next_word(&p, eol, &dev, &dn) || !memchr(dev, ':', dn) ||
                    !next_word(&p, eol, &op, &on) ||
                    (!word_is(op, on, "Read") && !word_is(op, on, "Write")))
                        continue;
                skip_spaces(&p, eol);
                r = parse_u64(&p, eol, &v);
                if (r < 0)
                        return r;
                if (!at_field_end(p, eol))
                        return -EINVAL;
                if (op[0] == 'R')
                        rd = add_sat(rd, v);
                else
                        wr = add_sat(wr, v);
        }
        *ret_read = rd;
        *ret_write = wr;
        return 0;
}

int cgroup_pressure_parse(const char *buf, size_t len, struct cgroup_pressure *ret)
{
        const char *p = buf, *end = buf + len;
        uint64_t some = 0, full = UINT64_MAX;
        bool have_some = false;

        /* "some avg10=0.00 avg60=0.00 avg300=0.00 total=123" */
        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *w;
                size_t n;
                bool is_some;

                eol = line_end(p, end);
                if (!next_word(&p, eol, &w, &n) ||
                    (!(is_some = word_is(w, n, "some")) && !word_is(w, n, "full")))
                        continue;
                while (next_word(&p, eol, &w, &n)) {
                        int r = key_value(w, n, "total=", is_some ? &some : &full);

                        if (r < 0)
                                return -EINVAL;
                        have_some |= r && is_some;
                }
        }
        if (!have_some)
                return -EINVAL;
        *ret = (struct cgroup_pressure){.some_us = some, .full_us = full};
        return 0;
}

int cgroup_procs_parse(const char *buf, size_t len, long *pids, size_t cap, size_t *ret_n)
{
        const char *p = buf, *end = buf + len;
        size_t n = 0;

        for (const char *eol; p < end; p = next_line(eol, end)) {
                uint64_t v;
                int r;

                eol = line_end(p, end);
                if (eol == p)
                        continue;
                r = parse_u64(&p, eol, &v);
                if (r < 0)
                        return r;
                if (p != eol)
                        return -EINVAL;
                if (v == 0 || v > INT_MAX)
                        return -ERANGE;
                if (n < cap)
                        pids[n] = (long)v;
                n++;
        }
        *ret_n = n;
        return 0;
}

/* By enum cgroup_mode. */
static const char *const mode_names[] = {"auto", "v2", "hybrid", "v1", "none"};

int cgroup_mode_parse(const char *s, enum cgroup_mode *ret)
{
        for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
                if (strcmp(s, mode_names[i]) == 0) {
                        *ret = (enum cgroup_mode)i;
                        return 0;
                }
        return -EINVAL;
}

const char *cgroup_mode_name(enum cgroup_mode m)
{
        return (unsigned)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "?";
}

void cgroup_stats_clear(struct cgroup_stats *s)
{
        *s = (struct cgroup_stats){
            NAN, NAN, NAN, NAN, NAN, NAN, NAN, {{NAN, NAN, NAN}, {NAN, NAN, NAN}},
            NAN, NAN, NAN, NAN, -1,  ""};
}

int cgroup_kmsg_victim_parse(const char *buf, size_t len, const char *memcg, long *ret_pid,
                             char *comm, size_t cap)
{
        const char *p = buf, *end;
        long matched = -1; /* the pid of the last oom-kill record in memcg */
        int found = 0;

        if (!buf || !ret_pid || (!comm && cap))
                return -EINVAL;
        for (end = buf + len; p < end; p = next_line(line_end(p, end), end)) {
                struct kmsg_oom o;
                int k = kmsg_oom_parse(p, (size_t)(line_end(p, end) - p), &o);

                if (k == KMSG_OOM_KILL && (!memcg || kmsg_oom_within(&o, memcg)))
                        matched = o.pid;
                else if (k != KMSG_KILLED || (memcg && o.pid != matched))
                        continue;
                *ret_pid = o.pid;
                if (cap)
                        snprintf(comm, cap, "%s", o.task);
                found = 1;
        }
        return found;
}
