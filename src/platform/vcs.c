/* SPDX-License-Identifier: MIT */
#include "platform/vcs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "util/macro.h"
#include "util/util.h"

#define VCS_FILE_MAX 4096         /* HEAD, a loose ref, a .git file */
#define VCS_PACKED_MAX (64 << 20) /* packed-refs of a huge monorepo */
#define VCS_SYMREF_DEPTH 5        /* git's own limit is 5 too */
#define VCS_PATH_MAX 4096

/* An object name of 40 or 64 hex digits at [p, end), then only line end
 * or spaces, lower-cased into ret (untouched on failure). */
static int parse_hex(const char *p, const char *end, char *ret)
{
        size_t n = 0;

        while (p + n < end && hex_value(p[n]) >= 0)
                n++;
        if (n != 40 && n != 64)
                return -EINVAL;
        for (const char *q = p + n; q < end; q++)
                if (*q != '\n' && *q != '\r' && *q != ' ' && *q != '\t')
                        return -EINVAL;
        for (size_t i = 0; i < n; i++)
                ret[i] = (char)(p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 'a' : p[i]);
        ret[n] = '\0';
        return 0;
}

bool vcs_ref_name_ok(const char *name, size_t len)
{
        if (len == 4 && memcmp(name, "HEAD", 4) == 0)
                return true;
        if (len <= 5 || len > VCS_REF_MAX || memcmp(name, "refs/", 5) != 0)
                return false;
        if (name[len - 1] == '/' || name[len - 1] == '.')
                return false;
        if (len >= 5 && memcmp(name + len - 5, ".lock", 5) == 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)name[i];

                if (c < 0x20 || c == 0x7f || c == '\\' || c == ':' || c == '?' || c == '*' ||
                    c == '[' || c == ' ' || c == '~' || c == '^')
                        return false;
                /* "//", "..", a component starting with '.' (".", ".hidden") */
                if (i + 1 < len && (c == '/' || c == '.') &&
                    (name[i + 1] == '.' || (c == '/' && name[i + 1] == '/')))
                        return false;
        }
        return true;
}

/* Strip one trailing "\n" (and "\r") from [p, *end). */
static void chomp(const char *p, const char **end)
{
        if (*end > p && (*end)[-1] == '\n')
                (*end)--;
        if (*end > p && (*end)[-1] == '\r')
                (*end)--;
}

int vcs_parse_head(const char *buf, size_t len, char *ret_ref, char *ret_rev)
{
        const char *p = buf, *end = buf + len;

        if (skip_prefix(&p, end, "ref:")) {
                size_t n;

                skip_spaces(&p, end);
                chomp(p, &end);
                n = (size_t)(end - p);
                if (!vcs_ref_name_ok(p, n))
                        return -EINVAL;
                memcpy(ret_ref, p, n);
                ret_ref[n] = '\0';
                ret_rev[0] = '\0';
                return 0;
        }
        if (parse_hex(p, end, ret_rev) < 0)
                return -EINVAL;
        ret_ref[0] = '\0';
        return 0;
}

int vcs_parse_gitfile(const char *buf, size_t len, char *ret, size_t retlen)
{
        const char *p = buf, *end = buf + len;
        size_t n;

        if (!skip_prefix(&p, end, "gitdir:"))
                return -EINVAL;
        skip_spaces(&p, end);
        chomp(p, &end);
        n = (size_t)(end - p);
        if (n == 0 || memchr(p, '\0', n) || memchr(p, '\n', n))
                return -EINVAL;
        if (n >= retlen)
                return -ERANGE;
        memcpy(ret, p, n);
        ret[n] = '\0';
        return 0;
}

int vcs_packed_refs_find(const char *buf, size_t len, const char *ref, char *ret_rev)
{
        const char *p = buf, *end = buf + len;
        size_t rlen = strlen(ref);

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *le = nl ? nl : end, *sp;

                /* "<hex> <name>": find the name after the first space */
                if (p < le && *p != '#' && *p != '^' &&
                    (sp = memchr(p, ' ', (size_t)(le - p))) != NULL) {
                        const char *name = sp + 1, *ne = le;

                        chomp(name, &ne);
                        if ((size_t)(ne - name) == rlen && memcmp(name, ref, rlen) == 0)
                                return parse_hex(p, sp, ret_rev) < 0 ? -EINVAL : 0;
                }
                p = nl ? nl + 1 : end;
        }
        return -ENOENT;
}

/* read_file_at() (a FIFO planted as .git/HEAD is -EINVAL, it does not
 * block us), but a directory is -EISDIR: a ref that is a directory of
 * refs is looked for further. */
static int read_regular_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
        struct stat st;

        if (fstatat(dirfd, path, &st, 0) == 0 && S_ISDIR(st.st_mode))
                return -EISDIR;
        return read_file_at(dirfd, path, max, ret, ret_len);
}

/* Not there as a file: looked for further. */
static bool absent(int r)
{
        return r == -ENOENT || r == -ENOTDIR || r == -EISDIR;
}

