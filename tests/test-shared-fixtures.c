/* SPDX-License-Identifier: MIT */
/* Runs linebuf + logctx over every file in ../shared/fixtures (real build
 * logs we may read but not ship) and checks what was verified by reading
 * them. Plain C: the folder is optional, so no cmocka. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/failure.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "util/macro.h"
#include "util/util.h"
#include "helpers/parse.h"

#ifndef SHARED_FIXTURES
#error "SHARED_FIXTURES must be defined by the build"
#endif

#define MAX_FILE (64u << 20)

struct expect {
        const char *path; /* relative to SHARED_FIXTURES */
        const char *stage;
        const char *context;
        bool seen;
};

static struct expect expects[] = {
    /* Multi-target bake: the last step header is "#39 [frontend runner 7/7]"; the
     * "[frontend] exporting to image" and compose output after it change nothing. */
    {"realworld/buildkit-plain/01_pgsims_compose-bake_multitarget_runbook.md", "frontend/runner",
     "#39 [frontend runner 7/7] COPY --from=builder --chown=nextjs:nodejs /app/public ./public",
     false},
    /* Only "[nix] ..." and "[internal] ..." vertices: no stage, no work line. */
    {"realworld/buildkit-plain/02_buildkit-nix-demo_buildx-bake_docker-container.md", "", "```",
     false},
    /* Two failing steps; the epilogue, ANSI lint summary and "ERROR:" are noise. */
    {"realworld/buildkit-plain/05_containerforge_build_two-errors_ansi.log", "buildstage",
     "#9 [buildstage 2/3] RUN  echo \"**** install build packages ****\" &&   apt-get up"
     "date && apt-get install -y --no-install-recommends     build-essential",
     false},
    /* \r progress meters inside log lines; the 593-byte header is capped at 512. */
    {"realworld/buildkit-plain/06_containerforge_bake_error_carriage-returns.log", "buildstage",
     "#10 [buildstage 3/3] RUN echo \"**** fetch source code ****\" &&   mkdir -p     /t"
     "mp/pwndrop &&   curl -fL -o   /tmp/pwndrop-src.tar.gz     \"https://github.com/kg"
     "retzky/pwndrop/archive/refs/tags/${VERSION}.tar.gz\" || curl -fL -o   /tmp/pwndro"
     "p-src.tar.gz     \"https://github.com/kgretzky/pwndrop/archive/refs/tags/v${VERSI"
     "ON}.tar.gz\" &&   tar xf   /tmp/pwndrop-src.tar.gz -C     /tmp/pwndrop --strip-co"
     "mponents=1 &&   echo \"**** compile pwndrop  ****\" &&   cd /tmp/pwndrop &&   go b"
     "uild -ldflags=\"-s -w\"     -o /ap",
     false},
    /* Single-stage Dockerfile: "[5/5]" names no stage. */
    {"realworld/buildkit-plain/07_containerforge_bake_success_long-run.log", "",
     "#10 [5/5] WORKDIR /config", false},
    {"generated/ninja-1.11.1_cold_piped.txt", "", "[10/10] Linking C executable app", false},
    {"generated/ninja-1.11.1_warm_piped.txt", "", "[10/10] Linking C executable app", false},
    /* The failed edge's command line (ccache + cc, -o and -c) comes after "[1/3]". */
    {"generated/ninja-1.11.1_failure_piped.txt", "",
     "ccache /usr/bin/cc    -MD -MT CMakeFiles/lib2.dir/src/f6.c.o -MF "
     "CMakeFiles/lib2.dir/src/f6.c.o.d -o CMakeFiles/lib2.dir/src/f6.c.o -c "
     "/tmp/research_fmt/generated/proj/src/f6.c",
     false},
    /* make's "Leaving directory" lines after the last "[100%]" are noise. */
    {"generated/make-cmake-3.25_j4_piped.txt", "", "[100%] Built target app", false},
};

static unsigned passed, failed;

static void check(bool ok, const char *path, const char *what)
{
        if (ok) {
                passed++;
                return;
        }
        failed++;
        fprintf(stderr, "FAIL: %s: %s\n", path, what);
}

static void feed_cb(void *userdata, const char *line, size_t len, bool truncated)
{
        (void)truncated;
        logctx_feed_line(userdata, line, len);
}

/* Feed buf in chunks of the given sizes (cycled); returns 0 or -errno. */
static int replay(const char *buf, size_t len, const size_t *chunks, size_t nchunks,
                  struct logctx **ret)
{
        struct linebuf *lb = NULL;
        struct logctx *c = NULL;
        size_t off = 0, i = 0;
        int r;

        r = linebuf_new(0, &lb);
        if (r < 0)
                return r;
        r = logctx_new(NULL, &c);
        if (r < 0) {
                linebuf_free(lb);
                return r;
        }
        while (off < len) {
                size_t n = MIN(chunks[i++ % nchunks], len - off);

                linebuf_feed(lb, buf + off, n, feed_cb, c);
                off += n;
        }
        linebuf_flush(lb, feed_cb, c);
        linebuf_free(lb);
        *ret = c;
        return 0;
}

static void check_invariants(const char *path, struct logctx *c)
{
        const char *ctx = logctx_context(c), *st = logctx_stage(c);

        check(strlen(ctx) <= SAMPLE_CONTEXT_MAX, path, "context longer than SAMPLE_CONTEXT_MAX");
        check(strlen(st) <= SAMPLE_STAGE_MAX, path, "stage longer than SAMPLE_STAGE_MAX");
        check(!strchr(ctx, '\x1b') && !strchr(ctx, '\r'), path, "context holds ESC or CR");
        check(!strchr(st, '\x1b') && !strchr(st, '\r'), path, "stage holds ESC or CR");
}

