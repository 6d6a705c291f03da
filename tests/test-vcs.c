/* SPDX-License-Identifier: MIT */
/* sources/vcs.c: the parsers over buffers, and vcs_read() on .git trees
 * this test lays out in a temporary directory (a checked-in ".git" would be
 * taken by git itself): branches, packed refs, detached HEAD, a linked
 * worktree, a submodule, SHA-256, reftable, unborn and hostile repos. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "platform/vcs.h"
#include "util/util.h"

#define H1 "0123456789abcdef0123456789abcdef01234567"
#define H2 "89abcdef0123456789abcdef0123456789abcdef"
#define H3 "fedcba9876543210fedcba9876543210fedcba98"
#define H256 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_parse_head(void **state)
{
        static const struct {
                const char *in;
                int ret;
                const char *ref, *rev;
        } cases[] = {
            {"ref: refs/heads/main\n", 0, "refs/heads/main", ""},
            {"ref: refs/heads/feature/x-1\r\n", 0, "refs/heads/feature/x-1", ""},
            {"ref:refs/heads/main", 0, "refs/heads/main", ""},
            {H1 "\n", 0, "", H1},
            {"0123456789ABCDEF0123456789ABCDEF01234567\n", 0, "", H1},
            {H256 "\n", 0, "", H256},
            {"ref: ../../../etc/passwd\n", -EINVAL, NULL, NULL},
            {"ref: refs/heads/../../../etc/passwd\n", -EINVAL, NULL, NULL},
            {"ref: /etc/passwd\n", -EINVAL, NULL, NULL},
            {"ref: refs/heads/a//b\n", -EINVAL, NULL, NULL},
            {"ref: refs/heads/x.lock\n", -EINVAL, NULL, NULL},
            {"ref: refs/heads/.hidden\n", -EINVAL, NULL, NULL},
            {"ref: \n", -EINVAL, NULL, NULL},
            {"0123456789abcdef\n", -EINVAL, NULL, NULL},
            {H1 "junk\n", -EINVAL, NULL, NULL},
            {"", -EINVAL, NULL, NULL},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char ref[VCS_REF_MAX + 1] = "untouched", rev[VCS_HEX_MAX + 1] = "untouched";

                assert_int_equal(vcs_parse_head(cases[i].in, strlen(cases[i].in), ref, rev),
                                 cases[i].ret);
                if (cases[i].ret == 0) {
                        assert_string_equal(ref, cases[i].ref);
                        assert_string_equal(rev, cases[i].rev);
                } else {
                        assert_string_equal(ref, "untouched");
                        assert_string_equal(rev, "untouched");
                }
        }
}

static void test_parse_gitfile(void **state)
{
        char out[64];

        (void)state;
        assert_int_equal(vcs_parse_gitfile("gitdir: ../.git/modules/sub\n", 28, out, sizeof(out)),
                         0);
        assert_string_equal(out, "../.git/modules/sub");
        assert_int_equal(vcs_parse_gitfile("gitdir: /abs/wt\r\n", 17, out, sizeof(out)), 0);
        assert_string_equal(out, "/abs/wt");
        assert_int_equal(vcs_parse_gitfile("gitdir:\n", 8, out, sizeof(out)), -EINVAL);
        assert_int_equal(vcs_parse_gitfile("notgit: x\n", 10, out, sizeof(out)), -EINVAL);
        assert_int_equal(vcs_parse_gitfile("gitdir: a\nb\n", 12, out, sizeof(out)), -EINVAL);
        assert_int_equal(vcs_parse_gitfile("gitdir: 0123456789\n", 19, out, 5), -ERANGE);
}

static void test_packed_refs(void **state)
{
        static const char packed[] =
            "# pack-refs with: peeled fully-peeled sorted \n" H1 " refs/heads/main\n" H2
            " refs/tags/v1.0\n^" H3 "\n" H3 " refs/heads/mainline\n"
            "zz refs/heads/bad\n";
        char rev[VCS_HEX_MAX + 1];

        (void)state;
        assert_int_equal(vcs_packed_refs_find(packed, strlen(packed), "refs/heads/main", rev), 0);
        assert_string_equal(rev, H1);
        assert_int_equal(vcs_packed_refs_find(packed, strlen(packed), "refs/tags/v1.0", rev), 0);
        assert_string_equal(rev, H2);
        assert_int_equal(vcs_packed_refs_find(packed, strlen(packed), "refs/heads/mainline", rev),
                         0);
        assert_string_equal(rev, H3);
        assert_int_equal(vcs_packed_refs_find(packed, strlen(packed), "refs/heads/ma", rev),
                         -ENOENT);
        assert_int_equal(vcs_packed_refs_find(packed, strlen(packed), "refs/heads/bad", rev),
                         -EINVAL);
        /* no trailing newline */
        assert_int_equal(vcs_packed_refs_find(H1 " refs/heads/x", strlen(H1 " refs/heads/x"),
                                              "refs/heads/x", rev),
                         0);
}

/* A repository layout: files relative to the case's directory. */
struct file {
        const char *path, *content;
};

struct repo_case {
        const char *name;
        const struct file files[8];
        const char *cwd; /* relative to the case directory */
        int ret;
        const char *rev, *ref;
};

