/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/sample.h"

/* The summary of a run, computed once, in the model: the recorder adds each
 * sample as the platform layer read it, and every sink takes the result
 * from the run model (struct run_model) instead of recomputing it.
 *
 * Two kinds of figures, on purpose:
 * - The summary's own figures (everything but `exact`) are computed from
 *   the sample as its CSV row holds it (sample_round(): MiB, GiB and the
 *   column's decimals). Those values survive the CSV round trip exactly,
 *   so `buildtel summarize FILE.csv` (and a replay from the history
 *   database) runs the same code on the same values and writes a summary
 *   byte-identical to the live run's. The summary files, the terminal and
 *   the history database's run row use them.
 * - `exact` holds the memory, disk and IO figures in bytes as read, not
 *   rounded: what the exporters (Prometheus textfile, OTLP) publish. They
 *   agree with the recorded figures up to the column's rounding (rounding
 *   is monotonic, so the rounded minimum is the minimum rounded). From a
 *   replay, where only the CSV's values exist, they are those in bytes. */

struct units;
struct baseline;
struct run_failure;

/* A rise of the kernel's memory peak this small is the same peak: the
 * memory cgroup charges in per-CPU batches of 64 pages (256 KiB), and a
 * few of them can land after the peak's moment. */
#define SUMMARY_PEAK_BATCH_MB 1.0

struct summary_config {
        double near_oom_mb; /* mem_avail_mb below this is near-OOM (4096) */
        double low_disk_gb; /* disk_avail_gb below this is low (20) */
        double mem_cap_mb;  /* the build's memory.max (--memory-max), MiB; 0: none */
};

/* Near-OOM, one rule: the host's available memory under near_oom_mb, the
 * build's anon (page cache left out: the kernel reclaims it before it
 * kills) within summary_cap_near_mb() of the cap, or an OOM kill since the
 * sample before (never "0 near-OOM" beside a kill). That headroom: a tenth
 * of the cap, at most near_oom_mb; 0 without a cap. */
double summary_cap_near_mb(const struct summary_config *c);

/* A value and where it happened. */
struct summary_point {
        bool set;
        double value;
        double epoch;
        double elapsed_s;
        double aux; /* a second figure at that instant (e.g. mem_avail_mb at the mem peak) */
        char stage[SAMPLE_STAGE_MAX + 1];
        char context[SAMPLE_CONTEXT_MAX + 1];
        char running[SAMPLE_RUNNING_MAX + 1]; /* the compile units in flight then */
};

/* A process of the build as a row named it (top_proc, top_proc_mb, top_pid). */
struct summary_proc {
        double pid; /* NAN when unknown */
        double mb;
        double anon_mb; /* its own anon (RssAnon); NAN unknown */
        char label[SAMPLE_PROC_MAX + 1];
};

/* The OOM-kill count rose between two rows. */
struct summary_oom {
        double epoch, elapsed_s;
        double kills;               /* the count after the rise */
        struct summary_proc victim; /* label "" when unknown */
        /* "kernel" (oom_victim column), "last seen" (the largest sampled
         * process that vanished, or the last one), "the build"
         * (summary_end_run), "" unknown */
        char victim_source[16];
        char stage[SAMPLE_STAGE_MAX + 1];
};

#define SUMMARY_OOM_MAX 8

/* The build's own totals and peaks (its cgroup, or in mode "none" its
 * process tree: estimates). */
struct summary_build {
        char mode[SAMPLE_MODE_MAX + 1]; /* the last row's cg_mode; "" when none was recorded */
        bool estimates; /* mode "none": the figures are estimates from the process tree */
        double cpu_user_s, cpu_sys_s; /* last values: counters */
        /* The kernel's peak (cg_mem_peak_mb): its value, and the first row
         * to show it, or to come within SUMMARY_PEAK_BATCH_MB of it (aux:
         * cg_mem_file_mb in that row, its page cache). */
        struct summary_point mem_peak;
        struct summary_proc mem_peak_proc; /* the largest process then: the culprit */
        struct summary_point mem_cur_peak; /* the largest sampled cg_mem_mb */
        /* The largest sampled cg_mem_anon_mb (aux: cg_mem_file_mb then):
         * what the OOM killer weighs, page cache left out. */
        struct summary_point mem_anon_peak;
        double oom_kills;               /* last */
        double io_read_mb, io_write_mb; /* last */
        struct psi psi;                 /* last */
        double pids_peak;                    /* max of cg_pids_peak and cg_pids */
        struct summary_oom oom[SUMMARY_OOM_MAX];
        uint64_t noom;                   /* rises seen (oom[] holds the first SUMMARY_OOM_MAX) */
        struct summary_proc prev_top[3]; /* the previous row's top processes */
        char prev_running[SAMPLE_RUNNING_MAX + 1]; /* the previous row's running */
        double prev_oom_kills;
        int victim_pending;            /* rows left to find the last rise's victim */
        struct summary_proc last_seen; /* the largest process of the last row that had one */
        double kernel_victim_pid;      /* the oom_victim_pid taken last (NAN: none) */
};

/* Bytes as the platform layer read them; NAN when unknown. */
struct summary_exact {
        double mem_used_peak_bytes;                 /* max of mem_used */
        double mem_avail_min_bytes;                 /* min of mem_avail */
        double swap_used_peak_bytes;                /* max of swap_used */
        double disk_avail_min_bytes;                /* min of disk_avail */
        double cg_mem_peak_bytes;                   /* max of the kernel's peak (cg_mem_peak) */
        double cg_io_read_bytes, cg_io_write_bytes; /* last known: counters */
};

