/* SPDX-License-Identifier: MIT */
#include "view/top-curses.h"

#include <curses.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool active;

int top_curses_begin(void)
{
        if (!initscr())
                return -EIO;
        active = true;
        cbreak();
        noecho();
        keypad(stdscr, TRUE);
        curs_set(0);
        set_escdelay(50);
        if (!getenv("NO_COLOR") && has_colors()) {
                start_color();
                use_default_colors();
        }
        return 0;
}

void top_curses_end(void)
{
        if (!active)
                return;
        active = false;
        endwin();
}

void top_curses_size(int *cols, int *lines)
{
        *cols = COLS;
        *lines = LINES;
}

void top_curses_draw(const char *frame, int hl)
{
        int y = 0;

        erase();
        for (const char *p = frame; *p && y < LINES; y++) {
                const char *nl = strchr(p, '\n');
                int len = nl ? (int)(nl - p) : (int)strlen(p);

                if (y == hl)
                        attron(A_REVERSE);
                mvaddnstr(y, 0, p, len);
                if (y == hl)
                        attroff(A_REVERSE);
                p = nl ? nl + 1 : p + len;
        }
        refresh();
}

enum top_key top_curses_key(int timeout_ms)
{
        int c;

        timeout(timeout_ms);
        c = getch();
        switch (c) {
        case KEY_UP:
        case 'k':
                return TOP_KEY_UP;
        case KEY_DOWN:
        case 'j':
                return TOP_KEY_DOWN;
        case KEY_ENTER:
        case '\n':
        case '\r':
                return TOP_KEY_ENTER;
        case 27:
        case KEY_BACKSPACE:
        case 127:
        case 8:
        case KEY_LEFT:
                return TOP_KEY_BACK;
        case 'q':
        case 'Q':
                return TOP_KEY_QUIT;
        case KEY_RESIZE:
                return TOP_KEY_RESIZE;
        default:
                return TOP_KEY_NONE;
        }
}