/* What failed (parse/failure.h) in the two failing builds among them, as
 * read in the logs (each a prefix of the find); every file: finds bounded. */
static const struct {
        const char *path, *target, *tool, *first;
} failures[] = {
    {"generated/ninja-1.11.1_failure_piped.txt", "CMakeFiles/lib2.dir/src/f6.c.o", "ninja",
     "/tmp/research_fmt/generated/proj/src/f6.c:1:26: error: \u2018undefined_symbol\u2019 "
     "undeclared (first use in this function)"},
    {"realworld/buildkit-plain/06_containerforge_bake_error_carriage-returns.log",
     "[buildstage 3/3] RUN echo \"**** fetch source code ****\"", "buildkit",
     "ERROR: process \"/bin/bash -o pipefail -c echo \\\"**** fetch source code"},
};

static void check_failure(const char *rel, const char *buf, size_t len)
{
        struct failure f = {0};

        for (const char *p = buf, *end = buf + len, *nl; p < end; p = nl + 1) {
                nl = memchr(p, '\n', (size_t)(end - p));
                nl = nl ? nl : end;
                failure_line(&f, p, (size_t)(nl - p));
        }
        check(strlen(f.r.target) <= FAILURE_TEXT_MAX && strlen(f.r.first) <= FAILURE_TEXT_MAX &&
                  strlen(f.r.last) <= FAILURE_TEXT_MAX,
              rel, "failure finds bounded");
        for (size_t i = 0; i < ARRAY_SIZE(failures); i++) {
                if (strcmp(failures[i].path, rel) != 0)
                        continue;
                printf("  failed: '%s' (%s)\n  first error: '%s'\n", f.r.target, f.r.tool, f.r.first);
                check(strncmp(f.r.target, failures[i].target, strlen(failures[i].target)) == 0 &&
                          strcmp(f.r.tool, failures[i].tool) == 0 &&
                          strncmp(f.r.first, failures[i].first, strlen(failures[i].first)) == 0,
                      rel, "what failed");
        }
}

static int visit(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
        static const size_t whole[] = {SIZE_MAX}, bytewise[] = {1},
                            ragged[] = {7, 1, 4096, 3, 64, 2, 509};
        const char *rel = fpath + strlen(SHARED_FIXTURES);
        _cleanup_free_ char *buf = NULL;
        struct logctx *a = NULL, *b = NULL, *d = NULL;
        size_t len;
        int r;

        (void)sb;
        (void)ftw;
        if (type != FTW_F)
                return 0;
        while (*rel == '/')
                rel++;
        r = read_file_at(AT_FDCWD, fpath, MAX_FILE, &buf, &len);
        if (r < 0) {
                fprintf(stderr, "buildtel: cannot read '%s': %s\n", fpath, strerror(-r));
                failed++;
                return 0;
        }
        if (replay(buf, len, whole, 1, &a) < 0 || replay(buf, len, bytewise, 1, &b) < 0 ||
            replay(buf, len, ragged, ARRAY_SIZE(ragged), &d) < 0) {
                fprintf(stderr, "buildtel: out of memory\n");
                exit(EXIT_FAILURE);
        }
        check_invariants(rel, a);
        check(strcmp(logctx_stage(a), logctx_stage(b)) == 0 &&
                  strcmp(logctx_stage(a), logctx_stage(d)) == 0,
              rel, "stage depends on chunking");
        check(strcmp(logctx_context(a), logctx_context(b)) == 0 &&
                  strcmp(logctx_context(a), logctx_context(d)) == 0,
              rel, "context depends on chunking");
        printf("%s\n  stage:   '%s'\n  context: '%s'\n", rel, logctx_stage(a), logctx_context(a));
        check_failure(rel, buf, len);
        for (size_t i = 0; i < ARRAY_SIZE(expects); i++) {
                if (strcmp(expects[i].path, rel) != 0)
                        continue;
                expects[i].seen = true;
                if (strcmp(expects[i].stage, logctx_stage(a)) != 0) {
                        fprintf(stderr, "  expected stage '%s'\n", expects[i].stage);
                        check(false, rel, "stage");
                } else
                        check(true, rel, "stage");
                if (strcmp(expects[i].context, logctx_context(a)) != 0) {
                        fprintf(stderr, "  expected context '%s'\n", expects[i].context);
                        check(false, rel, "context");
                } else
                        check(true, rel, "context");
        }
        logctx_free(a);
        logctx_free(b);
        logctx_free(d);
        return 0;
}

int main(void)
{
        struct stat st;

        if (stat(SHARED_FIXTURES, &st) < 0 || !S_ISDIR(st.st_mode)) {
                printf("SKIP: ../shared/fixtures not present\n");
                return 77;
        }
        if (nftw(SHARED_FIXTURES, visit, 16, FTW_PHYS) != 0) {
                fprintf(stderr, "buildtel: cannot walk '%s': %s\n", SHARED_FIXTURES,
                        strerror(errno));
                return EXIT_FAILURE;
        }
        for (size_t i = 0; i < ARRAY_SIZE(expects); i++)
                check(expects[i].seen, expects[i].path, "file not found");
        printf("%u passed, %u failed\n", passed, failed);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