/* Parallelism: the time by jobs in flight (units the running column
 * names, or the compilers count when larger), and the units that ran
 * alone. An interval counts for its later sample's jobs. */
#define SUMMARY_PAR_JOBS 64 /* the last bucket holds this many and more */
#define SUMMARY_ALONE_MAX 8 /* units tracked that ran alone; when full the shortest gives way */
struct summary_alone {
        char name[SAMPLE_RUNNING_MAX + 1];
        double s, first_s; /* seconds alone; when first seen alone */
};
struct summary_par {
        double prev_elapsed_s;                  /* NAN before the first sample */
        double by_jobs_s[SUMMARY_PAR_JOBS + 1]; /* seconds with k jobs in flight */
        bool seen;                              /* a sample had a jobs figure */
        struct summary_alone alone[SUMMARY_ALONE_MAX];
        size_t nalone;
};

struct summary {
        struct summary_config cfg;
        uint64_t samples;
        double first_epoch, last_epoch, last_elapsed_s;

        struct summary_point mem_used_peak; /* aux = mem_avail_mb there */
        struct summary_point mem_avail_min;
        struct summary_point swap_used_peak;
        struct summary_point disk_avail_min;
        double disk_avail_first, disk_avail_last;
        struct summary_point load1_peak;
        struct summary_point cpu_pct_peak;
        double cpu_pct_sum;
        uint64_t cpu_pct_n;
        struct summary_point compilers_peak;
        double mem_total_mb; /* used + avail at the first sample */

        uint64_t near_oom_samples;
        struct summary_point near_oom_first;
        double near_oom_compilers_sum; /* to judge "RAM-bound" */
        uint64_t near_oom_compilers_n; /* near-OOM samples with a compilers figure */
        uint64_t low_disk_samples;
        struct summary_point low_disk_first;

        uint64_t skipped_rows; /* junk or torn rows seen by a reader */

        struct summary_build build;
        struct summary_exact exact;

        /* The most compile units one row's running column named. */
        uint64_t running_peak;
        struct summary_par par;

        /* borrowed; NULL: no process scans, as in `summarize` */
        const struct units *units;
        /* borrowed; NULL without a history or a job */
        const struct baseline *baseline;
        /* borrowed; NULL or empty: nothing named, or no failure */
        const struct run_failure *failure;
        /* targets_commands_ran(), to set the units seen against; 0 unknown */
        uint64_t ran;
        /* borrowed; NULL: no critical path (model/critpath.h) */
        const struct critpath *path;
};

#define SUMMARY_NEAR_OOM_MB_DEFAULT 4096 /* also the text of `help`: an integer */
#define SUMMARY_LOW_DISK_GB_DEFAULT 20

/* Zero s, set every unknown figure to NAN and copy cfg (NULL: defaults). */
void summary_init(struct summary *s, const struct summary_config *cfg);
/* Account one sample (read live, or given back by a CSV or the history):
 * the recorded figures from sample_round(smp), the exact ones from smp.
 * NAN figures are skipped; on ties the first sample wins. Strings are
 * copied. */
void summary_add(struct summary *s, const struct sample *smp);
struct run_info;
/* At the end of a run: an OOM kill with no victim named, in a build whose
 * own process died of SIGKILL, names that process: a build killed before
 * the first tick has no other witness. */
void summary_end_run(struct summary *s, const struct run_info *ri);
/* The memory the -j reading plans for (model/jobs.h), MiB: the build's cap
 * when there is one below the host's RAM, else the host's RAM. */
double summary_jobs_mem_mb(const struct summary *s);

/* At the end of a ninja run: each peak and first-warning point whose row
 * named nothing running (no scan saw a unit) gets the .ninja_log edges
 * running at its instant (off: targets_ninja_offset()): their outputs,
 * ".o" dropped, "+N" for those that do not fit. */
struct ninja_edge;
void summary_place_edges(struct summary *s, const struct ninja_edge *ev, size_t n, double off);

/* The model's judgements of a run (the "readings"), decided here once;
 * the renderers only word them. */
struct summary_readings {
        /* OOM edge: available memory near zero (below 512 MiB or 5 % of
         * RAM), or swap in use; at is the sample it is dated by. */
        bool oom_edge, oom_zero, oom_swap;
        const struct summary_point *oom_at;
        /* The disk fell toward the low-disk threshold: its minimum came
         * within 1.5 times of it. */
        bool disk_falling;
        /* RAM-bound: while memory was low, compilers ran well below the
         * core count (on average under half of it). */
        bool ram_bound;
        double ram_bound_compilers; /* their average over those samples */
        /* The cap (--memory-max) was the limit: an OOM kill under it, or
         * anon within summary_cap_near_mb(); then no RAM-bound reading. */
        bool cap_limit;
        /* The build waited for CPU (its cgroup's CPU pressure, some) this
         * share of its wall time; NAN unknown (host-wide pressure). */
        double cpu_wait;
};

/* Decide the readings of s for a machine of ncpu cores (0: unknown, no
 * RAM-bound reading) into *ret. */
void summary_readings(const struct summary *s, unsigned ncpu, struct summary_readings *ret);
