/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Two runs side by side (`buildtel compare A B`): each run is a list of
 * figures, (section, subject, figure) = a number or a text, that the caller
 * fills from the history (cmd/); compare_runs() pairs them, tells real
 * changes from noise and orders them by what matters. Pure: no I/O. */

/* Sections in the order of what matters to whoever reads the comparison. */
enum compare_section {
        COMPARE_RUN,    /* the run's own: outcome, duration, CPU, memory peaks, OOM kills */
        COMPARE_CACHE,  /* per compiler-cache tool: hits, misses, hit ratio */
        COMPARE_TARGET, /* per target: duration, steps, cached */
        COMPARE_PATH,   /* per step of the critical path: its time, its slack */
        COMPARE_STEP,   /* per BuildKit step: duration, memory peak, CPU */
        COMPARE_UNIT,   /* per compile unit (its shown name): peak memory, duration */
        COMPARE_FACTS,  /* texts: command, revision, host */
        COMPARE_SECTIONS,
};

/* "run", "cache", "target", "path", "step", "unit", "facts". */
const char *compare_section_name(enum compare_section s);
/* What a figure's number is, by the end of its name: "_s" seconds, "_mb"
 * MiB, "_pct" a percentage, "_ratio" a ratio, else a count. */
enum compare_in { COMPARE_IN_COUNT, COMPARE_IN_S, COMPARE_IN_MB, COMPARE_IN_PCT, COMPARE_IN_RATIO };
enum compare_in compare_figure_in(const char *figure);
/* A figure's name for people ("duration_s": "wall time", "peak_mb":
 * "memory peak"); the figure itself when it reads as it is. */
const char *compare_figure_label(const char *figure);

#define COMPARE_SUBJECT_MAX 200 /* a subject's bytes kept (a step's name is long) */
#define COMPARE_FIGURES_MAX 200000

struct compare_fig {
        int section;
        char *subject; /* "" for the run's own figures */
        char *figure;  /* "duration_s", "peak_mb", ... */
        double value;  /* NAN: a text figure */
        char *text;    /* NULL: a number */
        size_t seq;    /* order of adding, so that duplicates pair in order */
};

/* One run's figures (caller-owned; compare_side_release()). */
struct compare_side {
        struct compare_fig *v;
        size_t n, cap;
        size_t dropped; /* past COMPARE_FIGURES_MAX */
};

/* Add a number (a NAN one is not added: unknown) or a text (NULL: not
 * added). subject is cut to COMPARE_SUBJECT_MAX. Returns 0 or -ENOMEM. */
int compare_side_add(struct compare_side *s, enum compare_section sec, const char *subject,
                     const char *figure, double value);
int compare_side_add_text(struct compare_side *s, enum compare_section sec, const char *subject,
                          const char *figure, const char *text);
void compare_side_release(struct compare_side *s); /* NULL is a no-op */

/* The run's own rows from its figure vector (model/figures.h, as the
 * baseline and bench take it), in this order: duration, CPU, the build's
 * memory peaks, the host's, OOM kills, CPU average, steps, cached steps.
 * Returns 0 or -ENOMEM. */
struct run_figures;
int compare_side_add_run(struct compare_side *s, const struct run_figures *f);
/* A compiler cache's rows (hits, misses, hit ratio) from its counters at
 * the log's first and last stats blocks (have_first false: the last
 * alone), through figure_cc_delta() and figure_hit_ratio(). Returns 0 or
 * -ENOMEM. */
int compare_side_add_cache(struct compare_side *s, const char *tool, bool have_first,
                           uint64_t first_hits, uint64_t first_misses, uint64_t last_hits,
                           uint64_t last_misses);

enum compare_status {
        COMPARE_SAME,
        COMPARE_CHANGED,
        COMPARE_APPEARED, /* only in B */
        COMPARE_GONE,     /* only in A */
};

/* "same", "changed", "appeared", "gone". */
const char *compare_status_name(enum compare_status s);

/* A figure of A and of B. Strings borrowed from the sides. */
struct compare_row {
        int section;
        const char *subject, *figure;
        double a, b;         /* NAN: not in that run, or a text */
        const char *ta, *tb; /* the texts of a text figure (NULL: not in that run) */
        double change;       /* b - a; NAN unless both are numbers */
        double change_pct;   /* 100 (b - a) / |a|; NAN when a is 0 or either is absent */
        double rank;         /* how big the change is, for the order (see compare_runs) */
        size_t seq;          /* the order the figure was added in */
        enum compare_status status;
        bool noise; /* changed, but less than can be told apart (compare_runs) */
};

/* Sample intervals a sampled time is known to: one at each end, and jitter. */
#define COMPARE_QUANTA 2.5

struct compare_result {
        struct compare_row *rows; /* by section in enum order, then as compare_runs says */
        size_t n;
        double quantum_s;               /* as given to compare_runs (0: none) */
        double score[COMPARE_SECTIONS]; /* a section's largest rank, noise left out */
        size_t count[COMPARE_SECTIONS]; /* rows of each section */
};

/* Pair the figures of a and b by (section, subject, figure); figures with
 * the same key in one run pair in the order they were added. A row's rank
 * is |change_pct| / 100 for numbers known in both with a != 0; 1 for a
 * number from 0, a figure in one run only or a text that differs; 0 for
 * the same. Noise (quantum_s: the runs' larger sample interval; NAN or 0
 * none): a unit's time changed by less than COMPARE_QUANTA quantum_s,
 * another time by less than that or BASELINE_FLOOR_S, a memory figure by
 * less than BASELINE_FLOOR_MB; a unit in one run only whose time is under
 * COMPARE_QUANTA quantum_s (targets and steps are the log's, never missed).
 * Rows sort by section; the run's and the facts' in the order added, the
 * others' real changes first, by rank, |change|, key. Returns 0 or -ENOMEM;
 * *ret (compare_result_release()) is untouched on failure. The sides must
 * outlive the result. */
int compare_runs(const struct compare_side *a, const struct compare_side *b, double quantum_s,
                 struct compare_result *ret);
void compare_result_release(struct compare_result *r); /* NULL is a no-op */
