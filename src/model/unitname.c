/* SPDX-License-Identifier: MIT */
#include "model/unitname.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/units.h"

/* Append the components of p[0..n) to out[0..*len) (an absolute path,
 * "" for the root), "." skipped and ".." taking one off. */
static int put_parts(const char *p, size_t n, char *out, size_t cap, size_t *len)
{
        const char *end = p + n;

        while (p < end) {
                const char *slash = memchr(p, '/', (size_t)(end - p));
                size_t k = (size_t)((slash ? slash : end) - p);

                if (k == 2 && p[0] == '.' && p[1] == '.') {
                        while (*len > 0 && out[*len - 1] != '/')
                                (*len)--;
                        if (*len > 0)
                                (*len)--; /* the slash */
                } else if (k > 0 && !(k == 1 && p[0] == '.')) {
                        if (*len + 1 + k + 1 > cap)
                                return -ENAMETOOLONG;
                        out[(*len)++] = '/';
                        memcpy(out + *len, p, k);
                        *len += k;
                }
                p += k + (slash ? 1 : 0);
        }
        return 0;
}

int unitname_resolve(const char *cwd, const char *src, char *out, size_t cap)
{
        size_t len = 0;

        if (!src || !src[0] || cap < 2)
                return -EINVAL;
        if (src[0] != '/' && (!cwd || cwd[0] != '/'))
                return -ENOENT;
        if ((src[0] != '/' && put_parts(cwd, strlen(cwd), out, cap, &len) < 0) ||
            put_parts(src, strlen(src), out, cap, &len) < 0)
                return -ENAMETOOLONG; /* put_parts' one failure */
        if (len == 0)
                out[len++] = '/';
        out[len] = '\0';
        return (int)len;
}

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

        if (n >= 4 && name[n - 1] == ']')
                for (size_t i = n - 1; i-- > 0;)
                        if (name[i] == ' ' && name[i + 1] == '[')
                                return name + i;
        return name + n;
}

/* dir is a directory above path (or path itself): the part of path below it. */
static const char *below(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        if (n == 0 || strncmp(path, dir, n) != 0)
                return NULL;
        if (n == 1) /* "/" */
                return path + 1;
        return path[n] == '/' ? path + n + 1 : NULL;
}

/* Shorten common to the directory it shares with path. */
static void share_dir(char *common, const char *path)
{
        size_t i = 0, last = 0;

        while (common[i] && common[i] == path[i]) {
                if (common[i] == '/')
                        last = i;
                i++;
        }
        if (common[i] == '\0' && path[i] == '/')
                return;                 /* common is a directory above path */
        common[last ? last : 1] = '\0'; /* "/" at least */
}

void unitnames_init(struct unitnames *un, const struct unit *rows, size_t n, const char *root)
{
        char *slash;

        *un = (struct unitnames){.rows = rows, .n = n};
        if (root && root[0] == '/' && unitname_resolve(NULL, root, un->root, sizeof(un->root)) < 0)
                un->root[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                const char *p = rows[i].path;

                if (p[0] != '/' || below(p, un->root))
                        continue;
                if (!un->common[0]) {
                        snprintf(un->common, sizeof(un->common), "%s", p); /* same size */
                        slash = strrchr(un->common, '/');
                        slash[slash == un->common ? 1 : 0] = '\0';
                } else {
                        share_dir(un->common, p);
                }
        }
}

/* The path a row is shown by, before shortening: its resolved path below
 * the project root or the common directory, or its name as given without
 * "./", "../" and "/" (and without its tag: the end is *ret_end). */
static const char *rel_of(const struct unitnames *un, const struct unit *row, const char **ret_end)
{
        const char *p = row->path, *r;

        if (p[0] == '/') {
                r = below(p, un->root);
                if (!r)
                        r = below(p, un->common);
                if (!r)
                        r = p + 1;
                *ret_end = r + strlen(r);
                return r;
        }
        r = strip_up(row->name);
        *ret_end = tag_of(r);
        return r;
}

/* Whether a and b are one file: the same resolved path, or (a path not
 * known) the same name. */
static bool same_file(const struct unit *a, const struct unit *b)
{
        if (a->path[0] && b->path[0])
                return strcmp(a->path, b->path) == 0 &&
                       strcmp(tag_of(a->name), tag_of(b->name)) == 0;
        return strcmp(a->name, b->name) == 0;
}

/* Whether other is shown by a path that is tail or (unless whole) ends
 * with "/" tail, with the tag tag. */
static bool same_tail(const struct unitnames *un, const struct unit *other, const char *tail,
                      size_t lt, const char *tag, bool whole)
{
        const char *end, *p = rel_of(un, other, &end);
        size_t lo = (size_t)(end - p);

        if (strcmp(tag_of(other->name), tag) != 0 || lo < lt || memcmp(p + lo - lt, tail, lt) != 0)
                return false;
        return lo == lt || (!whole && p[lo - lt - 1] == '/');
}

static bool unique(const struct unitnames *un, const struct unit *row, const char *tail, size_t lt,
                   const char *tag, bool whole)
{
        for (size_t i = 0; i < un->n; i++)
                if (!same_file(&un->rows[i], row) &&
                    same_tail(un, &un->rows[i], tail, lt, tag, whole))
                        return false;
        return true;
}

const char *unitnames_short(const struct unitnames *un, const struct unit *row, char *buf,
                            size_t cap)
{
        const char *end, *full = rel_of(un, row, &end), *tag = tag_of(row->name), *tail = end;

        while (tail > full) {
                const char *p = tail - 1;

                while (p > full && p[-1] != '/')
                        p--;
                tail = p;
                if (*p != '/' && unique(un, row, tail, (size_t)(end - tail), tag, false))
                        break;
        }
        /* Still shared when whole (src/a.c below the project and src/a.c
         * below the common directory outside it; not a.c and src/a.c, where
         * a.c is the project's own): then the whole path. */
        if (tail == full && !unique(un, row, tail, (size_t)(end - tail), tag, true)) {
                full = tail = row->path[0] == '/' ? row->path : row->name;
                end = row->path[0] == '/' ? tail + strlen(tail) : tag_of(tail);
        }
        if (cap == 0)
                return "";
        if (snprintf(buf, cap, "%.*s%s", (int)(end - tail), tail, tag) >= (int)cap)
                buf[cap - 1] = '\0'; /* the caller's buffer holds a whole name */
        return buf;
}
