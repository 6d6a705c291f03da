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
        static const struct {
                int c;
                enum top_key key;
        } keys[] = {
            {KEY_UP, TOP_KEY_UP},  {'k', TOP_KEY_UP},          {KEY_DOWN, TOP_KEY_DOWN},
            {'j', TOP_KEY_DOWN},   {KEY_ENTER, TOP_KEY_ENTER}, {'\n', TOP_KEY_ENTER},
            {'\r', TOP_KEY_ENTER}, {27, TOP_KEY_BACK},         {KEY_BACKSPACE, TOP_KEY_BACK},
            {127, TOP_KEY_BACK},   {8, TOP_KEY_BACK},          {KEY_LEFT, TOP_KEY_BACK},
            {'q', TOP_KEY_QUIT},   {'Q', TOP_KEY_QUIT},        {KEY_RESIZE, TOP_KEY_RESIZE},
        };
        int c;

        timeout(timeout_ms);
        c = getch();
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (keys[i].c == c)
                        return keys[i].key;
        return TOP_KEY_NONE;
}
