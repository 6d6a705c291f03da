/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's own accounting of every process, host-wide (CAP_NET_ADMIN):
 * the taskstats record of each task that exits and the process
 * connector's fork and exec events; the caller keeps the build's. */

enum taskev_type {
        TASKEV_FORK = 1, /* pid: the new process, ppid: its parent's process */
        TASKEV_EXEC,     /* pid: the process that exec'd */
        TASKEV_EXIT,     /* a task's taskstats record */
        TASKEV_END,      /* the process connector's word that a task exited (after its record) */
};

#define TASKEV_COMM_MAX 32

struct taskev {
        enum taskev_type type;
        long pid;  /* the task (a thread's own id on exit) */
        long tgid; /* its process */
        long ppid;
        double at_s; /* FORK, EXEC, END: when, CLOCK_MONOTONIC seconds */
        /* TASKEV_EXIT only: */
        bool last;  /* the process's last thread: the process is over */
        int status; /* as wait() gives it */
        char comm[TASKEV_COMM_MAX + 1];
        double wall_s, cpu_s; /* the task's elapsed time; user + system */
        uint64_t rss_peak_kb; /* its memory map's peak RSS (hiwater) */
        uint64_t read_bytes, write_bytes;
        /* Waits for a CPU, block IO, memory (0 unless kernel.task_delayacct). */
        double delay_cpu_s, delay_io_s, delay_mem_s;
};

typedef void (*taskev_fn)(void *userdata, const struct taskev *ev);

struct tstats;

/* Returns 0, or -errno (-EPERM without CAP_NET_ADMIN, -ENOENT for a kernel
 * without taskstats). */
int taskstats_open(struct tstats **ret);
void taskstats_free(struct tstats *t); /* NULL is a no-op */
/* The two fds to poll for input. */
void taskstats_fds(const struct tstats *t, int fds[2]);
/* Every event waiting, in order per socket, to fn. */
void taskstats_drain(struct tstats *t, taskev_fn fn, void *userdata);
/* kernel.task_delayacct is 1: the records' delays are measured. */
bool taskstats_delayacct(void);
/* Reads the kernel dropped (a receive buffer that overflowed). */
uint64_t taskstats_lost(const struct tstats *t);

/* One datagram each, of the TASKSTATS genetlink family and of the process
 * connector; unknown or short messages are skipped. */
void taskstats_parse(const void *buf, size_t len, uint16_t family, taskev_fn fn, void *userdata);
void taskstats_parse_cn(const void *buf, size_t len, taskev_fn fn, void *userdata);
