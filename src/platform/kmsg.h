/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The kernel log's report of an OOM kill: the one reader of its records,
 * for the build's cgroup (cgroup-read.c) and BuildKit's execs (bkexec.c). */

enum kmsg_oom_kind {
        KMSG_OTHER,    /* any other record */
        KMSG_OOM_KILL, /* "oom-kill:...,task_memcg=PATH,task=COMM,pid=N,uid=U" */
        KMSG_KILLED,   /* "Killed process N (COMM) total-vm:..." (no cgroup) */
};

struct kmsg_oom {
        char memcg[512]; /* the victim's cgroup (v1 memory or v2 path); "" for KMSG_KILLED */
        char task[64];   /* its comm, control bytes as '?' */
        long pid;
};

/* One record ("6,974,...,-;MESSAGE" or a line of text, up to its first
 * newline): its kind, with *ret set for the two kills; -EINVAL for an
 * oom-kill record without cgroup, task and pid, or a cgroup too long. */
int kmsg_oom_parse(const char *buf, size_t len, struct kmsg_oom *ret);

/* True when o's cgroup is memcg or below it. */
bool kmsg_oom_within(const struct kmsg_oom *o, const char *memcg);
