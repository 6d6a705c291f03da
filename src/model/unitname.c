/* SPDX-License-Identifier: MIT */
#include "model/unitname.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/units.h"

/* name without its leading "./", "../" and "/" parts. */
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

/* The " [tag]" a name ends with (units.c names the units of one source
 * built several ways so), or its end. */
static const char *tag_of(const char *name)
{
        size_t n = strlen(name);
        const char *t;

        if (n < 4 || name[n - 1] != ']')
                return name + n;
        t = strstr(name, " [");
        while (t) {
                const char *next = strstr(t + 1, " [");

                if (!next)
                        return t;
                t = next;
        }
        return name + n;
}

/* The path of other (its tag cut off) is tail, or ends with "/" tail, and
 * its tag is tag. */
static bool same_tail(const char *other, const char *tail, size_t lt, const char *tag)
{
        const char *p = strip_up(other), *ot = tag_of(p);
        size_t lo = (size_t)(ot - p);

        if (strcmp(ot, tag) != 0 || lo < lt || memcmp(p + lo - lt, tail, lt) != 0)
                return false;
        return lo == lt || p[lo - lt - 1] == '/';
}

static bool unique(const struct unit *rows, size_t n, const char *name, const char *tail,
                   size_t lt, const char *tag)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(rows[i].name, name) != 0 && same_tail(rows[i].name, tail, lt, tag))
                        return false;
        return true;
}

const char *unitname_short(const struct unit *rows, size_t n, const char *name, char *buf,
                           size_t cap)
{
        const char *full = strip_up(name), *tag = tag_of(full), *tail = tag;

        while (tail > full) {
                const char *p = tail - 1;

                while (p > full && p[-1] != '/')
                        p--;
                tail = p;
                if (*p != '/' && unique(rows, n, name, tail, (size_t)(tag - tail), tag))
                        break;
        }
        if (cap == 0)
                return "";
        if (snprintf(buf, cap, "%.*s%s", (int)(tag - tail), tail, tag) >= (int)cap)
                buf[cap - 1] = '\0'; /* the caller's buffer holds a whole name */
        return buf;
}
