/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/execs.h"

/* One row of the time series: the machine and the build's cgroup at one
 * instant, and what the build was doing. Numbers are as read, never
 * rounded: sizes in bytes (exact in a double up to 8 PiB), not the CSV's
 * MiB and GiB (sample_round() gives those). Unknown is NAN (an empty
 * CSV field). */

#define SAMPLE_STAGE_MAX 256   /* bytes, without NUL */
#define SAMPLE_CONTEXT_MAX 512 /* bytes, without NUL */
#define SAMPLE_PROC_MAX 160    /* a top_proc label, bytes, without NUL */
#define SAMPLE_MODE_MAX 16
#define SAMPLE_RUNNING_MAX 256 /* the running column, bytes, without NUL */

#define SAMPLE_MIB 1048576.0    /* bytes per MiB (the *_mb columns) */
#define SAMPLE_GIB 1073741824.0 /* bytes per GiB (the *_gb columns) */

struct sample {
        double epoch;     /* CLOCK_REALTIME, seconds */
        double elapsed_s; /* since the run started */
        double load1;
        double cpu_pct;        /* host busy %, from /proc/stat deltas */
        double mem_used_bytes; /* MemTotal - MemAvailable */
        double mem_avail_bytes;
        double mem_pct; /* used / total * 100 */
        double swap_used_bytes;
        double disk_avail_bytes; /* available to unprivileged users */
        double disk_pct;         /* used / (used + avail) * 100, as df */
        double compilers;        /* live compiler processes (a whole number) */
        const char *stage;       /* borrowed, NUL-terminated, "" when none */
        const char *context;     /* borrowed, NUL-terminated, "" when none */

        /* The build's own accounting (its cgroup, or its process tree in
         * mode "none"); all NAN / "" for watch. Counters count from the
         * build's start. */
        const char *cg_mode; /* "v2", "hybrid", "v1", "none", or "" */
        double cg_cpu_user_s, cg_cpu_sys_s;
        double cg_mem_bytes, cg_mem_peak_bytes; /* peak is the kernel's */
        double cg_oom_kills;
        double cg_io_read_bytes, cg_io_write_bytes;
        struct psi cg_psi;
        double cg_pids, cg_pids_peak;
        /* The build's three largest processes by RSS, largest first. */
        const char *top_proc, *top2_proc, *top3_proc; /* labels */
        double top_proc_bytes, top2_proc_bytes, top3_proc_bytes;
        /* The largest process's own anonymous memory (RssAnon: statm's
         * resident - shared), which the cgroup charges to it alone; its RSS
         * also counts shared file pages. NAN unknown. */
        double top_proc_anon_bytes;
        double top_pid, top2_pid, top3_pid;
        /* The build's memory split (issue 10): anonymous (what the OOM
         * killer weighs) and file-backed (page cache, mapped files). v2
         * memory.stat anon/file, v1 total_rss/total_cache, none: the
         * tree's RssAnon/RssFile. */
        double cg_mem_anon_bytes, cg_mem_file_bytes;
        /* The compile units in flight, largest RSS first: "heavy.c s5.c
         * ld:app.so" (borrowed, "" when none). */
        const char *running;
        /* The OOM killer's last victim in the build, from the kernel's own
         * report (/dev/kmsg, as root): its comm and pid; "" and NAN when
         * none was read. */
        const char *oom_victim;
        double oom_victim_pid;
};

/* Set every number to NAN and the strings to "". */
void sample_clear(struct sample *s);

/* The sample as its CSV row reads back, bit for bit, without writing or
 * parsing text (tests/test-sample.c proves it). Strings are the same
 * pointers, not cut. *ret may be s. Rounding again changes nothing. */
void sample_round(const struct sample *s, struct sample *ret);
/* x rounded to prec decimals as "%.*f" writes it and strtod() reads it
 * back: NAN when the CSV writes an empty field, +0 for a negative zero. */
double sample_round_decimals(double x, int prec);
/* x * 10^prec rounded to a whole number as printf rounds (the exact binary
 * value of x, ties to even), as a magnitude *ret_q and a sign: the CSV
 * writer's digits without printf. Returns false where this exact fast path
 * does not apply (the caller writes the text instead): not finite, 1e15 or
 * more, too many decimals, or past the integers a double holds exactly. */
bool sample_round_scaled(double x, int prec, double *ret_q, bool *ret_neg);

/* Upper bound on the known columns (the table in sample.c); a static
 * assertion there keeps the two in step. */
#define SAMPLE_COLUMNS_MAX 64

/* The column table, for sinks that store every column without naming them
 * (the history database): a column appended to the table reaches them
 * without a code change there. */
enum sample_column_type {
        SAMPLE_COLUMN_NUMBER, /* a double; NAN when unknown */
        SAMPLE_COLUMN_TEXT,   /* a string, cut as the CSV cuts it */
        SAMPLE_COLUMN_ISO,    /* derived from epoch when written (ISO 8601 UTC) */
};

size_t sample_column_count(void);
/* Name of column i (static storage), NULL when i is past the end; its type
 * in *ret_type when ret_type is not NULL. */
const char *sample_column_name(size_t i, enum sample_column_type *ret_type);
/* The value of a NUMBER column in the column's unit (MiB for a *_mb
 * column: bytes / 2^20, exact, not rounded); NAN for any other column. */
double sample_column_number(const struct sample *s, size_t i);
/* The value of a TEXT column, borrowed from s and cut at the column's
 * maximum; *ret_len is its length. NULL for any other column. */
const char *sample_column_text(const struct sample *s, size_t i, size_t *ret_len);
/* The decimals of NUMBER column i (its CSV field's, what sample_round()
 * keeps); -1 for any other column. */
int sample_column_precision(size_t i);
/* Set a NUMBER column (v in the column's unit) / a TEXT column (text is
 * borrowed, NUL-terminated).
 * Returns 0, or -EINVAL when column i is not of that type. */
int sample_column_set_number(struct sample *s, size_t i, double v);
int sample_column_set_text(struct sample *s, size_t i, const char *text);
