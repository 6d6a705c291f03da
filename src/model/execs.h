/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* What the RUN steps of a BuildKit build used inside the daemon: each exec
 * cgroup BuildKit made for one of this invocation's RUN steps, read by the
 * platform layer (platform/bkexec), and per step the sum of its execs.
 * Plain values; every figure is NAN when it was not measured. */

#define EXEC_LABEL_MAX 100 /* a process label, bytes without NUL */
#define EXEC_ID_MAX 71
#define EXEC_CMD_MAX 255

/* A RUN step's use of the machine, from its exec cgroup(s). set false: not
 * measured (not a RUN step, too short to be seen between two reads, or the
 * execs could not be read); then every figure is NAN and the labels "". */
struct step_exec {
        bool set;
        bool from_record;                     /* BuildKit's record's figures (parse/bkrecord.h) */
        uint32_t execs;                       /* exec cgroups seen for it */
        double cpu_s;                         /* user + system */
        double mem_peak_bytes;                /* the kernel's peak of its cgroup */
        double anon_peak_bytes;               /* the largest sampled anonymous memory */
        double io_read_bytes, io_write_bytes; /* block IO */
        double net_rx_bytes, net_tx_bytes;    /* its network namespace, lo left out */
        double oom_kills;                     /* the kernel's count of its cgroup */
        double oom_at_s;                      /* the first kill seen, buildtel's clock */
        char peak_proc[EXEC_LABEL_MAX + 1];   /* its largest process ("tail", "cc1 foo.c") */
        double peak_proc_bytes;               /* that process's RSS then */
        char oom_victim[EXEC_LABEL_MAX + 1];  /* the process the kill took, "" unknown */
};

/* Pressure stall seconds ("some" and "full") of cpu, memory and io (the
 * PSI_ index); NAN unknown. */
enum { PSI_CPU, PSI_MEM, PSI_IO };
struct psi {
        double some_s[3], full_s[3];
};
void psi_clear(struct psi *p);                        /* all NAN */
void psi_sum(struct psi *to, const struct psi *from); /* execs_sum() of each */

/* One exec cgroup of this build, as last read. */
struct exec_fact {
        char id[EXEC_ID_MAX + 1];   /* the cgroup's leaf name (BuildKit's exec id) */
        char cmd[EXEC_CMD_MAX + 1]; /* its command, normalized (parse/bkrun) */
        double first_s, last_s;     /* first and last read, buildtel's clock */
        bool alive;                 /* its cgroup was there at the last read */
        struct step_exec u;
        /* for the build's totals: the counters split, the current levels */
        double cpu_user_s, cpu_sys_s;
        double mem_bytes, anon_bytes, file_bytes, pids;
        struct psi psi;
};

/* Every figure NAN, labels "", set false. */
void step_exec_clear(struct step_exec *e);
/* Add e into to (counters summed, peaks the larger, the first OOM time
 * kept); to becomes set. */
void step_exec_add(struct step_exec *to, const struct step_exec *e);
/* Bytes or counts: NAN + x is x (a figure known for one part); on a tie
 * max and min keep a. */
double execs_sum(double a, double b);
double execs_max(double a, double b);
double execs_min(double a, double b);

/* How far the RUN steps of a build were followed into BuildKit: the
 * facts of the one note said when some were not. */
struct exec_cover {
        uint32_t runs;     /* RUN steps not cached; 0: nothing to say */
        uint32_t measured; /* of them, those with a measured exec */
        uint32_t recorded; /* of them, those BuildKit's record gave (endinputs_record()) */
        char driver[64];   /* the buildx driver the log named, "" unknown */
        char builder[64];  /* and its builder's name */
        double poll_s;     /* a first exec shorter than this can go unseen (the walk) */
};

/* What the RUN steps of one target used: its largest step memory peak,
 * its OOM kills, CPU, and how many of its steps were measured. */
struct target_exec {
        uint32_t measured; /* its steps with a measured exec */
        double mem_peak_bytes, oom_kills, cpu_s;
        int peak_step; /* index of the step in v with that peak, -1 none */
};

struct step_fact;
/* Over the steps v[0..n) of target (an index in the targets model; -1 the
 * whole build). */
void execs_target(const struct step_fact *v, uint32_t n, int target, struct target_exec *ret);
