/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A transient systemd scope with Delegate=yes for a process, from the
 * system manager or (user) the user's own, over sd-bus; libsystemd is
 * dlopen'ed on first use, so where it is absent only this fails. */

/* Start unit (a "*.scope") holding pid and wait (about 20 s at most) for
 * its job's JobRemoved. 0 once the job is done, -ELIBACC without
 * libsystemd, -ENOENT/-ECONNREFUSED without the bus, -EACCES when refused,
 * -ETIMEDOUT, -EIO when the job ended other than "done", -errno; why says
 * in words what failed. */
int sdscope_start(bool user, const char *unit, pid_t pid, char *why, size_t cap);
