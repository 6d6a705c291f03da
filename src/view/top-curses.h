/* SPDX-License-Identifier: MIT */
#pragma once

/* The ncurses side of `buildtel top`: draw a text frame (out/top.h) on the
 * screen and read one key. Nothing here knows what a run is. */

enum top_key {
        TOP_KEY_NONE,
        TOP_KEY_UP,
        TOP_KEY_DOWN,
        TOP_KEY_ENTER,
        TOP_KEY_BACK,
        TOP_KEY_QUIT,
        TOP_KEY_RESIZE,
};

/* Start curses (alternate screen, no echo, keypad); colour only without
 * NO_COLOR. Returns 0 or -EIO. */
int top_curses_begin(void);
/* Restore the terminal; safe to call twice. */
void top_curses_end(void);
/* The screen's size. */
void top_curses_size(int *cols, int *lines);
/* Draw frame (lines of text), line hl (-1: none) highlighted. */
void top_curses_draw(const char *frame, int hl);
/* Wait up to timeout_ms for a key. */
enum top_key top_curses_key(int timeout_ms);
