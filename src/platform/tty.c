/* SPDX-License-Identifier: MIT */
#include "platform/tty.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

bool tty_usable(int fd)
{
        const char *term = getenv("TERM");

        return isatty(fd) && term && *term && strcmp(term, "dumb") != 0;
}

int tty_size(int fd, int *ret_rows, int *ret_cols)
{
        struct winsize ws;

        if (ioctl(fd, TIOCGWINSZ, &ws) < 0)
                return -errno;
        if (ws.ws_row == 0 || ws.ws_col == 0)
                return -EINVAL;
        *ret_rows = ws.ws_row;
        *ret_cols = ws.ws_col;
        return 0;
}

bool tty_raw(int fd)
{
        struct termios t;

        return tcgetattr(fd, &t) == 0 && !(t.c_lflag & ICANON);
}
