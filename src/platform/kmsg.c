/* SPDX-License-Identifier: MIT */
#include "platform/kmsg.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"

/* The last occurrence of needle in [p, end): a comm may hold ",pid=". */
static const char *mem_last(const char *p, const char *end, const char *needle)
{
        size_t n = strlen(needle);
        const char *found = NULL;

        for (const char *q; (q = memmem(p, (size_t)(end - p), needle, n)) != NULL; p = q + 1)
                found = q;
        return found;
}

static bool take_pid(const char *p, const char *end, long *ret)
{
        uint64_t v;

        if (parse_u64(&p, end, &v) < 0 || p != end || v == 0 || v > INT_MAX)
                return false;
        *ret = (long)v;
        return true;
}

static void take(const char *w, const char *we, char *out, size_t cap)
{
        size_t n = (size_t)(we - w) < cap ? (size_t)(we - w) : cap - 1;

        for (size_t i = 0; i < n; i++)
                out[i] = (unsigned char)w[i] < 0x20 || w[i] == 0x7f ? '?' : w[i];
        out[n] = '\0';
}

static int oom_kill(const char *p, const char *end, struct kmsg_oom *o)
{
        const char *mc = memmem(p, (size_t)(end - p), "task_memcg=", 11);
        const char *pidp = mem_last(p, end, ",pid="), *task, *pe;

        if (!mc || !pidp || pidp < mc || !(task = mem_last(mc, pidp, ",task=")))
                return -EINVAL;
        mc += 11;
        pe = memchr(pidp + 5, ',', (size_t)(end - pidp - 5));
        if ((size_t)(task - mc) >= sizeof(o->memcg) || !take_pid(pidp + 5, pe ? pe : end, &o->pid))
                return -EINVAL;
        take(mc, task, o->memcg, sizeof(o->memcg));
        take(task + 6, pidp, o->task, sizeof(o->task));
        return KMSG_OOM_KILL;
}

static int killed(const char *p, const char *end, struct kmsg_oom *o)
{
        const char *k = memmem(p, (size_t)(end - p), "Killed process ", 15), *sp, *open, *close;

        if (!k)
                return KMSG_OTHER;
        k += 15;
        sp = memchr(k, ' ', (size_t)(end - k));
        if (!sp || sp + 1 >= end || sp[1] != '(' || !take_pid(k, sp, &o->pid))
                return KMSG_OTHER;
        open = sp + 2;
        close = memmem(open, (size_t)(end - open), ") total-vm:", 11);
        if (!close && !(close = mem_last(open, end, ")")))
                return KMSG_OTHER;
        o->memcg[0] = '\0';
        take(open, close, o->task, sizeof(o->task));
        return KMSG_KILLED;
}

int kmsg_oom_parse(const char *buf, size_t len, struct kmsg_oom *ret)
{
        const char *end = memchr(buf, '\n', len), *msg;
        struct kmsg_oom o;
        int k;

        end = end ? end : buf + len;
        msg = memchr(buf, ';', (size_t)(end - buf));
        msg = msg ? msg + 1 : buf;
        if ((size_t)(end - msg) >= 9 && memcmp(msg, "oom-kill:", 9) == 0)
                k = oom_kill(msg + 9, end, &o);
        else
                k = killed(msg, end, &o);
        if (k > KMSG_OTHER)
                *ret = o;
        return k;
}

bool kmsg_oom_within(const struct kmsg_oom *o, const char *memcg)
{
        size_t n = strlen(memcg);

        return strncmp(o->memcg, memcg, n) == 0 && (o->memcg[n] == '\0' || o->memcg[n] == '/');
}
