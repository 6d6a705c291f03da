/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/units.h"

/* Resolve a compiler's source argument src against its cwd, lexically
 * (no file system access: "a/./b/../c" is "a/c", ".." at the root stays
 * there) into an absolute path in out (cap bytes). cwd may be NULL when
 * src is absolute. Returns its length, -ENOENT when src is relative and
 * cwd is not an absolute path (unread), -ENAMETOOLONG when it does not
 * fit, -EINVAL for an empty src. */
int unitname_resolve(const char *cwd, const char *src, char *out, size_t cap);

/* The names the summary and the report show (issue 26), over one table's
 * rows: a unit whose path is known (units.h) is shown by it relative to
 * the project, root (the run's cwd) or, for a path outside it, the longest
 * common directory of the rows' paths outside it; a unit whose path is not
 * known, by its name without the "./", "../" and "/" it starts with. Of
 * that, the shortest tail ("cgroup.c", "platform/cgroup.c") that no other
 * file of the rows with the same " [tag]" ends with, the tag kept: two
 * files never share a name, and one file reached two ways ("../src/a.c"
 * from /p/build, "src/a.c" from /p) is one name. The stored tables
 * (units.csv, summary.json) keep the name as given and the path. */
struct unitnames {
        const struct unit *rows; /* not owned */
        size_t n;
        char root[UNITS_PATH_MAX + 1];   /* normalised; "" none */
        char common[UNITS_PATH_MAX + 1]; /* "" none */
};

#define UNITNAME_SHORT_MAX (UNITS_PATH_MAX + UNITS_TAG_MAX + 4) /* without NUL */

/* root may be NULL or relative (then none). Never fails. */
void unitnames_init(struct unitnames *un, const struct unit *rows, size_t n, const char *root);
/* row's name as shown, written into buf (cap bytes; UNITNAME_SHORT_MAX + 1
 * holds any), which is returned. row need not be one of the rows (a copy
 * from units_top() is fine). */
const char *unitnames_short(const struct unitnames *un, const struct unit *row, char *buf,
                            size_t cap);