/* A ref's value: loose in dirfd, then in commonfd, then packed-refs in
 * commonfd. Symbolic loose refs are followed up to VCS_SYMREF_DEPTH. */
static int resolve_ref(int gitfd, int commonfd, const char *ref, char *ret_rev)
{
        char name[VCS_REF_MAX + 1];

        snprintf(name, sizeof(name), "%s", ref);
        for (int depth = 0; depth < VCS_SYMREF_DEPTH; depth++) {
                _cleanup_free_ char *buf = NULL;
                size_t len;
                int r = read_regular_at(gitfd, name, VCS_FILE_MAX, &buf, &len);

                if (absent(r) && commonfd != gitfd)
                        r = read_regular_at(commonfd, name, VCS_FILE_MAX, &buf, &len);
                if (absent(r)) {
                        r = read_regular_at(commonfd, "packed-refs", VCS_PACKED_MAX, &buf, &len);
                        return r < 0 ? r : vcs_packed_refs_find(buf, len, name, ret_rev);
                }
                if (r < 0)
                        return r;
                /* a symbolic ref's target into name, an object name into
                 * ret_rev */
                r = vcs_parse_head(buf, len, name, ret_rev);
                if (r < 0 || ret_rev[0])
                        return r;
        }
        return -ELOOP;
}

/* Join base and a path read from a file (absolute, or relative to base). */
static int join_path(const char *base, const char *rel, char *ret, size_t retlen)
{
        int n = rel[0] == '/' ? snprintf(ret, retlen, "%s", rel)
                              : snprintf(ret, retlen, "%s/%s", base, rel);

        return n < 0 || (size_t)n >= retlen ? -ENAMETOOLONG : 0;
}

/* The git dir for the work tree at dir, or -ENOENT. */
static int find_gitdir(const char *dir, char *ret, size_t retlen)
{
        char d[VCS_PATH_MAX], p[VCS_PATH_MAX];
        int n = snprintf(d, sizeof(d), "%s", dir);

        if (n < 0 || (size_t)n >= sizeof(d))
                return -ENAMETOOLONG;
        for (int level = 0; level < 64; level++) {
                struct stat st;
                char *slash;
                int r;

                r = join_path(d[0] ? d : "/", ".git", p, sizeof(p));
                if (r < 0)
                        return r;
                if (stat(p, &st) == 0) {
                        _cleanup_free_ char *buf = NULL;
                        char target[VCS_PATH_MAX];
                        size_t len;

                        if (S_ISDIR(st.st_mode))
                                return join_path("", p, ret, retlen);
                        r = read_regular_at(AT_FDCWD, p, VCS_FILE_MAX, &buf, &len);
                        if (r >= 0)
                                r = vcs_parse_gitfile(buf, len, target, sizeof(target));
                        if (r < 0)
                                return r == -ERANGE ? -ENAMETOOLONG : r;
                        return join_path(d[0] ? d : "/", target, ret, retlen);
                }
                slash = strrchr(d, '/');
                if (!slash || d[0] == '\0')
                        break;
                *slash = '\0'; /* "/a/b" -> "/a"; "/a" -> "" (the root) */
        }
        return -ENOENT;
}

int vcs_read(const char *dir, struct vcs_info *ret)
{
        char gitdir[VCS_PATH_MAX], ref[VCS_REF_MAX + 1], rev[VCS_HEX_MAX + 1];
        _cleanup_free_ char *head = NULL, *cdir = NULL;
        _cleanup_close_ int gitfd = -1, commonfd = -1;
        struct stat st;
        size_t len;
        int r = find_gitdir(dir, gitdir, sizeof(gitdir));

        if (r < 0)
                return r;
        gitfd = open(gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (gitfd < 0)
                return -errno;
        /* A linked worktree keeps HEAD here and the shared refs in
         * commondir (a path relative to the git dir). */
        r = read_regular_at(gitfd, "commondir", VCS_FILE_MAX, &cdir, &len);
        if (r >= 0) {
                char cpath[VCS_PATH_MAX];
                const char *end = cdir + len;

                chomp(cdir, &end);
                if (end == cdir || memchr(cdir, '\0', (size_t)(end - cdir)))
                        return -EINVAL;
                cdir[end - cdir] = '\0';
                r = join_path(gitdir, cdir, cpath, sizeof(cpath));
                if (r < 0)
                        return r;
                commonfd = open(cpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (commonfd < 0)
                        return -errno;
        } else if (r != -ENOENT) {
                return r;
        }
        if (fstatat(commonfd >= 0 ? commonfd : gitfd, "reftable", &st, 0) == 0)
                return -EOPNOTSUPP;

        r = read_regular_at(gitfd, "HEAD", VCS_FILE_MAX, &head, &len);
        if (r >= 0)
                r = vcs_parse_head(head, len, ref, rev);
        if (r >= 0 && ref[0])
                r = resolve_ref(gitfd, commonfd >= 0 ? commonfd : gitfd, ref, rev);
        if (r < 0)
                return r;
        memcpy(ret->rev, rev, sizeof(rev));
        memcpy(ret->ref, ref, sizeof(ref));
        return 0;
}