static const struct repo_case cases[] = {
    {"loose-branch",
     {{".git/HEAD", "ref: refs/heads/main\n"}, {".git/refs/heads/main", H1 "\n"}},
     ".",
     0,
     H1,
     "refs/heads/main"},
    {"subdirectory",
     {{".git/HEAD", "ref: refs/heads/main\n"},
      {".git/refs/heads/main", H1 "\n"},
      {"a/b/c/file", ""}},
     "a/b/c",
     0,
     H1,
     "refs/heads/main"},
    {"packed",
     {{".git/HEAD", "ref: refs/heads/dev\n"},
      {".git/packed-refs", "# pack-refs with: peeled fully-peeled sorted \n" H1
                           " refs/heads/dev\n" H2 " refs/tags/v1\n^" H3 "\n"}},
     ".",
     0,
     H1,
     "refs/heads/dev"},
    {"loose-beats-packed",
     {{".git/HEAD", "ref: refs/heads/dev\n"},
      {".git/refs/heads/dev", H2 "\n"},
      {".git/packed-refs", H1 " refs/heads/dev\n"}},
     ".",
     0,
     H2,
     "refs/heads/dev"},
    {"detached", {{".git/HEAD", H3 "\n"}}, ".", 0, H3, ""},
    {"symref-chain",
     {{".git/HEAD", "ref: refs/heads/alias\n"},
      {".git/refs/heads/alias", "ref: refs/heads/main\n"},
      {".git/refs/heads/main", H2 "\n"}},
     ".",
     0,
     H2,
     "refs/heads/alias"},
    {"worktree",
     {{"main/.git/HEAD", "ref: refs/heads/main\n"},
      {"main/.git/refs/heads/main", H1 "\n"},
      {"main/.git/refs/heads/feature", H2 "\n"},
      {"main/.git/worktrees/wt/HEAD", "ref: refs/heads/feature\n"},
      {"main/.git/worktrees/wt/commondir", "../..\n"},
      {"wt/.git", "gitdir: ../main/.git/worktrees/wt\n"}},
     "wt",
     0,
     H2,
     "refs/heads/feature"},
    {"submodule",
     {{".git/HEAD", "ref: refs/heads/main\n"},
      {".git/refs/heads/main", H1 "\n"},
      {".git/modules/sub/HEAD", H3 "\n"},
      {"sub/.git", "gitdir: ../.git/modules/sub\n"}},
     "sub",
     0,
     H3,
     ""},
    {"sha256",
     {{".git/HEAD", "ref: refs/heads/main\n"}, {".git/refs/heads/main", H256 "\n"}},
     ".",
     0,
     H256,
     "refs/heads/main"},
    {"unborn",
     {{".git/HEAD", "ref: refs/heads/main\n"}, {".git/refs/heads/.keep", ""}},
     ".",
     -ENOENT,
     NULL,
     NULL},
    {"reftable",
     {{".git/HEAD", "ref: refs/heads/.invalid\n"}, {".git/reftable/tables.list", ""}},
     ".",
     -EOPNOTSUPP,
     NULL,
     NULL},
    {"hostile-head",
     {{".git/HEAD", "ref: ../../../../../etc/hostname\n"}},
     ".",
     -EINVAL,
     NULL,
     NULL},
    {"hostile-gitfile", {{".git", "not a gitdir line\n"}}, ".", -EINVAL, NULL, NULL},
    {"symref-loop",
     {{".git/HEAD", "ref: refs/heads/a\n"},
      {".git/refs/heads/a", "ref: refs/heads/b\n"},
      {".git/refs/heads/b", "ref: refs/heads/a\n"}},
     ".",
     -ELOOP,
     NULL,
     NULL},
};

static void write_tree(const char *base, const struct file *files)
{
        for (size_t i = 0; i < 8 && files[i].path; i++) {
                char path[512], *slash;
                FILE *f;

                snprintf(path, sizeof(path), "%s/%s", base, files[i].path);
                slash = strrchr(path, '/');
                *slash = '\0';
                assert_int_equal(mkdir_p(path, 0755), 0);
                *slash = '/';
                f = fopen(path, "w");
                assert_non_null(f);
                fputs(files[i].content, f);
                fclose(f);
        }
}

static void test_read(void **state)
{
        char tmp[] = "/tmp/test-vcs.XXXXXX", cmd[64];

        (void)state;
        assert_non_null(mkdtemp(tmp));
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char base[256], cwd[512];
                struct vcs_info v = {"untouched", "untouched"};
                int r;

                snprintf(base, sizeof(base), "%s/%s", tmp, cases[i].name);
                write_tree(base, cases[i].files);
                snprintf(cwd, sizeof(cwd), "%s/%s", base, cases[i].cwd);
                r = vcs_read(cwd, &v);
                if (r != cases[i].ret)
                        fail_msg("case %s: got %d, want %d", cases[i].name, r, cases[i].ret);
                if (r == 0) {
                        assert_string_equal(v.rev, cases[i].rev);
                        assert_string_equal(v.ref, cases[i].ref);
                } else {
                        assert_string_equal(v.rev, "untouched");
                }
        }
        /* a FIFO planted as HEAD must not block */
        {
                char base[256], p[300];
                struct vcs_info v;

                snprintf(base, sizeof(base), "%s/fifo/.git", tmp);
                assert_int_equal(mkdir_p(base, 0755), 0);
                snprintf(p, sizeof(p), "%s/HEAD", base);
                assert_int_equal(mkfifo(p, 0644), 0);
                snprintf(base, sizeof(base), "%s/fifo", tmp);
                assert_int_equal(vcs_read(base, &v), -EINVAL);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        assert_int_equal(system(cmd), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_head),
            cmocka_unit_test(test_parse_gitfile),
            cmocka_unit_test(test_packed_refs),
            cmocka_unit_test(test_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
