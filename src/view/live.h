/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "model/sample.h"

/* run --live: one status line pinned on the terminal's bottom row by a
 * scroll region (as apt's progress line); never written to the log. */

/* The figures of one sample the line shows; strings copied (cut). */
struct live_view {
        double elapsed_s;
        double mem_avail_bytes, cg_mem_bytes, swap_used_bytes;
        double cpu_pct, disk_avail_bytes;
        char stage[64], context[64], top[64];
        char unit[64]; /* the running compile unit with the most memory */
        double top_bytes;
};

struct live_limits {
        double near_oom_mb; /* mem_avail below this: warning colour */
        double low_disk_gb;
};

/* The view of s (strings copied, cut at their buffers). */
void live_view_from_sample(struct live_view *v, const struct sample *s);

/* The status line of v for a terminal cols wide into out (cap bytes, NUL
 * terminated): at most cols display columns, never a split UTF-8
 * sequence, control bytes from the build shown as '?'. With color, SGR
 * red under the limits. Returns the length in bytes. Pure. */
size_t live_format(const struct live_view *v, const struct live_limits *lim, int cols, bool color,
                   char *out, size_t cap);

/* The build's output, scanned for what moves the cursor: the alternate
 * screen (ESC[?1049h/l, ?1047, ?47), cursor-up (ESC[nA, ESC[nF) and a
 * reset of the scroll region (ESC[r, ESC[n;mr, ESC c), in any chunking;
 * and for where the stream stands: inside an escape sequence (CSI, OSC,
 * DCS/SOS/PM/APC strings up to BEL or ST, ESC with intermediates) or a
 * UTF-8 character, the line must not be drawn (live_scan_busy). */
struct live_scan {
        unsigned char state;
        bool priv;
        unsigned param;
        bool alt;              /* the build is on the alternate screen */
        unsigned char u8_need; /* continuation bytes of a UTF-8 character to come */
};
enum {
        LIVE_SCAN_ALT = 1 << 0,    /* alt changed (see sc->alt) */
        LIVE_SCAN_UP = 1 << 1,     /* a cursor-up */
        LIVE_SCAN_REGION = 1 << 2, /* the scroll region was reset */
};
/* Returns the LIVE_SCAN_* seen in buf. Pure. */
int live_scan_feed(struct live_scan *sc, const char *buf, size_t len);
/* Is the stream in the middle of an escape sequence or a character? */
bool live_scan_busy(const struct live_scan *sc);

struct live;
/* The line on the terminal at fd (the caller checked tty_usable). Returns
 * 0, -ENOMEM, or -errno of the size query. */
int live_new(int fd, const struct live_limits *lim, bool color, struct live **ret);
/* Leaves the terminal clean: no region, no line. NULL: no-op. */
void live_free(struct live *l);
/* A new sample: drawn now (if 1/4 s passed since the last draw). */
void live_sample(struct live *l, const struct sample *s, double now);
/* Build output about to reach the terminal: steps aside before it when
 * it moves the cursor itself. */
void live_output(struct live *l, const char *buf, size_t len, double now);
/* Redraw (or come back) when due. */
void live_update(struct live *l, double now);
/* When live_update is next due (monotonic seconds). */
double live_deadline(const struct live *l);
/* SIGWINCH: the size again, the region again. */
void live_resize(struct live *l, double now);
/* Around a stop (Ctrl-Z): the region reset before, set again after. */
void live_suspend(struct live *l);
void live_resume(struct live *l, double now);
