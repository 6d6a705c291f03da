/* SPDX-License-Identifier: MIT */
/* The build log in either form (sinks/logfile.h), on real files in a temp
 * directory: the sink's 1 MiB rule, logfile_compress() (a .gz that zlib
 * and gzip read back byte for byte, no .gz.tmp left, the plain log gone;
 * output that does not shrink left as it was), the names logfile_current()
 * and logfile_settled() give while a .gz.tmp exists and after, and
 * logfile_tail_fd() of a plain and of a gzip log, equal, and its errors. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "model/run.h"
#include "sinks/logfile.h"
#include "sinks/sink.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#include "helpers/test.h"

#define MIB (1024 * 1024)

extern char **environ;

/* ---- the temp directory and its files ---- */

static char dir[64];

static void dir_make(void)
{
        snprintf(dir, sizeof(dir), "/tmp/buildtel-test-logfile.XXXXXX");
        assert_non_null(mkdtemp(dir));
}

static int rm_one(const char *path, _unused_ const struct stat *st, _unused_ int flag,
                  _unused_ struct FTW *ftw)
{
        return remove(path) < 0 ? -1 : 0;
}

static void dir_remove(void)
{
        (void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/name, in a static buffer of its own per slot (0..3). */
static const char *at(int slot, const char *name)
{
        static char paths[4][160];

        snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", dir, name);
        return paths[slot];
}

static bool exists(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0;
}

static void put_file(const char *path, const char *buf, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, buf, len), 0);
        close(fd);
}

/* The whole file (NULL when it is not there). */
static char *get_file(const char *path, size_t *ret_len)
{
        char *p = NULL;

        if (read_regular_file(path, 0, 64 * MIB, &p, ret_len) < 0)
                return NULL;
        return p;
}

