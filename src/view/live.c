/* SPDX-License-Identifier: MIT */
/* run --live: the status line on the bottom row, in a scroll region. */
#include "view/live.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/run.h"
#include "platform/tty.h"
#include "util/macro.h"
#include "util/util.h"

#define LIVE_MIN_GAP 0.25 /* at most 4 draws a second */
#define LIVE_IDLE 1.0     /* the clock moves: once a second anyway */
#define LIVE_QUIET 1.0    /* after the build moved the cursor up */

enum { SCAN_GROUND, SCAN_ESC, SCAN_CSI, SCAN_STR, SCAN_STR_ESC, SCAN_ESC_INTER };

static int scan_final(struct live_scan *sc, unsigned char c)
{
        if (sc->priv && (c == 'h' || c == 'l') &&
            (sc->param == 1049 || sc->param == 1047 || sc->param == 47)) {
                sc->alt = c == 'h';
                return LIVE_SCAN_ALT;
        }
        if (!sc->priv && c == 'r')
                return LIVE_SCAN_REGION; /* DECSTBM: a new region, ours gone */
        return !sc->priv && (c == 'A' || c == 'F') ? LIVE_SCAN_UP : 0;
}

/* The byte after an ESC. */
static int scan_esc(struct live_scan *sc, unsigned char c)
{
        if (c == '[') {
                sc->state = SCAN_CSI;
                sc->priv = false;
                sc->param = 0;
        } else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
                sc->state = SCAN_STR; /* OSC, DCS, SOS, PM, APC: up to ST (or BEL) */
        } else if (c >= 0x20 && c <= 0x2f) {
                sc->state = SCAN_ESC_INTER; /* ESC ( B and the like */
        } else if (c != 0x1b) {
                sc->state = SCAN_GROUND;
                return c == 'c' ? LIVE_SCAN_REGION : 0; /* RIS resets everything */
        }
        return 0;
}

/* A byte inside a string (OSC ...) or after ESC and intermediates. */
static int scan_other(struct live_scan *sc, unsigned char c)
{
        if (c == 0x18 || c == 0x1a) { /* CAN, SUB */
                sc->state = SCAN_GROUND;
                return 0;
        }
        switch (sc->state) {
        case SCAN_STR:
                if (c == 0x07)
                        sc->state = SCAN_GROUND;
                else if (c == 0x1b)
                        sc->state = SCAN_STR_ESC;
                return 0;
        case SCAN_STR_ESC:
                if (c == '\\') {
                        sc->state = SCAN_GROUND; /* ST */
                        return 0;
                }
                return scan_esc(sc, c); /* a new sequence ends the string */
        default:                        /* SCAN_ESC_INTER */
                if (c == 0x1b)
                        sc->state = SCAN_ESC;
                else if (c >= 0x30 && c <= 0x7e)
                        sc->state = SCAN_GROUND;
                return 0;
        }
}

/* After a chunk that ends in ground: does it end inside a UTF-8 character?
 * A lead byte of an unfinished one is among the last 3. */
static void scan_utf8_tail(struct live_scan *sc, const unsigned char *b, size_t len)
{
        unsigned need = len >= 4 ? 0 : sc->u8_need;

        for (size_t i = len >= 4 ? len - 4 : 0; i < len; i++) {
                unsigned char c = b[i];

                if ((c & 0xc0) == 0x80)
                        need = need ? need - 1 : 0;
                else if (c >= 0xc2 && c <= 0xf4)
                        need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
                else
                        need = 0;
        }
        sc->u8_need = (unsigned char)need;
}

bool live_scan_busy(const struct live_scan *sc)
{
        return sc->state != SCAN_GROUND || sc->u8_need;
}

static int scan_csi(struct live_scan *sc, unsigned char c)
{
        if (c >= '0' && c <= '9') {
                if (sc->param < 100000)
                        sc->param = sc->param * 10 + (unsigned)(c - '0');
        } else if (c == ';') {
                sc->param = 0;
        } else if (c == '?' || c == '<' || c == '=' || c == '>') {
                sc->priv = true;
        } else if (c >= 0x40 && c <= 0x7e) {
                sc->state = SCAN_GROUND;
                return scan_final(sc, c);
        } else if (c == 0x1b) {
                sc->state = SCAN_ESC;
        } else if (c < 0x20 || c > 0x7e) {
                sc->state = SCAN_GROUND; /* cancelled */
        }
        return 0;
}

