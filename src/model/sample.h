/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/csv.h"
#include "util/dbuf.h"

/* One row of the time series: what the machine (and later the build's
 * cgroup) looked like at one instant, plus what the build was doing.
 *
 * The numbers are the ones the platform layer read, in their own units:
 * sizes in bytes (whole numbers, exact in a double up to 2^53 = 8 PiB),
 * not the MiB and GiB of the CSV columns, and never rounded. The CSV row
 * (sample_csv_format) writes each in its column's unit at its column's
 * precision; sample_round() gives the values that row reads back as.
 * Numbers that are unknown are NAN and written as empty CSV fields. */

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
        double cg_psi_cpu_some_s, cg_psi_cpu_full_s; /* stall seconds */
        double cg_psi_mem_some_s, cg_psi_mem_full_s;
        double cg_psi_io_some_s, cg_psi_io_full_s;
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

/* Append the header record (column names, CRLF) to b. */
int sample_csv_header(struct dbuf *b);

/* Append s as one CSV record (CRLF-terminated) to b. iso is derived from
 * epoch. Numbers are written in their column's unit (MiB, GiB) with fixed
 * precision per column; NAN, infinities and magnitudes >= 1e15 (which
 * would not read back as plain decimals) are written as empty fields.
 * stage and context are cut at SAMPLE_STAGE_MAX / SAMPLE_CONTEXT_MAX bytes.
 * Returns 0, or -ENOMEM with b's length as it was. */
int sample_csv_format(const struct sample *s, struct dbuf *b);
/* The same with --csv-safe: text a spreadsheet would take for a formula
 * (stage, context from the build) gets a leading '. */
int sample_csv_format_safe(const struct sample *s, struct dbuf *b);

/* The sample as its CSV row holds it: every number is what
 * sample_from_record() would give for the row sample_csv_format() writes,
 * bit for bit, computed without writing or parsing text (the proof is
 * tests/test-sample.c). Strings are the same pointers, not cut (whoever
 * copies one cuts it at its column's maximum, as the row does). *ret may
 * be s. Rounding again changes nothing. */
void sample_round(const struct sample *s, struct sample *ret);
/* x rounded to prec decimals as "%.*f" writes it and strtod() reads it
 * back: NAN when the CSV writes an empty field, +0 for a negative zero. */
double sample_round_decimals(double x, int prec);

/* Upper bound on the known columns (the table in sample.c); a static
 * assertion there keeps the two in step. */
#define SAMPLE_COLUMNS_MAX 64

/* Column positions found in a header record. Columns may appear in any
 * order and unknown ones are ignored; the seed's columns must be there,
 * the ones added later may be missing (a CSV of an older buildtel): they
 * read as NAN and "". */
struct sample_colmap {
        int idx[SAMPLE_COLUMNS_MAX];             /* per known column: field index or -1 */
        size_t nfields;                          /* fields in the header */
        unsigned char range[SAMPLE_COLUMNS_MAX]; /* per known column: enum range_kind */
};

/* Returns 0, or -EINVAL when rec is not a buildtel header. */
int sample_colmap_init(struct sample_colmap *m, const struct csv_record *rec);

/* Fill s from a data record (numbers in the model's units: a *_mb field
 * becomes bytes). Strings point into rec. Returns 0, or
 * -EINVAL when the record has the wrong field count or a number does not
 * parse or is out of its column's range (model/ranges.h): a junk row; s is
 * untouched then. */
int sample_from_record(const struct sample_colmap *m, const struct csv_record *rec,
                       struct sample *s);

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
/* Set a NUMBER column (v in the column's unit) / a TEXT column (text is
 * borrowed, NUL-terminated).
 * Returns 0, or -EINVAL when column i is not of that type. */
int sample_column_set_number(struct sample *s, size_t i, double v);
int sample_column_set_text(struct sample *s, size_t i, const char *text);
