/* SPDX-License-Identifier: MIT */
#include "model/jobname.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/dbuf.h"
#include "util/util.h"

#define PART_MAX 32      /* each name of a derived job */
#define FILE_PART_MAX 64 /* the job's own part of a file name */

static const char *value(jobname_lookup_fn lookup, void *userdata, const char *name)
{
        const char *v = lookup ? lookup(userdata, name) : NULL;

        return v && *v ? v : NULL;
}

/* Append s, control bytes as '_', stopping at JOBNAME_MAX bytes in all
 * (before a UTF-8 sequence that would cross it). */
static int put_given(struct dbuf *b, const char *s)
{
        for (size_t i = 0; s[i] && b->len < JOBNAME_MAX; i++) {
                unsigned char c = (unsigned char)s[i];
                size_t seq = 1;

                if (c >= 0xc0) /* a lead byte: its sequence fits whole or not at all */
                        seq = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
                if (b->len + seq > JOBNAME_MAX)
                        break;
                if (c < 0x20 || c == 0x7f)
                        c = '_';
                if (dbuf_append(b, (const char *)&c, 1) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static bool safe_byte(unsigned char c, bool plus)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-' || (plus && c == '+');
}

/* The last path component of s (after any trailing '/'), filesystem-safe,
 * at most PART_MAX bytes; "_" when empty. */
static int put_base(struct dbuf *b, const char *s)
{
        size_t end = s ? strlen(s) : 0, start, n = 0;

        while (end > 1 && s[end - 1] == '/')
                end--;
        start = end;
        while (start > 0 && s[start - 1] != '/')
                start--;
        for (size_t i = start; i < end && n < PART_MAX; i++, n++) {
                char c = safe_byte((unsigned char)s[i], true) ? s[i] : '_';

                if (dbuf_append(b, &c, 1) < 0)
                        return -ENOMEM;
        }
        return n ? 0 : dbuf_append(b, "_", 1);
}

static int derive(char *const *argv, const char *cwd, struct dbuf *b)
{
        uint64_t h = fnv1a(FNV1A_OFFSET, cwd ? cwd : "", cwd ? strlen(cwd) + 1 : 1);

        for (size_t i = 0; argv && argv[i]; i++)
                h = fnv1a(h, argv[i], strlen(argv[i]) + 1);
        if (put_base(b, cwd) < 0 || dbuf_append(b, ":", 1) < 0 ||
            put_base(b, argv ? argv[0] : NULL) < 0)
                return -ENOMEM;
        return dbuf_printf(b, "-%08x", (unsigned)(h ^ (h >> 32)));
}

int jobname_get(const char *option, char *const *argv, const char *cwd, jobname_lookup_fn lookup,
                void *userdata, char **ret)
{
        static const char *const ci[][2] = {{"GITHUB_WORKFLOW", "GITHUB_JOB"},
                                            {"CI_PROJECT_PATH", "CI_JOB_NAME"}};
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;
        const char *a = option && *option ? option : value(lookup, userdata, "BUILDTEL_JOB");
        const char *c = NULL;
        int r;

        for (size_t i = 0; !a && i < ARRAY_SIZE(ci); i++) {
                a = value(lookup, userdata, ci[i][0]);
                c = value(lookup, userdata, ci[i][1]);
                if (!a || !c)
                        a = c = NULL;
        }
        if (a) {
                r = put_given(&b, a);
                if (r >= 0 && c)
                        r = put_given(&b, "/") < 0 ? -ENOMEM : put_given(&b, c);
        } else {
                r = derive(argv, cwd, &b);
        }
        if (r >= 0 && !b.p)
                r = dbuf_append(&b, "", 0); /* NUL-terminated even when empty */
        if (r < 0)
                return r;
        *ret = TAKE_PTR(b.p);
        return 0;
}

int jobname_file_part(const char *job, char *buf, size_t size)
{
        size_t n = 0;
        bool changed = false;
        uint64_t h;
        int k;

        if (!job || !*job)
                return -EINVAL;
        if (size < JOBNAME_FILE_SIZE)
                return -ENOBUFS;
        for (size_t i = 0; job[i]; i++) {
                unsigned char c = (unsigned char)job[i];
                bool ok = safe_byte(c, false) && !(n == 0 && c == '.');

                if (n == FILE_PART_MAX) {
                        changed = true;
                        break;
                }
                buf[n++] = ok ? (char)c : '_';
                changed = changed || !ok;
        }
        buf[n] = '\0';
        if (!changed)
                return (int)n;
        h = fnv1a(FNV1A_OFFSET, job, strlen(job));
        k = snprintf(buf + n, size - n, "-%08x", (unsigned)(h ^ (h >> 32)));
        if (k < 0 || (size_t)k >= size - n)
                return -ENOBUFS;
        return (int)n + k;
}
