/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The terminal on one fd, for run --live's status line. */

/* fd is a terminal a status line may be drawn on: isatty, and TERM set
 * and not "dumb". */
bool tty_usable(int fd);
/* The size of the terminal on fd (TIOCGWINSZ). Returns 0, or -errno
 * (-EINVAL for a zero size); *rows and *cols untouched on failure. */
int tty_size(int fd, int *ret_rows, int *ret_cols);
/* Someone has the terminal in raw mode (ICANON off). false when unknown. */
bool tty_raw(int fd);
