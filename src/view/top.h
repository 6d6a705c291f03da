/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/dbuf.h"

/* The view model of `buildtel top` and its text frame: built from typed
 * structs only (no database, no terminal), so `top --once`, the curses
 * view and the unit test share it. */

#define TOP_SPARK_MAX 120

struct top_row {
        const char *command; /* the run's command line */
        bool running;
        const char *result; /* "ok", "exit 2", ... for a finished run */
        double elapsed_s;
        const char *stage, *context; /* the latest sample's; "" none */
        double mem_avail_mb;         /* latest; NAN unknown */
        double cpu_pct;              /* latest host CPU busy % */
        double build_mem_mb;         /* the build's own memory (its cgroup): a running
                                        run's latest, a finished run's peak; NAN unknown */
        double oom_kills;            /* a finished run's OOM kills; NAN unknown */
        double psi_mem_pct;          /* its memory pressure (some), % of the last interval */
        const char *units;           /* its running units, "" none */
        bool near_oom;               /* latest available under the run's threshold */
        double spark[TOP_SPARK_MAX]; /* memory available, oldest first */
        size_t nspark;
};

struct top_view {
        const struct top_row *rows;
        size_t nrows;
        size_t selected;   /* highlighted row (curses); the text frame marks it '>' */
        int cols, lines;   /* the screen; the frame fits inside */
        bool utf8;         /* Unicode block sparkline, else ASCII */
        const char *empty; /* said when there are no rows; NULL: "no runs recorded" */
        bool keys;         /* the keys' help line at the bottom (the live view) */
};

/* The sparkline of v[0..n) in width cells (the last width values), into
 * out: "▁▂▃▄▅▆▇█" with utf8, " .:-=+*#" without. NAN draws a space. */
int top_sparkline(const double *v, size_t n, size_t width, bool utf8, struct dbuf *out);

/* The whole frame as plain text lines (no escape codes), at most
 * view->lines lines of at most view->cols columns each. */
int top_frame_text(const struct top_view *view, struct dbuf *out);

/* One target of the run opened with Enter. */
struct top_target {
        const char *name;
        int64_t steps, cached; /* -1 unknown */
        double duration_s;     /* NAN while unknown */
};

/* The detail of one run: its row, targets, and its recent stage lines. */
struct top_detail {
        const struct top_row *row;
        const struct top_target *targets;
        size_t ntargets;
        const char *const *lines; /* recent log-like lines, oldest first */
        const char *lines_title;  /* their heading; NULL: "RECENT" (stage changes) */
        size_t nlines;
        /* a finished run's peaks (the build's own, anon, the host's, the
         * largest unit) and its -j reading, one line each; NULL or "": none */
        const char *peak, *jobs;
};

/* The detail frame, plain text, inside cols x lines. */
int top_detail_text(const struct top_detail *d, int cols, int lines, bool utf8, struct dbuf *out);