int live_scan_feed(struct live_scan *sc, const char *buf, size_t len)
{
        const unsigned char *p = (const unsigned char *)buf, *end = p + len;
        int seen = 0;

        while (p < end) {
                if (sc->state == SCAN_GROUND) {
                        const unsigned char *e = memchr(p, 0x1b, (size_t)(end - p));

                        if (!e) {
                                scan_utf8_tail(sc, p, (size_t)(end - p));
                                break;
                        }
                        sc->u8_need = 0;
                        sc->state = SCAN_ESC;
                        p = e + 1;
                        continue;
                }
                if (sc->state == SCAN_ESC)
                        seen |= scan_esc(sc, *p++);
                else if (sc->state == SCAN_CSI)
                        seen |= scan_csi(sc, *p++);
                else
                        seen |= scan_other(sc, *p++);
        }
        return seen;
}

/* The build's text (a stage, a unit's name from /proc argv) cleaned for
 * the terminal the one way (model/run.h), cut between characters. */
static void copy_clean(char *dst, size_t cap, const char *src)
{
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;

        if (src && run_append_utf8_lossy(&b, src, strlen(src), true) >= 0)
                copy_utf8(dst, cap, b.p, b.len);
        else
                dst[0] = '\0';
}

void live_view_from_sample(struct live_view *v, const struct sample *s)
{
        v->elapsed_s = s->elapsed_s;
        v->mem_avail_bytes = s->mem_avail_bytes;
        v->cg_mem_bytes = s->cg_mem_bytes;
        v->swap_used_bytes = s->swap_used_bytes;
        v->cpu_pct = s->cpu_pct;
        v->disk_avail_bytes = s->disk_avail_bytes;
        copy_clean(v->stage, sizeof(v->stage), s->stage);
        copy_clean(v->context, sizeof(v->context), s->context);
        copy_clean(v->top, sizeof(v->top), s->top_proc);
        /* running is largest first, space separated */
        copy_clean(v->unit, sizeof(v->unit), s->running);
        v->unit[strcspn(v->unit, " ")] = '\0';
        v->top_bytes = s->top_proc_bytes;
}

/* A byte count as "3.2G", "512M", "900K", "12B" in out; "?" when unknown. */
static const char *fmt_bytes(double b, char out[static 16])
{
        static const char units[] = "BKMGTP";
        int u = 0;

        if (!isfinite(b) || b < 0)
                return "?";
        while (b >= 1024 && u < 5) {
                b /= 1024;
                u++;
        }
        snprintf(out, 16, "%.*f%c", u >= 3 && b < 100 ? 1 : 0, b, units[u]);
        return out;
}

