/* SPDX-License-Identifier: MIT */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

struct stat;

/* FNV-1a over len bytes of s, from h (FNV1A_OFFSET to start): the one hash
 * of names and keys (job ids, BuildKit vertices and stages, span ids). */
#define FNV1A_OFFSET 0xcbf29ce484222325ULL
static inline uint64_t fnv1a(uint64_t h, const void *s, size_t len)
{
        const unsigned char *p = s;

        for (size_t i = 0; i < len; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

/* Cursor parsing over a buffer that is NOT NUL-terminated. Each function
 * advances *cur past what it consumed and returns 0, or returns -EINVAL /
 * -ERANGE and leaves *cur and *ret untouched. */
/* Inline: the log parsers call it on most lines (a call per number was 10%
 * of bench-parse). */
static inline int parse_u64(const char **cur, const char *end, uint64_t *ret)
{
        const char *p = *cur, *fast;
        uint64_t v = 0;

        if (p >= end || !(*p >= '0' && *p <= '9'))
                return -EINVAL;
        /* 19 digits never overflow: no bound check for them. */
        fast = end - p > 19 ? p + 19 : end;
        for (; p < fast && (*p >= '0' && *p <= '9'); p++)
                v = v * 10 + (unsigned)(*p - '0');
        for (; p < end && (*p >= '0' && *p <= '9'); p++) {
                unsigned d = (unsigned)(*p - '0');
                /* Constant bounds: no division per digit (a hot path of the log parsers). */
                if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
                        return -ERANGE;
                v = v * 10 + d;
        }
        *cur = p;
        *ret = v;
        return 0;
}

static inline bool is_blank(char c)
{
        return c == ' ' || c == '\t';
}

static inline bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* The end of the line p is in: its '\n', or end. */
static inline const char *line_end(const char *p, const char *end)
{
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        return nl ? nl : end;
}

static inline const char *next_line(const char *eol, const char *end)
{
        return eol < end ? eol + 1 : end;
}

/* A number must end at a blank, a newline or the end of the buffer:
 * "12x" is junk, not 12. */
static inline bool at_field_end(const char *p, const char *end)
{
        return p >= end || *p == ' ' || *p == '\t' || *p == '\n';
}

/* Saturating: these are counters that only a corrupt file would overflow,
 * and a wrong sum is worse than a pinned one. */
static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int parse_i64(const char **cur, const char *end, int64_t *ret);
/* A plain decimal number: [-]digits[.digits]; no exponent, no inf/nan. */
int parse_double(const char **cur, const char *end, double *ret);
void skip_spaces(const char **cur, const char *end);
/* True if [cur,end) starts with the literal s; advances past it when so. */
bool skip_prefix(const char **cur, const char *end, const char *s);

/* Parse a whole NUL-terminated string as a number (for options). */
int parse_double_str(const char *s, double *ret);
int parse_u64_str(const char *s, uint64_t *ret);
/* "4G", "512M", "1.5GiB", "1000000" -> bytes. */
int parse_size_str(const char *s, uint64_t *ret);

/* qsort() order of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Room in the array *p (*cap items of size bytes) for item n: doubled,
 * from first, when full. 0, or -ENOMEM with *p and *cap unchanged. */
int array_grow(void *p, size_t *cap, size_t n, size_t size, size_t first);

/* write() all of buf, retrying on EINTR and short writes; waits with poll()
 * on EAGAIN. Returns 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);

/* The one bounded string copy: src[0..len) into dst (cap bytes), always
 * NUL-terminated; when it does not fit, cut to cap - 1 bytes and then back
 * to a UTF-8 character start, so a cut never leaves half a character. src
 * NULL copies "". Returns the bytes copied. */
size_t copy_utf8(char *dst, size_t cap, const char *src, size_t len);
/* The same for a NUL-terminated src (NULL: ""). */
size_t copy_utf8_str(char *dst, size_t cap, const char *src);
/* The n bytes at p as 2n lowercase hex digits and a NUL into out. */
void hex_encode(char *out, const uint8_t *p, size_t n);
/* The value of the hex digit c (either case), or -1. */
int hex_value(char c);

/* read() into buf until len bytes or end of file, retrying EINTR. Returns
 * the bytes read (< len only at end of file) or -errno. */
ssize_t read_full(int fd, void *buf, size_t len);

/* The whole of a kept-open file in one pread at offset 0 (hot /proc and
 * cgroup files are consistent only within one read): into *buf of *cap
 * bytes, doubled (up to max) and read again while a read comes back full.
 * Returns the length, -EFBIG when even max came back full, -ENOMEM or
 * -errno. *buf and *cap stay valid on failure. */
ssize_t pread_whole(int fd, char **buf, size_t *cap, size_t max);

/* Read a whole small regular file relative to dirfd into a malloc'd,
 * NUL-terminated buffer (at most max bytes; opened without blocking: a
 * FIFO or a device is -EINVAL). Caller frees *ret. Returns 0 or -errno. */
int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len);

/* opendir() of path relative to dirfd ("." for dirfd itself), on a fresh
 * fd so the caller's fd stays usable. Returns the stream, or NULL with
 * errno set. Close it with closedir(). */
DIR *opendir_at(int dirfd, const char *path);

/* mkdir -p with the given mode. Returns 0 or -errno. */
int mkdir_p(const char *path, mode_t mode);

/* One directory (its parent must exist) that only we can write: created 0700
 * when missing; an existing one must be a real directory (not a symlink)
 * owned by our euid and not group- or world-writable. Returns 0, -ENOTDIR,
 * -EPERM (someone else's, or writable by others) or another -errno. */
int mkdir_private(const char *path);

/* A file a user named as input (--metadata-file, --ninja-log): opened
 * O_NONBLOCK, it must be a regular file (-ESPIPE for a FIFO, a terminal,
 * /dev/stdout; -EISDIR), and at most max bytes from offset on are read
 * (-EFBIG beyond). On success *ret (NUL-terminated, free()) holds what is
 * there at the open. Returns 0 or -errno. */
int read_regular_file(const char *path, uint64_t offset, size_t max, char **ret, size_t *ret_len);

/* The same file opened for a read in chunks (a log too big to hold): the
 * fd, its fstat in *ret_st; -EISDIR, -ESPIPE (not a regular file) or
 * -errno. */
int open_regular_file(const char *path, struct stat *ret_st);

/* [from, to) of fd read chunk bytes at a time into one buffer, each piece
 * given to fn (which returns 0 or -errno, and stops the read). A file cut
 * short meanwhile ends early. Returns 0, fn's error or -errno. */
int pread_chunks(int fd, uint64_t from, uint64_t to, size_t chunk,
                 int (*fn)(void *userdata, const char *buf, size_t len), void *userdata);

/* Is a SIGINT, SIGTERM, SIGHUP or SIGQUIT waiting (blocked for a signalfd,
 * not yet read)? Final exports stop waiting on the network when one is:
 * the user wants out, with the build's status. */
bool stop_signal_pending(void);

/* A run file is one buildtel names itself in a log directory, which
 * another user may share (/tmp): never written into once it exists, only
 * made new. runfile_check() is the rule: the directory must not be
 * writable by others, nor by a group other than our own user private group
 * (gid = uid), unless sticky (-EPERM), and what is at name,
 * not followed, must be nothing (0) or a regular file of our euid (1: a
 * rerun of the run id, replaced); anything else, another user's file, a
 * symlink or a FIFO, is -EEXIST. Or another -errno. */
int runfile_check(int dirfd, const char *name);
/* The run file path made new for a stream (the CSV, the build log) under
 * runfile_check(): a file of ours there is unlinked, then O_CREAT|O_EXCL|
 * O_NOFOLLOW (which never opens, so never waits on, what is there), mode
 * 0600, flags O_WRONLY or O_RDWR. Returns the fd or -errno. */
int runfile_create(const char *path, int flags);
/* Rename the file from over the run file to under runfile_check() (the
 * arguments are renameat()'s); when to is absent, with RENAME_NOREPLACE (a
 * name planted meanwhile: -EEXIST). Returns 0 or -errno. */
int runfile_renameat(int fromfd, const char *from, int dirfd, const char *to);
/* The directory of path opened (O_DIRECTORY; "x" lives in ".", "/x" in
 * "/"), and in *ret_name the last component (a pointer into path, "" for
 * "x/"). Returns the fd or -errno. */
int open_parent(const char *path, const char **ret_name);
/* Why a run file was not written, in words: runfile_check()'s -EEXIST and
 * -EPERM said, else strerror(-e). Static; never NULL. */
const char *runfile_strerror(int e);

/* buildtel's state directory joined with name (malloc'd): the one XDG rule,
 * $XDG_STATE_HOME/buildtel/NAME when XDG_STATE_HOME is absolute, else
 * $HOME/.local/state/buildtel/NAME when HOME is; NULL when neither is, when
 * the path would not fit PATH_MAX, or on ENOMEM. */
char *state_path(const char *name);
/* $TMPDIR/buildtel-UID/name: where a run's files and history go when
 * state_path()'s cannot be written (malloc'd; NULL on ENOMEM). */
char *tmp_state_path(const char *name);
/* For reading: state_path(name), or when it does not exist the
 * tmp_state_path() one that does, in a directory of ours only we may
 * write. malloc'd; NULL as state_path(). */
char *state_read_path(const char *name);

/* CLOCK_REALTIME / CLOCK_MONOTONIC as seconds. */
double now_realtime(void);
double now_monotonic(void);

/* Format epoch seconds as ISO 8601 UTC with milliseconds:
 * "2026-11-29T15:40:20.123Z". buf must hold 64 bytes. Returns 0, or
 * -ERANGE with buf "" for what has no 4-digit year (before 0000-01-01, from
 * 10000-01-01 on), NAN and the infinities. */
int format_iso8601(double epoch, char buf[static 64]);

/* The two ways a duration is written, one per purpose:
 * - FMT_DURATION_EXACT, for summaries and reports, where the figure is read:
 *   rounded to the second, seconds always shown: "12.3s", "4m05s",
 *   "1h02m03s"; "?" when unknown.
 *   `status` too, whose column must read as the summary does.
 * - FMT_DURATION_COMPACT, for table columns (history, inspect, top):
 *   truncated like a clock (never shows more time than passed), seconds
 *   left out from an hour on: "12.3s", "4m05s", "1h02m"; "-" when unknown.
 * Unknown: NAN, negative, infinite, or 1e12 s and more. */
/* A size in binary units to three significant digits, the one spelling
 * of every text surface (issue 35): "512 B", "1.50 KiB", "488 MiB",
 * "1.32 GiB", "23.1 GiB"; "-" when unknown (NAN, negative, infinite).
 * JSON, CSV and metrics keep exact values instead. fmt_size_mib takes MiB. */
void fmt_size(double bytes, char *buf, size_t len);
void fmt_size_mib(double mib, char *buf, size_t len);

enum fmt_duration_style { FMT_DURATION_EXACT, FMT_DURATION_COMPACT };
#define FMT_DURATION_LEN 32
const char *fmt_duration(double s, enum fmt_duration_style style,
                         char buf[static FMT_DURATION_LEN]);

/* An argv of JSON strings (an OCI process's args, a BuildKit exec's) as a
 * NUL-separated argv into out (cut at cap); with env (an array of
 * "NAME=value"), $NAME and ${NAME} replaced from it as a shell would (not
 * inside single quotes; quotes kept). The length, -EINVAL when args is not
 * an array of strings or cap is 0. */
struct json_t;
int json_argv(const struct json_t *args, const struct json_t *env, char *out, size_t cap);
