/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/run.h"
#include "model/sample.h"
#include "model/summary.h"
#include "model/targets.h"
#include "util/dbuf.h"

/* The report of a run (issue 12): one self-contained HTML page and a
 * Markdown job summary for GitHub Actions, from the run model plus the
 * time series kept here as the samples arrive. */

enum report_series_id {
        REPORT_MEM_USED, /* GiB */
        REPORT_MEM_AVAIL,
        REPORT_CG_ANON,
        REPORT_CG_FILE,
        REPORT_SWAP,
        REPORT_CPU,  /* % */
        REPORT_DISK, /* GiB available */
        REPORT_COMPILERS,
        REPORT_CG_MEM,  /* GiB: the build's memory, as the kernel counts it */
        REPORT_CG_PEAK, /* GiB: the kernel's peak so far */
        REPORT_NSERIES,
};

#define REPORT_BANDS_MAX 256     /* stage bands kept; later stages fold into the last */
#define REPORT_ROWS_MAX 10000000 /* samples kept; the rest are counted */
#define REPORT_BUCKETS 600       /* downsampling buckets of a chart */

struct report_band {
        double start_s, end_s;
        char stage[SAMPLE_STAGE_MAX + 1];
};

/* The time series of a run, as the report draws it. */
struct report_data {
        size_t n, cap;
        double *t; /* elapsed seconds */
        double *v[REPORT_NSERIES];
        size_t nbands;
        struct report_band bands[REPORT_BANDS_MAX];
        unsigned long long dropped;
};

void report_data_init(struct report_data *d);
void report_data_release(struct report_data *d);
/* Keep one sample (numbers as the platform read them). 0 or -ENOMEM. */
int report_data_add(struct report_data *d, const struct sample *s);

/* A point of a downsampled series. */
struct report_pt {
        double t, v;
};

/* (t, v)[0..n) into out (2 * buckets entries): each equal time span keeps
 * its minimum and maximum in time order, so no peak or trough is lost; NAN
 * skipped. Returns the number of points written. */
size_t report_downsample(const double *t, const double *v, size_t n, size_t buckets,
                         struct report_pt *out);

/* Append s[0..len) to w HTML-escaped (& < > " '), invalid UTF-8 replaced
 * by U+FFFD and control characters by '?'. */
void report_html_escape(struct dwriter *w, const char *s, size_t len);
/* The same for a string, NULL as "". */
void report_html_esc(struct dwriter *w, const char *s);
/* label, then s escaped; nothing when s is empty (", stage S"). */
void report_html_opt(struct dwriter *w, const char *label, const char *s);
/* The same for a Markdown table cell: also '|' and '`' escaped, newlines
 * become spaces. */
void report_md_escape(struct dwriter *w, const char *s, size_t len);

/* How a table is written (HTML or Markdown): its heading and head row,
 * its cells, its end. */
struct report_table_fmt {
        const char *head, *row_open, *text_open, *num_open, *cell_close, *row_close, *tail;
        void (*escape)(struct dwriter *w, const char *s, size_t len);
};
/* The targets table: one row per target of f (name, result, duration,
 * steps, cached, ratio, compiler-cache hits and misses, "–" when
 * unknown); nothing when f has none. */
void report_targets_table(struct dwriter *w, const struct run_facts *f,
                          const struct report_table_fmt *fmt);

/* The page's first screen, the answers looked for before any chart: result,
 * peaks, OOM and disk, cache ratios, the slowest, the -j readings. */
void report_answer(struct dwriter *w, const struct run_model *m);

/* The run against its job's usual (nothing without a baseline): the HTML
 * section (small multiples, at most 12, and the findings, flagged first),
 * and the job summary's flagged findings (none for a job's first run). */
void report_baseline_html(struct dwriter *w, const struct summary *s);
void report_baseline_md(struct dwriter *w, const struct summary *s);

/* The HTML page. 0 or -ENOMEM. */
int report_render_html(const struct report_data *d, const struct run_model *m, struct dbuf *out);
/* The Markdown summary; files: the artifacts' file names (NULL-terminated
 * list, may be NULL). 0 or -ENOMEM. */
int report_render_markdown(const struct run_model *m, const char *const *files, struct dbuf *out);
/* GitHub Actions "::warning::" lines for near-OOM, low disk and OOM kills
 * (nothing when none happened). 0 or -ENOMEM. */
int report_gh_warnings(const struct summary *s, struct dbuf *out);
