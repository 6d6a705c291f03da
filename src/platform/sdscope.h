/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A transient systemd scope with Delegate=yes for a process, asked of the
 * system manager (user false) or of the user's own manager (user@UID, on
 * the user bus), over D-Bus with libsystemd's sd-bus. libsystemd is loaded
 * with dlopen on first use: where it is absent this fails with -ELIBACC
 * and nothing else changes. */

/* Start unit (a name ending in ".scope") holding pid, delegated, and wait
 * (at most about 20 s) for systemd's JobRemoved of its job. Returns 0 once
 * the job is done, -ELIBACC without libsystemd, -ENOENT/-ECONNREFUSED
 * without the bus, -EACCES when the manager refuses, -ETIMEDOUT, -EIO when
 * the job ended other than "done", -errno. why (NUL-terminated, cut to
 * cap) says in words what failed. */
int sdscope_start(bool user, const char *unit, pid_t pid, char *why, size_t cap);
