/* SPDX-License-Identifier: MIT */
#include "model/unitname.h"

#include <stdbool.h>
#include <string.h>

#include "model/units.h"

/* name without its leading "./" and "../" parts. */
static const char *strip_up(const char *name)
{
        for (;;) {
                if (strncmp(name, "./", 2) == 0)
                        name += 2;
                else if (strncmp(name, "../", 3) == 0)
                        name += 3;
                else if (name[0] == '/' && name[1])
                        name++;
                else
                        return name;
        }
}

/* other is tail, or ends with "/" tail. */
static bool ends_with(const char *other, const char *tail)
{
        size_t lo = strlen(other), lt = strlen(tail);

        if (lo < lt || strcmp(other + lo - lt, tail) != 0)
                return false;
        return lo == lt || other[lo - lt - 1] == '/';
}

static bool unique(const struct unit *rows, size_t n, const char *name, const char *tail)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(rows[i].name, name) != 0 && ends_with(strip_up(rows[i].name), tail))
                        return false;
        return true;
}

const char *unitname_short(const struct unit *rows, size_t n, const char *name)
{
        const char *full = strip_up(name), *tail = full + strlen(full);

        /* a link's output or a name without a path is its own tail */
        while (tail > full) {
                const char *p = tail - 1;

                while (p > full && p[-1] != '/')
                        p--;
                if (p == tail - 1 && *p == '/') { /* a trailing slash: keep going */
                        tail = p;
                        continue;
                }
                tail = p;
                if (unique(rows, n, name, tail))
                        return tail;
        }
        return full;
}
