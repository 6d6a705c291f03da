/* SPDX-License-Identifier: MIT */
/* util/outfile: the one writer of a file replaced whole, on real files in
 * a temp directory. What a crash-free replacement promises, observed: the
 * old content until the commit, no temp file left after a commit, an abort
 * or a failure (a directory in the way, a directory we may not write, a
 * write that fails half-way), exactly the mode asked for, and the two
 * fsyncs (the file, then its directory) taken, counted by an fsync() of
 * this program's own that the library's calls bind to. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#include "helpers/test.h"

/* What fsync() was given, in order: 'f' a regular file, 'd' a directory. */
static char fsynced[16];
static size_t nfsynced;

int fsync(int fd)
{
        struct stat st;

        if (nfsynced < sizeof(fsynced) - 1 && fstat(fd, &st) == 0)
                fsynced[nfsynced++] = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : '?';
        fsynced[nfsynced] = '\0';
        return (int)syscall(SYS_fsync, fd);
}

static void fsync_reset(void)
{
        nfsynced = 0;
        fsynced[0] = '\0';
}

/* A scratch directory, removed (one level deep) by scratch_free(). */
struct scratch {
        char dir[64];
        int dfd;
};

static struct scratch scratch_new(void)
{
        struct scratch s;

        snprintf(s.dir, sizeof(s.dir), "/tmp/buildtel-test-outfile.XXXXXX");
        assert_non_null(mkdtemp(s.dir));
        s.dfd = open(s.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(s.dfd >= 0);
        return s;
}

static void scratch_free(struct scratch *s)
{
        DIR *d = opendir_at(s->dfd, ".");
        struct dirent *de;

        while (d && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(s->dfd, de->d_name, 0) < 0)
                        (void)unlinkat(s->dfd, de->d_name, AT_REMOVEDIR);
        }
        if (d)
                closedir(d);
        close(s->dfd);
        rmdir(s->dir);
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(a, b);
}

/* The names in the directory, sorted, joined by ' '. */
static void listing(int dfd, char *buf, size_t cap)
{
        DIR *d = opendir_at(dfd, ".");
        struct dirent *de;
        char names[16][256];
        size_t n = 0, o = 0;

        assert_non_null(d);
        while ((de = readdir(d)) && n < 16) {
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        snprintf(names[n++], sizeof(names[0]), "%s", de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof(names[0]), cmp_name);
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? " " : "", names[i]);
}

static void assert_listing(int dfd, const char *want)
{
        char list[512];

        listing(dfd, list, sizeof(list));
        assert_string_equal(list, want);
}

static void assert_content(int dfd, const char *name, const char *want)
{
        char *buf = NULL;
        size_t len = 0;

        assert_int_equal(read_file_at(dfd, name, 1 << 20, &buf, &len), 0);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(buf, want, len);
        free(buf);
}

static const struct {
        const char *name;
        const char *content;
        mode_t mode;
} writes[] = {
    {"a.prom", "first\n", 0644}, {"a.prom", "second, longer than the first\n", 0640}, /* replaces */
    {"a.prom", "", 0600}, /* empty is a file too */
    {"b.json", "{}", 0644},      {"lnk", "replaces the link, not its target\n", 0644},
};

