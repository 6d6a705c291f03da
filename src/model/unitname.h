/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

struct unit;

/* A unit's name as the summary and the report show it (issue 26): the
 * build dir's "./" and "../" prefixes dropped, then the shortest tail of
 * its path ("cgroup.c", "platform/cgroup.c") that no other unit of rows[]
 * with the same " [tag]" ends with, the tag kept. Written into buf (cap
 * bytes; UNITS_NAME_MAX + 1 holds any), which is returned. The stored
 * tables (units.csv, summary.json) keep the full name. */
const char *unitname_short(const struct unit *rows, size_t n, const char *name, char *buf,
                           size_t cap);