/* The whole .gz at path through zlib, failing on any zlib error. */
static char *gunzip_file(const char *path, size_t *ret_len)
{
        struct dbuf b = DBUF_INIT;
        char chunk[65536];
        gzFile g = gzopen(path, "rb");
        int n;

        assert_non_null(g);
        assert_int_equal(gzdirect(g), 0); /* gzip, not a plain file read through */
        while ((n = gzread(g, chunk, sizeof(chunk))) > 0)
                assert_int_equal(dbuf_append(&b, chunk, (size_t)n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(gzclose(g), Z_OK);
        *ret_len = b.len;
        return b.p ? b.p : strdup("");
}

/* path (gzip) through the real gzip -dc into out. */
static void gzip_dc(const char *path, const char *out)
{
        char *argv[] = {(char *)(uintptr_t) "gzip", (char *)(uintptr_t) "-dc",
                        (char *)(uintptr_t)path, NULL};
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status;

        assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
        assert_int_equal(
            posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600), 0);
        assert_int_equal(posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static bool have_gzip(void)
{
        return access("/usr/bin/gzip", X_OK) == 0 || access("/bin/gzip", X_OK) == 0;
}

/* buf as a .gz at path, written by zlib itself (any size, even empty). */
static void put_gz(const char *path, const char *buf, size_t len)
{
        gzFile g = gzopen(path, "wb6");

        assert_non_null(g);
        if (len)
                assert_int_equal(gzwrite(g, buf, (unsigned)len), (int)len);
        assert_int_equal(gzclose(g), Z_OK);
}

/* ---- contents ---- */

enum kind {
        TEXT,     /* a compile log: compresses well */
        TEXT_CUT, /* the same, its last line without a newline */
        RANDOM,   /* does not compress at all */
        MIXED,    /* its first MiB text, the rest random */
        RAND_1ST, /* its first MiB random (201 byte values), the rest text */
};

/* len bytes of kind, the same for the same arguments (malloc'd, len + 1). */
static char *content(enum kind kind, size_t len)
{
        char *p = malloc(len + 1);
        uint64_t x = 0x9e3779b97f4a7c15u;
        size_t i = 0, n = 0;

        assert_non_null(p);
        for (; kind == RAND_1ST && i < MIN(len, (size_t)MIB); i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                p[i] = (char)((x >> 32) % 201); /* shrinks, by about 4 %: not by a tenth */
        }
        while (i < len && kind != RANDOM && !(kind == MIXED && i >= MIB)) {
                char line[128];
                int k = snprintf(line, sizeof(line),
                                 "[%zu/90000] Building CXX object src/lib/module%zu.cpp.o\n", n,
                                 n % 977);
                size_t take = MIN((size_t)k, len - i);

                memcpy(p + i, line, take);
                i += take;
                n++;
        }
        for (; i < len; i++) { /* xorshift64: deflate finds nothing in it */
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                p[i] = (char)(x >> 32);
        }
        if (kind == TEXT_CUT && len > 0 && p[len - 1] == '\n')
                p[len - 1] = 'x';
        if (kind == TEXT && len > 0)
                p[len - 1] = '\n';
        p[len] = '\0';
        return p;
}

/* ---- the sink's rule: a finished log over 1 MiB is gzipped ---- */

static const struct {
        const char *what;
        size_t size;
        enum kind kind;
        bool want_gz;
} sink_cases[] = {
    {"an empty log", 0, TEXT, false},
    {"a small log", 4096, TEXT, false},
    {"just under 1 MiB", LOGFILE_COMPRESS_MIN - 1, TEXT, false},
    {"exactly 1 MiB: not over it", LOGFILE_COMPRESS_MIN, TEXT, false},
    {"1 MiB and a byte", LOGFILE_COMPRESS_MIN + 1, TEXT, true},
    {"3 MiB, no newline at its end", 3 * MIB, TEXT_CUT, true},
    {"2 MiB of random bytes", 2 * MIB, RANDOM, false},
};

TEST(sink_threshold)
{
        FOREACH_ROW(i, sink_cases) {
                char id[16];
                char *argv[] = {NULL};
                struct run_info ri = {.run_id = id, .argv = argv};
                struct sink_ctx ctx = {.log_dir = dir, .run = &ri, .quiet = true};
                const struct run_model m = {.run = &ri};
                _cleanup_free_ char *want = content(sink_cases[i].kind, sink_cases[i].size);
                _cleanup_free_ char *got = NULL;
                char plain[64], gz[64], tmp[64];
                void *state = NULL;
                size_t len;

                test_row("%s", sink_cases[i].what);
                dir_make();
                snprintf(id, sizeof(id), "row%zu", i);
                snprintf(plain, sizeof(plain), "build-%s.log", id);
                snprintf(gz, sizeof(gz), "build-%s.log.gz", id);
                snprintf(tmp, sizeof(tmp), "build-%s.log.gz.tmp", id);
                assert_int_equal(sink_buildlog.open(&ctx, &state), 0);
                for (size_t off = 0; off < sink_cases[i].size; off += 70000) /* odd chunks */
                        sink_buildlog.output(state, 1 + (int)(off / 70000 % 2), want + off,
                                             MIN((size_t)70000, sink_cases[i].size - off));
                assert_int_equal(sink_buildlog.finish(state, &m), 0);
                sink_buildlog.close(state);

                assert_int_equal(exists(at(0, gz)), sink_cases[i].want_gz);
                assert_int_equal(exists(at(1, plain)), !sink_cases[i].want_gz);
                assert_false(exists(at(2, tmp)));
                got = sink_cases[i].want_gz ? gunzip_file(at(0, gz), &len)
                                            : get_file(at(1, plain), &len);
                assert_non_null(got);
                assert_int_equal(len, sink_cases[i].size);
                assert_memory_equal(got, want, len);
                dir_remove();
        }
}

/* ---- logfile_compress() ---- */

static const struct {
        const char *what;
        size_t size;
        enum kind kind;
        bool stale_tmp; /* a .gz.tmp of ours already there (a compression killed) */
        int want;
} compress_cases[] = {
    {"1 MiB and a byte of text", LOGFILE_COMPRESS_MIN + 1, TEXT, false, 0},
    {"5 MiB of text, no newline at its end", 5 * MIB, TEXT_CUT, false, 0},
    {"a small log, when asked (the 1 MiB rule is the sink's)", 1000, TEXT, false, 0},
    {"a stale .gz.tmp of ours: replaced", 2 * MIB, TEXT, true, 0},
    {"2 MiB of random bytes", 2 * MIB, RANDOM, false, -EFBIG},
    {"random after a first MiB of text: the whole does not shrink", 11 * MIB, MIXED, false, -EFBIG},
    {"an empty log", 0, TEXT, false, -EFBIG},
    /* the whole would shrink: the first MiB decides, alone */
    {"text after a first MiB of random bytes", 5 * MIB, RAND_1ST, false, -EFBIG},
};

TEST(compress)
{
        bool gzip = have_gzip();

        if (!gzip)
                print_message("no gzip here: the .gz files are read back by zlib only\n");
        FOREACH_ROW(i, compress_cases) {
                const char *plain, *gz, *tmp;
                _cleanup_free_ char *want = content(compress_cases[i].kind, compress_cases[i].size);
                _cleanup_free_ char *got = NULL, *cur = NULL, *settled = NULL;
                size_t len;

                test_row("%s", compress_cases[i].what);
                dir_make();
                plain = at(0, "build-c.log");
                gz = at(1, "build-c.log.gz");
                tmp = at(2, "build-c.log.gz.tmp");
                put_file(plain, want, compress_cases[i].size);
                if (compress_cases[i].stale_tmp)
                        put_file(tmp, "junk", 4);
                assert_int_equal(logfile_compress(plain), compress_cases[i].want);
                assert_false(exists(tmp));
                if (compress_cases[i].want == 0) {
                        assert_false(exists(plain));
                        got = gunzip_file(gz, &len);
                        if (gzip) {
                                _cleanup_free_ char *viagzip = NULL;
                                size_t glen;

                                gzip_dc(gz, at(3, "gunzipped"));
                                viagzip = get_file(at(3, "gunzipped"), &glen);
                                assert_non_null(viagzip);
                                assert_int_equal(glen, compress_cases[i].size);
                                assert_memory_equal(viagzip, want, glen);
                        }
                } else {
                        assert_false(exists(gz));
                        got = get_file(plain, &len); /* as it was */
                }
                assert_non_null(got);
                assert_int_equal(len, compress_cases[i].size);
                assert_memory_equal(got, want, len);
                /* the form there now, by either name */
                cur = logfile_current(plain);
                settled = logfile_settled(plain);
                assert_non_null(cur);
                assert_non_null(settled);
                assert_string_equal(cur, compress_cases[i].want == 0 ? gz : plain);
                assert_string_equal(settled, cur);
                dir_remove();
        }
}

TEST(compress_missing)
{
        dir_make();
        assert_int_equal(logfile_compress(at(0, "build-none.log")), -ENOENT);
        assert_false(exists(at(1, "build-none.log.gz")));
        assert_false(exists(at(2, "build-none.log.gz.tmp")));
        dir_remove();
}

/* ---- the names: logfile_current(), logfile_settled() ---- */

enum { P = 1, G = 2, T = 4 }; /* plain, .gz, .gz.tmp there */

static const struct {
        const char *what;
        int there;
        bool ask_gz;               /* asked by the .gz name */
        const char *cur, *settled; /* "", ".gz" added to the plain name; NULL */
} name_cases[] = {
    {"plain", P, false, "", ""},
    {"plain, asked as .gz", P, true, "", ""},
    {"plain, compression under way", P | T, false, "", ".gz"},
    {"plain, compression under way, asked as .gz", P | T, true, "", ".gz"},
    {"compressed", G, false, ".gz", ".gz"},
    {"compressed, asked as .gz", G, true, ".gz", ".gz"},
    {"both, the plain not yet unlinked", P | G, false, "", ""},
    {"both, asked as .gz", P | G, true, ".gz", ".gz"},
    {"the .gz.tmp alone (the plain pruned)", T, false, NULL, ".gz"},
    {"nothing", 0, false, NULL, NULL},
    {"nothing, asked as .gz", 0, true, NULL, NULL},
};

static void check_name(const char *got, const char *want_suffix)
{
        char want[200];

        if (!want_suffix) {
                assert_null(got);
                return;
        }
        snprintf(want, sizeof(want), "%s%s", at(0, "build-n.log"), want_suffix);
        assert_non_null(got);
        assert_string_equal(got, want);
}

TEST(names)
{
        dir_make();
        FOREACH_ROW(i, name_cases) {
                const char *plain = at(0, "build-n.log"), *gz = at(1, "build-n.log.gz");
                const char *tmp = at(2, "build-n.log.gz.tmp");
                const char *ask = name_cases[i].ask_gz ? gz : plain;
                _cleanup_free_ char *cur = NULL, *settled = NULL;

                test_row("%s", name_cases[i].what);
                if (name_cases[i].there & P)
                        put_file(plain, "p\n", 2);
                if (name_cases[i].there & G)
                        put_gz(gz, "p\n", 2);
                if (name_cases[i].there & T)
                        put_file(tmp, "", 0);
                errno = 0;
                cur = logfile_current(ask);
                if (!cur)
                        assert_int_equal(errno, ENOENT); /* not ENOMEM */
                settled = logfile_settled(ask);
                check_name(cur, name_cases[i].cur);
                check_name(settled, name_cases[i].settled);
                (void)unlink(plain);
                (void)unlink(gz);
                (void)unlink(tmp);
        }
        dir_remove();
}

/* ---- logfile_tail_fd() of either form ---- */

/* The tail of the log at path by its name, as top reads it: the form
 * that exists (logfile_current()), opened. */
static ssize_t tail_path(const char *path, char *buf, size_t cap, bool *ret_cut)
{
        _cleanup_free_ char *cur = logfile_current(path);
        _cleanup_close_ int fd = cur ? open(cur, O_RDONLY | O_CLOEXEC) : -1;
        size_t n = cur ? strlen(cur) : 0;

        if (!cur)
                return -ENOENT;
        if (fd < 0)
                return -errno;
        return logfile_tail_fd(fd, n > 3 && strcmp(cur + n - 3, ".gz") == 0, buf, cap, ret_cut);
}

static const struct {
        const char *what;
        size_t size;
        enum kind kind;
        size_t cap;
} tail_cases[] = {
    {"an empty log", 0, TEXT, 64},
    {"shorter than cap", 100, TEXT, 4096},
    {"exactly cap", 4096, TEXT, 4096},
    {"a byte over cap", 4097, TEXT, 4096},
    {"no newline at its end", 10007, TEXT_CUT, 1000},
    {"cap 1: the last byte", 500, TEXT_CUT, 1},
    {"3 MiB, the last 64 KiB", 3 * MIB, TEXT, 65536},
    {"3 MiB, cap not a divisor of any chunk", 3 * MIB + 17, TEXT_CUT, 131071},
    {"random bytes", 300000, RANDOM, 7777},
    {"cap larger than the 3 MiB log", 3 * MIB, TEXT, 4 * MIB},
};

/* The tail a reader must get: the last min(size, cap) bytes. */
static void check_tail(ssize_t got, const char *buf, bool cut, const char *want, size_t size,
                       size_t cap)
{
        size_t n = MIN(size, cap);

        assert_int_equal(got, (ssize_t)n);
        assert_memory_equal(buf, want + size - n, n);
        assert_int_equal(cut, size > cap);
}

TEST(tail)
{
        FOREACH_ROW(i, tail_cases) {
                const char *plain, *gz;
                size_t size = tail_cases[i].size, cap = tail_cases[i].cap;
                _cleanup_free_ char *want = content(tail_cases[i].kind, size);
                _cleanup_free_ char *buf = malloc(cap);
                bool cut;
                ssize_t got;
                int fd;

                test_row("%s", tail_cases[i].what);
                assert_non_null(buf);
                dir_make();
                plain = at(0, "build-t.log");
                gz = at(1, "build-t.log.gz");
                /* plain: by its name, by the .gz name, and from an fd */
                put_file(plain, want, size);
                cut = !(size > cap);
                got = tail_path(plain, buf, cap, &cut);
                check_tail(got, buf, cut, want, size, cap);
                cut = !(size > cap);
                got = tail_path(gz, buf, cap, &cut); /* the other form */
                check_tail(got, buf, cut, want, size, cap);
                fd = open(plain, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                cut = !(size > cap);
                got = logfile_tail_fd(fd, false, buf, cap, &cut);
                check_tail(got, buf, cut, want, size, cap);
                close(fd);
                /* gzip: the same bytes, by either name and from an fd */
                put_gz(gz, want, size);
                assert_int_equal(unlink(plain), 0);
                cut = !(size > cap);
                got = tail_path(gz, buf, cap, &cut);
                check_tail(got, buf, cut, want, size, cap);
                cut = !(size > cap);
                got = tail_path(plain, buf, cap, &cut); /* the other form */
                check_tail(got, buf, cut, want, size, cap);
                fd = open(gz, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_true(lseek(fd, 5, SEEK_SET) == 5); /* read from its start all the same */
                cut = !(size > cap);
                got = logfile_tail_fd(fd, true, buf, cap, &cut);
                check_tail(got, buf, cut, want, size, cap);
                assert_true(fcntl(fd, F_GETFD) >= 0); /* the caller's, left open */
                close(fd);
                dir_remove();
        }
}

/* A .gz whose deflate data is not deflate, a .gz that is nothing, no log,
 * and a cap of 0 are errors, with *ret_cut untouched. */
TEST(tail_errors)
{
        static const unsigned char bad_deflate[] = {0x1f, 0x8b, 8,    0,    0,    0,    0,
                                                    0,    0,    3,    0xff, 0xff, 0xff, 0xff,
                                                    0x00, 0x12, 0x34, 0x56, 0x78, 0x9a};
        char buf[256];
        bool cut = true;

        dir_make();
        put_file(at(0, "build-bad.log.gz"), (const char *)bad_deflate, sizeof(bad_deflate));
        assert_true(tail_path(at(0, "build-bad.log.gz"), buf, sizeof(buf), &cut) < 0);
        assert_true(tail_path(at(1, "build-bad.log"), buf, sizeof(buf), &cut) < 0);
        assert_int_equal(tail_path(at(0, "build-none.log"), buf, sizeof(buf), &cut), -ENOENT);
        assert_int_equal(tail_path(at(0, "build-none.log.gz"), buf, sizeof(buf), &cut), -ENOENT);
        put_file(at(2, "build-ok.log"), "ok\n", 3);
        assert_int_equal(tail_path(at(2, "build-ok.log"), buf, 0, &cut), -EINVAL);
        assert_int_equal(logfile_tail_fd(0, false, buf, 0, &cut), -EINVAL);
        assert_true(cut);
        dir_remove();
}

/* A damaged .gz (cut short, or its CRC wrong) is an error, never bytes
 * handed back as the log's tail that are not. FAILS at 5a8ac24: tail_gz()
 * keeps whatever was decompressed before zlib's error (n < 0 with len > 0
 * is taken as the end) and ignores gzclose()'s Z_BUF_ERROR of a cut
 * stream; gzread() even drops the last call's bytes, so the "tail" is an
 * older window of the log, with *ret_cut true and a success return. */
TEST(tail_damaged_gz)
{
        static const struct {
                const char *what;
                int how; /* 0: cut at half, 1: a CRC byte flipped */
        } cases[] = {{"cut at half", 0}, {"its CRC wrong", 1}};

        FOREACH_ROW(i, cases) {
                const size_t size = 3 * MIB, cap = 4096;
                _cleanup_free_ char *want = content(RANDOM, size);
                _cleanup_free_ char *gz = NULL;
                char buf[4096];
                bool cut = false;
                size_t len;
                ssize_t got;

                test_row("%s", cases[i].what);
                dir_make();
                put_gz(at(0, "build-d.log.gz"), want, size);
                gz = get_file(at(0, "build-d.log.gz"), &len);
                assert_non_null(gz);
                if (cases[i].how == 0)
                        len /= 2;
                else
                        gz[len - 6] ^= 1; /* the trailer: CRC32, then ISIZE */
                put_file(at(0, "build-d.log.gz"), gz, len);
                got = tail_path(at(0, "build-d.log.gz"), buf, cap, &cut);
                if (got >= 0)
                        fail_msg("%zd bytes handed back as the tail (%s the log's last %zu)", got,
                                 got == (ssize_t)cap && memcmp(buf, want + size - cap, cap) == 0
                                     ? "they are"
                                     : "NOT",
                                 cap);
                dir_remove();
        }
}

RUN_TESTS()