TEST(write_file_atomic)
{
        struct scratch s = scratch_new();
        char path[256];
        struct stat st;
        int cwd;
        mode_t old_umask = umask(077);

        assert_int_equal(symlinkat("b.json", s.dfd, "lnk"), 0);
        FOREACH_ROW(k, writes) {
                test_row("%s: %s", writes[k].name, writes[k].content);
                fsync_reset();
                assert_int_equal(outfile_write_at(s.dfd, writes[k].name, writes[k].content,
                                                  strlen(writes[k].content), writes[k].mode),
                                 0);
                assert_string_equal(fsynced, "fd"); /* the file, then its directory */
                assert_content(s.dfd, writes[k].name, writes[k].content);
                assert_int_equal(fstatat(s.dfd, writes[k].name, &st, AT_SYMLINK_NOFOLLOW), 0);
                assert_true(S_ISREG(st.st_mode));
                /* exactly the mode asked for, whatever the umask (077 here) */
                assert_int_equal(st.st_mode & 07777, writes[k].mode);
        }
        assert_content(s.dfd, "b.json", "{}");
        umask(old_umask);

        /* the path form, a run file: mode 0600, relative to the path's
         * directory */
        snprintf(path, sizeof(path), "%s/c.txt", s.dir);
        assert_int_equal(write_file_atomic(path, "c", 1), 0);
        assert_content(s.dfd, "c.txt", "c");
        assert_int_equal(fstatat(s.dfd, "c.txt", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0600);

        /* relative to the working directory */
        cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(cwd >= 0);
        assert_int_equal(fchdir(s.dfd), 0);
        fsync_reset();
        assert_int_equal(outfile_write_at(AT_FDCWD, "d.txt", "d", 1, 0644), 0);
        assert_string_equal(fsynced, "fd");
        assert_int_equal(write_file_atomic("e.txt", "e", 1), 0);
        assert_int_equal(fchdir(cwd), 0);
        close(cwd);
        assert_content(s.dfd, "d.txt", "d");
        assert_content(s.dfd, "e.txt", "e");

        /* no temp file left behind */
        assert_listing(s.dfd, "a.prom b.json c.txt d.txt e.txt lnk");
        scratch_free(&s);
}

/* The streaming writer: the old content until the commit, nothing left
 * after a release, the mode exactly as asked, for a run file and a path
 * the user named. */
TEST(outfile_stream)
{
        static const struct {
                bool runfile, commit;
                const char *want;
        } cases[] = {
            {true, false, "old"},
            {true, true, "{\"a\":1}"},
            {false, false, "old"},
            {false, true, "{\"a\":1}"},
        };
        struct scratch s = scratch_new();
        char path[128];

        assert_true((size_t)snprintf(path, sizeof(path), "%s/t.json", s.dir) < sizeof(path));
        FOREACH_ROW(k, cases) {
                struct outfile o;
                struct stat st;

                test_row("runfile %d, commit %d", cases[k].runfile, cases[k].commit);
                assert_int_equal(outfile_write_at(s.dfd, "t.json", "old", 3, 0600), 0);
                assert_int_equal(outfile_open(path, 0644, cases[k].runfile, &o), 0);
                assert_false(o.through);
                assert_int_equal(write_all(o.fd, "{\"a\":", 5), 0);
                assert_int_equal(write_all(o.fd, "1}", 2), 0);
                assert_content(s.dfd, "t.json", "old"); /* not yet */
                fsync_reset();
                if (cases[k].commit)
                        assert_int_equal(outfile_commit(&o), 0);
                outfile_release(&o); /* a no-op once committed */
                outfile_release(&o);
                assert_string_equal(fsynced, cases[k].commit ? "fd" : "");
                assert_content(s.dfd, "t.json", cases[k].want);
                assert_int_equal(fstatat(s.dfd, "t.json", &st, 0), 0);
                assert_int_equal(st.st_mode & 07777, cases[k].commit ? 0644 : 0600);
                assert_listing(s.dfd, "t.json");
        }
        assert_int_equal(
            outfile_open("/nonexistent-dir-buildtel/x", 0644, true, &(struct outfile){0}), -ENOENT);
        scratch_free(&s);
}

TEST(write_failures)
{
        struct scratch s = scratch_new();
        char path[256];

        assert_int_equal(outfile_write_at(s.dfd, "keep", "old", 3, 0644), 0);
        /* the target is a directory: nothing replaced, no temp left */
        assert_int_equal(mkdirat(s.dfd, "adir", 0755), 0);
        assert_int_equal(outfile_write_at(s.dfd, "adir", "x", 1, 0644), -EISDIR);
        assert_int_equal(outfile_write_at(s.dfd, "adir", "x", 1, 0644), -EISDIR);
        /* names that are not one component */
        assert_int_equal(outfile_write_at(s.dfd, "", "x", 1, 0644), -EINVAL);
        assert_int_equal(outfile_write_at(s.dfd, "adir/x", "x", 1, 0644), -EINVAL);
        snprintf(path, sizeof(path), "%s/", s.dir);
        assert_int_equal(outfile_write(path, "x", 1), -EINVAL);
        /* a directory that does not exist */
        snprintf(path, sizeof(path), "%s/missing/x", s.dir);
        assert_int_equal(write_file_atomic(path, "x", 1), -ENOENT);
        assert_listing(s.dfd, "adir keep");
        assert_content(s.dfd, "keep", "old");
        scratch_free(&s);
}

/* A FIFO or a character device the user named is written through, never
 * renamed over; a run file's name held by one is refused. */
TEST(write_through)
{
        struct scratch s = scratch_new();
        char path[256], buf[8] = {0};
        struct stat st;
        int rd;

        assert_int_equal(mkfifoat(s.dfd, "fifo", 0600), 0);
        assert_int_equal(symlinkat("/dev/null", s.dfd, "null"), 0);
        /* a FIFO nobody reads */
        assert_int_equal(outfile_write_at(s.dfd, "fifo", "x", 1, 0644), -ENXIO);
        rd = openat(s.dfd, "fifo", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        assert_true(rd >= 0);
        assert_int_equal(outfile_write_at(s.dfd, "fifo", "abc", 3, 0644), 0);
        assert_int_equal(read(rd, buf, sizeof(buf)), 3);
        assert_string_equal(buf, "abc");
        close(rd);
        assert_int_equal(outfile_write_at(s.dfd, "null", "abc", 3, 0644), 0);
        assert_int_equal(fstatat(s.dfd, "fifo", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISFIFO(st.st_mode));
        assert_int_equal(fstatat(s.dfd, "null", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISLNK(st.st_mode));
        snprintf(path, sizeof(path), "%s/fifo", s.dir);
        assert_int_equal(write_file_atomic(path, "x", 1), -EEXIST);
        assert_int_equal(runfile_write_at(s.dfd, "null", "x", 1, 0600), -EEXIST);
        assert_listing(s.dfd, "fifo null");
        scratch_free(&s);
}

/* A temp file made under a name others look for (the build log's
 * .gz.tmp), committed or removed. */
TEST(outfile_adopt)
{
        struct scratch s = scratch_new();
        char path[256];

        snprintf(path, sizeof(path), "%s/x.gz", s.dir);
        for (int commit = 0; commit <= 1; commit++) {
                struct outfile o;
                int fd = openat(s.dfd, "x.gz.tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

                assert_true(fd >= 0);
                assert_int_equal(outfile_adopt(path, "x.gz.tmp", fd, &o), 0);
                assert_int_equal(write_all(o.fd, "gz", 2), 0);
                fsync_reset();
                if (commit)
                        assert_int_equal(outfile_commit(&o), 0);
                else
                        outfile_release(&o);
                assert_string_equal(fsynced, commit ? "fd" : "");
                assert_listing(s.dfd, commit ? "x.gz" : "");
        }
        assert_content(s.dfd, "x.gz", "gz");
        scratch_free(&s);
}

/* Run fn in a child (with the scratch dir) and return its exit code. */
static int in_child(struct scratch *s, int (*fn)(struct scratch *))
{
        int st;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(fn(s));
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        return WEXITSTATUS(st);
}

/* A directory we may not write. Root may write anywhere, so as root the
 * child first becomes nobody. */
static int write_unwritable(struct scratch *s)
{
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
                return 100;
        return -outfile_write_at(s->dfd, "keep", "new", 3, 0644);
}

/* A write that fails half-way: the file size limit (RLIMIT_FSIZE) makes the
 * write itself fail with EFBIG, as a full disk would with ENOSPC. */
static int write_too_big(struct scratch *s)
{
        struct rlimit rl = {.rlim_cur = 4, .rlim_max = 4};

        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                return 100;
        return -outfile_write_at(s->dfd, "keep", "much more than four bytes", 25, 0644);
}

TEST(write_denied)
{
        struct scratch s = scratch_new();

        assert_int_equal(outfile_write_at(s.dfd, "keep", "old", 3, 0644), 0);
        assert_int_equal(fchmod(s.dfd, 0555), 0);
        assert_int_equal(in_child(&s, write_unwritable), EACCES);
        assert_int_equal(fchmod(s.dfd, 0700), 0);
        assert_int_equal(in_child(&s, write_too_big), EFBIG);
        assert_listing(s.dfd, "keep");
        assert_content(s.dfd, "keep", "old");
        scratch_free(&s);
}

RUN_TESTS()