/* The display width of code point cp: 0 combining, 2 wide, else 1. */
static int cp_width(uint32_t cp)
{
        if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || cp == 0xfe0f)
                return 0;
        if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
            (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
            (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
            (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
            (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
                return 2;
        return 1;
}

/* src cut to cols display columns into out (cap bytes); invalid UTF-8 as
 * '?'. Returns the bytes written. */
static size_t cut_cols(const char *src, size_t len, int cols, char *out, size_t cap)
{
        const unsigned char *p = (const unsigned char *)src;
        size_t i = 0, o = 0;
        int used = 0;

        while (i < len) {
                uint32_t cp = '?';
                size_t k = run_utf8_decode(p + i, len - i, &cp);
                int w;

                if (k == 0) {
                        k = 1;
                        cp = '?';
                }
                w = cp_width(cp);
                if (used + w > cols || o + k >= cap)
                        break;
                if (cp == '?' && p[i] != '?')
                        out[o++] = '?';
                else
                        memcpy(out + o, p + i, k), o += k;
                used += w;
                i += k;
        }
        out[o] = '\0';
        return o;
}

static bool under_limits(const struct live_view *v, const struct live_limits *lim)
{
        return (isfinite(v->mem_avail_bytes) &&
                v->mem_avail_bytes < lim->near_oom_mb * 1024.0 * 1024.0) ||
               (isfinite(v->disk_avail_bytes) &&
                v->disk_avail_bytes < lim->low_disk_gb * 1024.0 * 1024.0 * 1024.0);
}

size_t live_format(const struct live_view *v, const struct live_limits *lim, int cols, bool color,
                   char *out, size_t cap)
{
        char text[512];
        unsigned long t =
            isfinite(v->elapsed_s) && v->elapsed_s > 0 ? (unsigned long)v->elapsed_s : 0;
        const char *on = !color ? "" : under_limits(v, lim) ? "\033[1;37;41m" : "\033[7m";
        const char *off = color ? "\033[0m" : "";
        size_t n, lo = strlen(on), lf = strlen(off);
        int k;

        if (cap < lo + lf + 1 || cols <= 0) {
                if (cap)
                        out[0] = '\0';
                return 0;
        }
        k = snprintf(
            text, sizeof(text),
            " %lu:%02lu:%02lu | mem %s avail (build %s) | swap %s | cpu %.0f%% | disk %s"
            " | %s%s%s%s%s%s%s%s%s ",
            t / 3600, t / 60 % 60, t % 60, fmt_bytes(v->mem_avail_bytes, (char[16]){0}),
            fmt_bytes(v->cg_mem_bytes, (char[16]){0}), fmt_bytes(v->swap_used_bytes, (char[16]){0}),
            isfinite(v->cpu_pct) ? v->cpu_pct : 0.0, fmt_bytes(v->disk_avail_bytes, (char[16]){0}),
            v->stage,
            !v->stage[0] && !v->context[0] ? "-"
            : v->stage[0] && v->context[0] ? ": "
                                           : "",
            v->context, v->unit[0] ? " | unit " : "", v->unit, v->top[0] ? " | top " : "", v->top,
            v->top[0] ? " " : "", v->top[0] ? fmt_bytes(v->top_bytes, (char[16]){0}) : "");
        n = k < 0 ? 0 : MIN((size_t)k, sizeof(text) - 1);
        memcpy(out, on, lo);
        n = lo + cut_cols(text, n, cols, out + lo, cap - lo - lf);
        memcpy(out + n, off, lf + 1);
        return n + lf;
}

struct live {
        int fd, rows, cols;
        bool color;
        struct live_limits lim;
        struct live_scan scan;
        bool shown;     /* the region is set, the line drawn */
        bool suspended; /* stopped (Ctrl-Z) */
        bool have, dirty;
        struct live_view view;
        double view_mono; /* when view was taken */
        double last_draw, quiet_until;
        char line[1024];
        char out[1200];
};

int live_new(int fd, const struct live_limits *lim, bool color, struct live **ret)
{
        _cleanup_free_ struct live *l = calloc(1, sizeof(*l));
        int e;

        if (!l)
                return -ENOMEM;
        e = tty_size(fd, &l->rows, &l->cols);
        if (e < 0)
                return e;
        l->fd = fd;
        l->lim = *lim;
        l->color = color;
        l->last_draw = -INFINITY;
        *ret = TAKE_PTR(l);
        return 0;
}

static void put(struct live *l, const char *fmt, ...) _printf_(2, 3);
static void put(struct live *l, const char *fmt, ...)
{
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vsnprintf(l->out, sizeof(l->out), fmt, ap);
        va_end(ap);

        if (k > 0 && (size_t)k < sizeof(l->out))
                (void)write_all(l->fd, l->out, (size_t)k);
}

/* Reserve the bottom row: an index, ESC D (the screen scrolls if the cursor is
 * there; unlike a newline it keeps the column, so a partial line of the
 * build's carries on), the region above it, the cursor back on its line. */
static void enter(struct live *l)
{
        if (l->rows < 3 || l->cols < 10)
                return;
        put(l, "\033D\0337\033[1;%dr\0338\033[1A", l->rows - 1);
        l->shown = true;
}

static void leave(struct live *l)
{
        if (!l->shown)
                return;
        put(l, "\0337\033[r\033[%d;1H\033[2K\0338", l->rows);
        l->shown = false;
}

static void draw(struct live *l, double now)
{
        struct live_view v = l->view;
        size_t n;
        int k;

        v.elapsed_s += now - l->view_mono;
        k = snprintf(l->out, sizeof(l->out), "\0337\033[%d;1H\033[2K", l->rows);
        if (k < 0 || (size_t)k >= sizeof(l->out))
                return;
        n = live_format(&v, &l->lim, l->cols, l->color, l->out + k, sizeof(l->out) - (size_t)k - 3);
        memcpy(l->out + (size_t)k + n, "\0338", 3);
        (void)write_all(l->fd, l->out, (size_t)k + n + 2);
        l->last_draw = now;
        l->dirty = false;
}

static bool safe(const struct live *l, double now)
{
        return !l->scan.alt && now >= l->quiet_until && !tty_raw(l->fd);
}

void live_update(struct live *l, double now)
{
        int rows, cols;

        if (!l || l->suspended || !l->have || now < live_deadline(l))
                return;
        /* SIGWINCH goes to the terminal's foreground group: the build's
         * when it has the terminal, so the size is asked here too. */
        /* never inside the build's unfinished escape sequence or character:
         * the next try is a moment later */
        if (live_scan_busy(&l->scan)) {
                l->last_draw = now;
                return;
        }
        if (tty_size(l->fd, &rows, &cols) == 0 && (rows != l->rows || cols != l->cols))
                live_resize(l, now);
        if (!safe(l, now)) {
                leave(l);
                l->last_draw = now;
                return;
        }
        if (!l->shown)
                enter(l);
        if (l->shown)
                draw(l, now);
}

double live_deadline(const struct live *l)
{
        if (!l)
                return INFINITY;
        return l->last_draw + (l->dirty && !l->scan.alt ? LIVE_MIN_GAP : LIVE_IDLE);
}

void live_sample(struct live *l, const struct sample *s, double now)
{
        if (!l)
                return;
        live_view_from_sample(&l->view, s);
        l->view_mono = now;
        l->have = l->dirty = true;
        live_update(l, now);
}

void live_output(struct live *l, const char *buf, size_t len, double now)
{
        bool busy = live_scan_busy(&l->scan);
        int seen = live_scan_feed(&l->scan, buf, len);

        if (seen & LIVE_SCAN_UP)
                l->quiet_until = now + LIVE_QUIET;
        /* Step aside before the build moves the cursor, or resets the
         * region (its lines would scroll copies of ours up): the next
         * update sets the region again. Not inside its escape sequence. */
        if (l->shown && !busy && (l->scan.alt || (seen & (LIVE_SCAN_UP | LIVE_SCAN_REGION))))
                leave(l);
}

void live_resize(struct live *l, double now)
{
        int old;

        /* (live_update comes back to it once the build's sequence ends) */
        if (!l || live_scan_busy(&l->scan))
                return;
        old = l->rows;
        if (tty_size(l->fd, &l->rows, &l->cols) < 0)
                return;
        if (l->shown) {
                /* The old line, if it is still on screen, goes. */
                if (old <= l->rows)
                        put(l, "\0337\033[%d;1H\033[2K\0338", old);
                /* The terminal took the region down with the resize (tmux
                 * and xterm do), so the build's lines may have reached the
                 * bottom row since: set it up again as on entry, which
                 * lifts a cursor found there back into the region (unless
                 * the screen is now too small for it). */
                put(l, "\0337\033[r\0338");
                l->shown = false;
                enter(l);
                if (l->shown)
                        draw(l, now);
        }
}

void live_suspend(struct live *l)
{
        if (!l)
                return;
        leave(l);
        l->suspended = true;
}

void live_resume(struct live *l, double now)
{
        if (!l)
                return;
        l->suspended = false;
        l->last_draw = -INFINITY;
        live_update(l, now);
}

void live_free(struct live *l)
{
        if (!l)
                return;
        leave(l);
        free(l);
}
