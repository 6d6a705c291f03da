/* SPDX-License-Identifier: MIT */
#pragma once

#include <poll.h>
#include <stddef.h>

/* Every process of the build, from the kernel's own accounting
 * (platform/taskstats): the build's processes are its root and what they
 * fork; a compile or link (platform/cgroup-top's procunit_classify, read at
 * its exec) is a unit with what it runs (a driver's cc1 and as), and when
 * it ends it goes to the units table with its exact peak RSS (the largest
 * hiwater of its processes), CPU (theirs summed) and wall time. */

struct acct;
struct execmatch;
struct guard;
struct procfs;
struct units;

struct run_procs;

/* em (NULL: none) the BuildKit execs the run follows: the compiles in
 * them are units too, one that ran before its exec was known held till it
 * is. Returns 0, or -errno when the kernel's accounting is not ours to
 * read (not root: -EPERM; no taskstats: -ENOENT). p, units, em borrowed. */
int acct_open(struct procfs *p, struct units *units, struct execmatch *em, struct acct **ret);
void acct_free(struct acct *a); /* NULL is a no-op */
/* pid is one of the build's processes (its root; one a scan found). */
void acct_member(struct acct *a, long pid);
/* The fds to poll (at most cap), and what came on them read; mono0 is
 * the run's clock's start (CLOCK_MONOTONIC seconds). Drains come at most
 * every ACCT_BATCH_S: none is due, no fd, and *deadline is lowered to when
 * one is. acct_poll with n 0 reads whatever waits. */
size_t acct_pollfds(struct acct *a, struct pollfd *p, size_t cap, double now, double *deadline);
void acct_poll(struct acct *a, const struct pollfd *p, size_t n, double mono0);
/* Tell g (borrowed; NULL none) of each unit as it starts, of the
 * build's forks and of its processes' ends: run --memory-guard. */
void acct_set_guard(struct acct *a, struct guard *g);
/* The label of pid, a process of a unit alive or ended lately, as the
 * scans label it ("cc1plus ../x.cpp"), in buf (or the ring's); else comm.
 * a may be NULL. */
const char *acct_label(const struct acct *a, long pid, const char *comm, char *buf, size_t cap);
/* The build is over: what waits read, every unit whose record came ended,
 * and the build's processes: how many ended, their CPU and delays, by
 * name the largest and the most CPU, and what was missed. */
void acct_procs(struct acct *a, double mono0, struct run_procs *ret);
