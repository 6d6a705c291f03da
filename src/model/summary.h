/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model/sample.h"

/* The summary accumulates samples as they were recorded in the CSV (parsed
 * back from it), so a live run and `buildtel summarize FILE.csv` run the
 * same code on the same values. */

struct summary_config {
        double near_oom_mb; /* mem_avail_mb below this is near-OOM (4096) */
        double low_disk_gb; /* disk_avail_gb below this is low (20) */
};

/* A value and where it happened. */
struct summary_point {
        bool set;
        double value;
        double epoch;
        double elapsed_s;
        double aux; /* a second figure at that instant (e.g. mem_avail_mb at the mem peak) */
        char stage[SAMPLE_STAGE_MAX + 1];
        char context[SAMPLE_CONTEXT_MAX + 1];
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
};

#define SUMMARY_NEAR_OOM_MB_DEFAULT 4096.0
#define SUMMARY_LOW_DISK_GB_DEFAULT 20.0

/* Zero s, set every unknown figure to NAN and copy cfg (NULL: defaults). */
void summary_init(struct summary *s, const struct summary_config *cfg);
/* Account one sample. NAN figures are skipped; on ties the first sample
 * wins. Strings are copied (cut at the point's buffer size). */
void summary_add(struct summary *s, const struct sample *smp);
