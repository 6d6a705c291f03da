/* SPDX-License-Identifier: MIT */
#pragma once
/* Private to bkexec.c (each tick's reads, OOM kills, the facts) and
 * bkexec-find.c (finding the exec cgroups). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "platform/bkexec.h"
#include "platform/cgroup-top.h"
#include "platform/cgroup.h"
#include "platform/kmsg.h"
#include "platform/procfs.h"

#define RAW_MAX 1024     /* bytes of a first process's cmdline kept to match */
#define SCAN_MAX 32768   /* processes of one walk */
#define SCAN_EVERY 10    /* discovering ticks between walks once a directory is known */
#define VICTIM_TRIES 20  /* polls to find which process an OOM kill took */
#define KEPT_MAX 16      /* files of one exec kept open for pread */
#define WALK_POLL_S 0.5  /* between walks from bkexec_poll while no directory is known */
#define WALK_SOON_S 0.05 /* ... and after a walk that caught an exec half moved */
#define OOM_KEPT_MAX 8   /* the kernel's OOM records kept for an exec not decided yet */
#define OOM_KEPT_S 60.0  /* ... and for how long */

enum ex_state { EX_PENDING, EX_OURS, EX_OTHER };

struct ex {
        int dfd[_CG_H_MAX]; /* the exec cgroup in each hierarchy, -1 none */
        struct kept {
                const char *name; /* a literal: compared by address */
                int h, fd;        /* fd -1: absent there */
        } kept[KEPT_MAX];
        size_t nkept;
        int parent; /* index in parents[] */
        char id[EXEC_ID_MAX + 1];
        enum ex_state state;
        bool seen_now;
        uint64_t start_ticks; /* its first process's start, ticks after boot; 0 unknown */
        long first_pid;
        char raw[RAW_MAX];
        size_t rawlen;
        char xraw[RAW_MAX]; /* raw with the step's variables replaced; xrawlen 0: none */
        size_t xrawlen;
        struct proctop top, last_top;
        uint64_t oom; /* the kernel's count as last read */
        int victim_tries;
        size_t fact; /* index in facts[] when ours */
};

struct scanproc {
        long pid, ppid; /* pid first: procfs_cmp_pid */
        char comm[16];
};

struct bkexec {
        struct bkexec_config cfg;
        int root_fd;
        struct cgroup_mounts mounts;
        bool mounts_read;
        /* directories of execs, per hierarchy, relative to root_fd */
        char parents[BKEXEC_PARENTS_MAX][_CG_H_MAX][CG_PATH_MAX];
        size_t nparents;
        struct ex ex[BKEXEC_ALIVE_MAX];
        size_t nex;
        struct exec_fact facts[BKEXEC_OURS_MAX];
        size_t nfacts;
        long pids[BKEXEC_ALIVE_MAX * 4];
        unsigned char owner[BKEXEC_ALIVE_MAX * 4];
        size_t npids;
        uint64_t self_start;
        uid_t uid; /* geteuid(): its processes and files are trusted, as root's are */
        double page_bytes, hz;
        unsigned ticks_since_walk;
        double last_walk;
        bool hunt;      /* bkexec_hunt() */
        bool walk_soon; /* the last walk caught an exec half moved: walk on the next tick */
        int kmsg_fd;    /* the kernel's log, for OOM kills of execs already gone */
        uint32_t kmsg_kills[BKEXEC_OURS_MAX]; /* per fact: kills the log named */
        struct oom_kept {
                struct kmsg_oom o;
                double at;        /* when read */
        } oom_kept[OOM_KEPT_MAX]; /* records of no exec of ours yet, oldest first */
        size_t noom_kept;
        struct kmsg_oom last_oom; /* the newest applied; pid 0: none */
        struct scanproc scan[SCAN_MAX];
        size_t nscan;
        char buf[65536];
};

void bkexec_ex_close(struct ex *e);
ssize_t bkexec_kread(struct bkexec *b, struct ex *e, int h, const char *name);
void bkexec_ex_identify(struct bkexec *b, struct ex *e, struct procfs *p);
int bkexec_ex_procs(struct bkexec *b, struct ex *e, long *pids, size_t cap);
void bkexec_list_parents(struct bkexec *b);
int bkexec_read_mounts(struct bkexec *b);
void bkexec_walk(struct bkexec *b, struct procfs *p);
