/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>

#include "parse/buildkit.h"
#include "parse/linebuf.h"
#include "parse/logctx.h"
#include "util/macro.h"
#include "util/util.h"
#include "helpers/parse.h"

/* ---- logline_clean ---- */

static const struct {
        const char *name;
        const char *in;
        const char *want;
} clean_cases[] = {
    {"plain", "hello world", "hello world"},
    {"trim", " \t  hello  \t ", "hello"},
    {"SGR color", "\x1b[1;31merror:\x1b[0m bad", "error: bad"},
    {"erase line", "[1/3] cc a.c\x1b[K", "[1/3] cc a.c"},
    {"OSC-8 link ST", "see \x1b]8;;https://x.org/a\x1b\\docs\x1b]8;;\x1b\\ now", "see docs now"},
    {"OSC BEL", "\x1b]0;window title\x07text", "text"},
    {"two-byte ESC",
     "\x1b"
     "7saved\x1b"
     "8",
     "saved"},
    {"charset ESC ( B", "\x1b(Bplain", "plain"},
    {"unterminated CSI", "text\x1b[12;3", "text"},
    {"unterminated OSC", "text\x1b]8;;http://x", "text"},
    {"lone ESC at end", "text\x1b", "text"},
    {"OSC aborted by ESC", "a\x1b]8;;u\x1b[0mb", "ab"},
    {"CRLF", "line\r", "line"},
    {"CR progress", "\r 10%\r 55%\r 99%", "99%"},
    {"CR then erase", "[2/9] cc b.c\r\x1b[K", "[2/9] cc b.c"},
    {"CR then blanks", "foo\r   \r", "foo"},
    {"CR meter in BuildKit log", "#10 0.161 \r  0     0\r  0    20", "0    20"},
    {"only escapes", "\x1b[0m\x1b[K", ""},
    {"empty", "", ""},
    {"invalid UTF-8 passes", "a\xff\xfe b\xc3", "a\xff\xfe b\xc3"},
    {"UTF-8 kept", "\xe2\x9c\x93 Compiled", "\xe2\x9c\x93 Compiled"},
};

static void test_clean(void **state)
{
        char out[SAMPLE_CONTEXT_MAX + 1];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(clean_cases); i++) {
                size_t n =
                    logline_clean(clean_cases[i].in, strlen(clean_cases[i].in), out, sizeof(out));

                if (strcmp(out, clean_cases[i].want) != 0 || n != strlen(out))
                        fail_msg("%s: got '%s' (%zu)", clean_cases[i].name, out, n);
        }
}

/* prefix 'a' bytes followed by tail, cleaned into a full-size buffer */
static size_t clean_padded(size_t prefix, const char *tail, char *out, size_t cap)
{
        char in[1200];
        size_t tl = strlen(tail);

        assert_true(prefix + tl <= sizeof(in));
        memset(in, 'a', prefix);
        memcpy(in + prefix, tail, tl);
        return logline_clean(in, prefix + tl, out, cap);
}

static void test_clean_cap_utf8(void **state)
{
        static const struct {
                size_t prefix;
                const char *tail;
                size_t want;
        } cases[] = {
            {600, "", 512},                  /* plain cap */
            {511, "\xc3\xa9z", 511},         /* 2-byte sequence across the cap */
            {510, "\xc3\xa9z", 512},         /* ends exactly at the cap */
            {510, "\xe2\x9c\x93z", 510},     /* 3-byte across */
            {509, "\xe2\x9c\x93z", 512},     /* fits */
            {511, "\xf0\x9f\x98\x80z", 511}, /* 4-byte across */
            {511, "\xff\xfe\xfd", 512},      /* invalid bytes: cut anywhere */
            {511, "\x80\x80", 512},          /* stray continuation bytes */
            {511, "\xe2\x9c", 512},          /* truncated sequence at the end */
        };
        char out[SAMPLE_CONTEXT_MAX + 1];

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                size_t n = clean_padded(cases[i].prefix, cases[i].tail, out, sizeof(out));

                if (n != cases[i].want || strlen(out) != n)
                        fail_msg("case %zu: got %zu, want %zu", i, n, cases[i].want);
        }
        /* A smaller out buffer caps at cap - 1, also UTF-8 safe. */
        assert_int_equal(logline_clean("ab\xc3\xa9", 4, out, 4), 2);
        assert_string_equal(out, "ab");
        assert_int_equal(logline_clean("abcdef", 6, out, 4), 3);
        assert_string_equal(out, "abc");
        assert_int_equal(logline_clean("abc", 3, out, 0), 0);
}

/* ---- logline_classify ---- */

static const struct {
        const char *line;
        enum logline_kind kind;
        bool work;
        const char *stage; /* NULL: sets none */
} classify_cases[] = {
    {"", LOGLINE_BLANK, false, NULL},
    {"hello there", LOGLINE_NOISE, false, NULL},
    /* compiler diagnostics and progress bars: never context */
    {"^~~~~~~~", LOGLINE_DIAG, false, NULL},
    {"~~~~^~~~", LOGLINE_DIAG, false, NULL},
    {"| ^~~~~~~~", LOGLINE_DIAG, false, NULL},
    {"|", LOGLINE_DIAG, false, NULL},
    {"123 |   while (x)", LOGLINE_DIAG, false, NULL},
    {"12 | int x;", LOGLINE_DIAG, false, NULL},
    {"4 warnings generated.", LOGLINE_DIAG, false, NULL},
    {"1 warning and 2 errors generated.", LOGLINE_DIAG, false, NULL},
    {"2 errors generated.", LOGLINE_DIAG, false, NULL},
    {"In file included from /usr/include/c++/12/map:60,", LOGLINE_DIAG, false, NULL},
    {"from ../src/a.h:3,", LOGLINE_DIAG, false, NULL},
    {"In function 'main':", LOGLINE_DIAG, false, NULL},
    {"src/x.cpp: In function 'int main()':", LOGLINE_DIAG, false, NULL},
    {"src/x.cpp: At global scope:", LOGLINE_DIAG, false, NULL},
    {"src/x.cpp:12:5: warning: unused variable 'y' [-Wunused-variable]", LOGLINE_DIAG, false, NULL},
    {"x.c:3: error: expected ';'", LOGLINE_DIAG, false, NULL},
    {"/a/b.h:7:1: note: declared here", LOGLINE_DIAG, false, NULL},
    {"x.cpp:9:3: fatal error: y.h: No such file", LOGLINE_DIAG, false, NULL},
    {"x.cpp:12:3:   required from here", LOGLINE_DIAG, false, NULL},
    {"note: candidate expects 2 arguments", LOGLINE_DIAG, false, NULL},
    {"warning: overriding recipe", LOGLINE_DIAG, false, NULL},
    {"[=======>            ] 45%", LOGLINE_DIAG, false, NULL},
    {"45% |\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88     | 3/7", LOGLINE_DIAG, false, NULL},
    {"########################", LOGLINE_DIAG, false, NULL},
    {"......", LOGLINE_DIAG, false, NULL},
    {"----------------------------------------", LOGLINE_DIAG, false, NULL},
    /* not diagnostics */
    {"checking: foo", LOGLINE_NOISE, false, NULL},
    {"Install the project...", LOGLINE_NOISE, false, NULL},
    {"from here on", LOGLINE_NOISE, false, NULL},
    {"100 files", LOGLINE_NOISE, false, NULL},
    {"Info: 3 warnings", LOGLINE_NOISE, false, NULL},
    {"[ 42%] Built target x", LOGLINE_MAKE, true, NULL},
    {"-- Configuring done", LOGLINE_NOISE, false, NULL},
    {"x.c:12 is fine", LOGLINE_NOISE, false, NULL},
    /* ninja */
    {"[1/10] Building C object CMakeFiles/a.dir/a.c.o", LOGLINE_NINJA, true, NULL},
    {"[949/1200 3.2s] Linking CXX executable app", LOGLINE_NINJA, true, NULL},
    {"[1/10]", LOGLINE_NOISE, false, NULL},
    {"[1/10]x", LOGLINE_NOISE, false, NULL},
    {"[WARNING] 2026-02-28 11:39:29 slow", LOGLINE_NOISE, false, NULL},
    {"[/3] x", LOGLINE_NOISE, false, NULL},
    /* make / cmake */
    {"[ 42%] Building CXX object src/CMakeFiles/x.dir/y.cpp.o", LOGLINE_MAKE, true, NULL},
    {"[  5%] Linking C static library liblib1.a", LOGLINE_MAKE, true, NULL},
    {"[100%] Built target app", LOGLINE_MAKE, true, NULL},
    {"[1000%] Built target app", LOGLINE_NOISE, false, NULL},
    {"[ 42%]", LOGLINE_NOISE, false, NULL},
    {"make[2]: *** [x.make:76: a.o] Error 1", LOGLINE_MAKE, false, NULL},
    {"make: *** [Makefile:91: all] Error 2", LOGLINE_MAKE, false, NULL},
    {"make[1]: Entering directory '/src'", LOGLINE_NOISE, false, NULL},
    {"makefile stuff", LOGLINE_NOISE, false, NULL},
    /* BuildKit step headers and stages */
    {"#12 [pytorch builder 3/9] RUN pip install .", LOGLINE_BUILDKIT_STEP, true, "pytorch builder"},
    {"#5 [builder 2/4] RUN make", LOGLINE_BUILDKIT_STEP, true, "builder"},
    {"#7 [3/5] COPY . .", LOGLINE_BUILDKIT_STEP, true, NULL},
    {"#7 [ 3/12] COPY . .", LOGLINE_BUILDKIT_STEP, true, NULL},
    {"#9 [builder  3/12] RUN x", LOGLINE_BUILDKIT_STEP, true, "builder"},
    {"#12 [beat stage-1 2/6] RUN apt-get update", LOGLINE_BUILDKIT_STEP, true, "beat stage-1"},
    {"#4 [linux/arm64 builder 2/4] RUN make", LOGLINE_BUILDKIT_STEP, true, "builder"},
    {"#4 [linux/amd64->arm64 builder 2/4] RUN make", LOGLINE_BUILDKIT_STEP, true, "builder"},
    {"#4 [api linux/arm64 builder 2/4] RUN make", LOGLINE_BUILDKIT_STEP, true,
     "api linux/arm64 builder"},
    {"#4 [linux/arm64 2/4] RUN make", LOGLINE_BUILDKIT_STEP, true, NULL},
    {"#6 [stage-1 1/5] FROM docker.io/library/ubuntu:24.04", LOGLINE_BUILDKIT_STEP, true,
     "stage-1"},
    {"#1 [internal] load build definition from Dockerfile", LOGLINE_BUILDKIT, false, NULL},
    {"#2 [beat internal] load metadata for x", LOGLINE_BUILDKIT, false, NULL},
    {"#28 [beat] exporting to image", LOGLINE_BUILDKIT, false, NULL},
    {"#9 [nix] nix build .#hello", LOGLINE_BUILDKIT, false, NULL},
    {"#5 [builder 2/4]", LOGLINE_BUILDKIT, false, NULL},
    {"#3 transferring dockerfile: 1.53kB 0.0s done", LOGLINE_BUILDKIT, false, NULL},
    {"#20 DONE 11.3s", LOGLINE_BUILDKIT, false, NULL},
    {"#34 1.202 > next build", LOGLINE_BUILDKIT, false, NULL},
    {"#34 1.202", LOGLINE_BUILDKIT, false, NULL},
    {"#0 building with \"default\" instance using docker driver", LOGLINE_BUILDKIT, false, NULL},
    {"#x [a 1/2] RUN y", LOGLINE_NOISE, false, NULL},
    {"# comment", LOGLINE_NOISE, false, NULL},
    /* work inside a BuildKit step */
    {"#12 1.234 cc -c foo.c -o foo.o", LOGLINE_COMPILER, true, NULL},
    {"#12 25.15 [3/40] Building CXX object x.o", LOGLINE_NINJA, true, NULL},
    {"#12 123.4 [ 50%] Building C object y.o", LOGLINE_MAKE, true, NULL},
    {"#12 1.2345 cc -c foo.c", LOGLINE_BUILDKIT, false, NULL},
    /* compiler command lines */
    {"gcc -O2 -c foo.c", LOGLINE_COMPILER, true, NULL},
    {"/usr/bin/c++ -DX -o app main.o", LOGLINE_COMPILER, true, NULL},
    {"clang++ -std=c++20 -c a.cpp -o a.o", LOGLINE_COMPILER, true, NULL},
    {"cc -oa.out a.c", LOGLINE_COMPILER, true, NULL},
    {"aarch64-linux-gnu-gcc -c x.c", LOGLINE_COMPILER, true, NULL},
    {"arm-none-eabi-g++ -c x.cpp", LOGLINE_COMPILER, true, NULL},
    {"gcc-12 -c x.c", LOGLINE_COMPILER, true, NULL},
    {"clang-17 -c x.c", LOGLINE_COMPILER, true, NULL},
    {"x86_64-linux-gnu-gcc-12.2 -c x.c", LOGLINE_COMPILER, true, NULL},
    {"ccache /usr/bin/cc -MD -o f6.c.o -c f6.c", LOGLINE_COMPILER, true, NULL},
    {"sccache clang -c x.c", LOGLINE_COMPILER, true, NULL},
    {"/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet x.c -o /tmp/x.s", LOGLINE_COMPILER, true, NULL},
    {"cc1plus -quiet x.cpp -o x.s", LOGLINE_COMPILER, true, NULL},
    {"nvcc -c kern.cu -o kern.o", LOGLINE_COMPILER, true, NULL},
    {"rustc --edition=2021 src/main.rs -o app", LOGLINE_COMPILER, true, NULL},
    {"ld -o app a.o b.o", LOGLINE_COMPILER, true, NULL},
    {"gcc --version", LOGLINE_NOISE, false, NULL},
    {"gcc -c", LOGLINE_COMPILER, true, NULL},
    {"gcc -cfoo x.c", LOGLINE_NOISE, false, NULL},
    {"gcc", LOGLINE_NOISE, false, NULL},
    {"ccache -s", LOGLINE_NOISE, false, NULL},
    {"ccache -o cache_dir=/x", LOGLINE_NOISE, false, NULL},
    {"echo gcc -c x.c", LOGLINE_NOISE, false, NULL},
    {"gccx -c x.c", LOGLINE_NOISE, false, NULL},
    {"my-tool -c x", LOGLINE_NOISE, false, NULL},
    {"-gcc -c x", LOGLINE_NOISE, false, NULL},
    /* GitHub Actions */
    {"::group::Build wheels", LOGLINE_GHA_GROUP, false, "Build wheels"},
    {"::group::", LOGLINE_GHA_GROUP, false, NULL},
    {"::endgroup::", LOGLINE_NOISE, false, NULL},
    {"##[group]Run actions/checkout@v4", LOGLINE_GHA_GROUP, false, "Run actions/checkout@v4"},
    {"2025-07-03T08:13:03.5879809Z ::group::Test", LOGLINE_GHA_GROUP, false, "Test"},
    {"2025-07-03T08:13:03.5879809Z #5 [b 2/4] RUN make", LOGLINE_BUILDKIT_STEP, true, "b"},
    {"2025-07-03T08:13:03Z [1/2] cc a", LOGLINE_NINJA, true, NULL},
    {"2025-07-03 08:13:03 [1/2] cc a", LOGLINE_NOISE, false, NULL},
    {"2025-07-03T08:13:03.5879809Z", LOGLINE_NOISE, false, NULL},
    /* quiet rules: kbuild, automake silent rules, libtool, redis (colour is
     * cleaned before classification) */
    {"CC      kernel/fork.o", LOGLINE_QUIET, true, NULL},
    {"CC [M]  drivers/net/dummy.o", LOGLINE_QUIET, true, NULL},
    {"LD [M]  fs/ext4/ext4.ko", LOGLINE_QUIET, true, NULL},
    {"HOSTCC  scripts/basic/fixdep", LOGLINE_QUIET, true, NULL},
    {"GEN     Makefile", LOGLINE_QUIET, true, NULL},
    {"AR      lib/lib.a", LOGLINE_QUIET, true, NULL},
    {"LD      vmlinux.o", LOGLINE_QUIET, true, NULL},
    {"CCLD    prog", LOGLINE_QUIET, true, NULL},
    {"CXXLD   libtool-app", LOGLINE_QUIET, true, NULL},
    {"CC       libfoo_la-foo.lo", LOGLINE_QUIET, true, NULL},
    {"CC adlist.o", LOGLINE_QUIET, true, NULL},
    {"LINK redis-server", LOGLINE_QUIET, true, NULL},
    {"INSTALL redis-sentinel", LOGLINE_QUIET, true, NULL},
    {"CC", LOGLINE_NOISE, false, NULL},
    {"CC      ", LOGLINE_NOISE, false, NULL},
    {"CC is not set, using cc", LOGLINE_NOISE, false, NULL},
    {"OK      done", LOGLINE_NOISE, false, NULL},
    {"Cc foo.o", LOGLINE_NOISE, false, NULL},
    {"CC [M]", LOGLINE_NOISE, false, NULL},
    /* cargo */
    {"Compiling serde v1.0.200", LOGLINE_CARGO, true, NULL},
    {"Compiling app v0.1.0 (/src/app)", LOGLINE_CARGO, true, NULL},
    {"Checking libc v0.2.155", LOGLINE_CARGO, true, NULL},
    {"Compiling", LOGLINE_NOISE, false, NULL},
    {"Compiling serde", LOGLINE_NOISE, false, NULL},
    {"Compiling serde version 1", LOGLINE_NOISE, false, NULL},
    {"Finished `release` profile [optimized] target(s) in 1m 02s", LOGLINE_NOISE, false, NULL},
    /* meson/ninja and cmake progress, as they print it */
    {"[12/340] Compiling C object src/libx.a.p/heavy.c.o", LOGLINE_NINJA, true, NULL},
    {"[ 45%] Building CXX object src/CMakeFiles/app.dir/main.cpp.o", LOGLINE_MAKE, true, NULL},
    /* Bazel */
    {"[1,234 / 5,678] Compiling src/heavy.cc; 3s linux-sandbox", LOGLINE_BAZEL, true, NULL},
    {"[0 / 3] [Prepa] BazelWorkspaceStatusAction stable-status.txt", LOGLINE_BAZEL, true, NULL},
    {"[12 / 1,000,000] Linking app", LOGLINE_BAZEL, true, NULL},
    {"[1,23 / 5] x", LOGLINE_NOISE, false, NULL},
    {"[1 / ] x", LOGLINE_NOISE, false, NULL},
    {"[1 / 2]", LOGLINE_NOISE, false, NULL},
};

static const char *kind_name(enum logline_kind k)
{
        static const char *const names[] = {"BLANK", "NOISE",    "NINJA",    "MAKE",
                                            "STEP",  "BUILDKIT", "COMPILER", "GHA_GROUP",
                                            "QUIET", "CARGO",    "BAZEL",    "DIAG"};

        return (size_t)k < ARRAY_SIZE(names) ? names[k] : "?";
}

static void test_classify(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(classify_cases); i++) {
                const char *line = classify_cases[i].line, *want = classify_cases[i].stage;
                struct logline l;

                logline_classify(line, strlen(line), &l);
                if (l.kind != classify_cases[i].kind || l.work != classify_cases[i].work)
                        fail_msg("'%s': kind %s work %d, want %s %d", line, kind_name(l.kind),
                                 l.work, kind_name(classify_cases[i].kind), classify_cases[i].work);
                if (!want) {
                        if (l.stage || l.stage_len)
                                fail_msg("'%s': unexpected stage '%.*s'", line, (int)l.stage_len,
                                         l.stage);
                        continue;
                }
                if (!l.stage || l.stage_len != strlen(want) ||
                    memcmp(l.stage, want, l.stage_len) != 0)
                        fail_msg("'%s': stage '%.*s', want '%s'", line, (int)l.stage_len,
                                 l.stage ? l.stage : "", want);
                /* The stage points into the line. */
                assert_true(l.stage >= line && l.stage + l.stage_len <= line + strlen(line));
        }
}

/* ---- logctx: sequences of lines ---- */

#define MAX_LINES 8
static const struct {
        const char *name;
        const char *stage_regex;
        const char *fixed_stage;
        const char *lines[MAX_LINES];
        const char *stage;
        const char *context;
} seq_cases[] = {
    {"nothing", NULL, NULL, {NULL}, "", ""},
    {"blank never", NULL, NULL, {"   ", "\x1b[0m", "\r"}, "", ""},
    {"noise until work",
     NULL,
     NULL,
     {"configuring", "checking for gcc... yes"},
     "",
     "checking for gcc... yes"},
    {"work beats later noise",
     NULL,
     NULL,
     {"noise 1", "[1/4] cc a.c", "warning: x", "", "noise 2"},
     "",
     "[1/4] cc a.c"},
    {"latest work wins",
     NULL,
     NULL,
     {"[1/4] cc a.c", "junk", "[ 50%] Building C object b.o", "gcc -c c.c", "more junk"},
     "",
     "gcc -c c.c"},
    {"make failure keeps the compile line",
     NULL,
     NULL,
     {"[ 50%] Building C object b.o", "b.c:1: error: x", "make[2]: *** [b.o] Error 1"},
     "",
     "[ 50%] Building C object b.o"},
    {"bake stages",
     NULL,
     NULL,
     {"#12 [pytorch builder 3/9] RUN pip install .", "#13 [pytorch internal] load context",
      "#14 [pytorch] exporting to image", "#2 [internal] load .dockerignore"},
     "pytorch/builder",
     "#12 [pytorch builder 3/9] RUN pip install ."},
    {"platform dropped in the middle",
     NULL,
     NULL,
     {"#4 [api linux/amd64->arm64 builder 2/4] RUN make"},
     "api/builder",
     "#4 [api linux/amd64->arm64 builder 2/4] RUN make"},
    {"unnamed step keeps the stage",
     NULL,
     NULL,
     {"#5 [builder 2/4] RUN make", "#7 [3/5] COPY . .", "#7 DONE 0.1s"},
     "builder",
     "#7 [3/5] COPY . ."},
    {"beat stage-1",
     NULL,
     NULL,
     {"#12 [beat stage-1 2/6] RUN apt-get update", "#12 0.4 Get:1 http://x"},
     "beat/stage-1",
     "#12 [beat stage-1 2/6] RUN apt-get update"},
    {"compiler in a step",
     NULL,
     NULL,
     {"#5 [builder 2/4] RUN make", "#5 1.234 cc -c foo.c -o foo.o", "#5 1.300 done"},
     "builder",
     "#5 1.234 cc -c foo.c -o foo.o"},
    {"gha groups",
     NULL,
     NULL,
     {"::group::Configure", "-- Detecting C compiler", "::endgroup::", "[1/2] cc x.c"},
     "Configure",
     "[1/2] cc x.c"},
    {"gha group then bake step",
     NULL,
     NULL,
     {"::group::Build", "#5 [b 2/4] RUN x"},
     "b",
     "#5 [b 2/4] RUN x"},
    {"fixed stage while nothing else", "", "release", {"[1/2] cc x.c"}, "release", "[1/2] cc x.c"},
    {"fixed stage overridden", NULL, "release", {"::group::Test"}, "Test", "::group::Test"},
    {"regex capture",
     "^== Stage ([a-z]+) ==",
     NULL,
     {"== Stage deps ==", "x", "== Stage link =="},
     "link",
     "== Stage link =="},
    {"regex whole match",
     "stage-[0-9]+",
     NULL,
     {"entering stage-42 now"},
     "stage-42",
     "entering stage-42 now"},
    {"regex on the cleaned line",
     "^step (.*)$",
     NULL,
     {"\x1b[1mstep \x1b[32mtwo\x1b[0m  "},
     "two",
     "step two"},
    {"regex beats bake header",
     "RUN ([a-z]+)",
     NULL,
     {"#5 [builder 2/4] RUN make"},
     "make",
     "#5 [builder 2/4] RUN make"},
    {"bake header when regex fails",
     "^never$",
     NULL,
     {"#5 [builder 2/4] RUN make"},
     "builder",
     "#5 [builder 2/4] RUN make"},
    {"empty capture sets nothing", "^x(y*)", "fixed", {"xz"}, "fixed", "xz"},
    {"ansi and cr cleaned",
     NULL,
     NULL,
     {"\x1b[1m[1/3] a\x1b[K\r[2/3] b\x1b[K\r\x1b[K"},
     "",
     "[2/3] b"},
};

static void test_sequences(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(seq_cases); i++) {
                struct logctx_config cfg = {
                    .stage_regex = seq_cases[i].stage_regex,
                    .fixed_stage = seq_cases[i].fixed_stage,
                };
                struct logctx *c = NULL;

                if (cfg.stage_regex && !*cfg.stage_regex)
                        cfg.stage_regex = NULL;
                assert_int_equal(logctx_new(&cfg, &c), 0);
                for (size_t j = 0; j < MAX_LINES && seq_cases[i].lines[j]; j++)
                        logctx_feed_line(c, seq_cases[i].lines[j], strlen(seq_cases[i].lines[j]));
                if (strcmp(logctx_stage(c), seq_cases[i].stage) != 0)
                        fail_msg("%s: stage '%s', want '%s'", seq_cases[i].name, logctx_stage(c),
                                 seq_cases[i].stage);
                if (strcmp(logctx_context(c), seq_cases[i].context) != 0)
                        fail_msg("%s: context '%s', want '%s'", seq_cases[i].name,
                                 logctx_context(c), seq_cases[i].context);
                logctx_free(c);
        }
}

/* ---- the context rule, and lines fed with their time ---- */

static const struct {
        const char *name;
        bool work, seen_work;
        double last_work_s, now_s, hold_s;
        bool wins;
} rule_cases[] = {
    {"work always wins", true, true, 10.0, 10.0, 1.0, true},
    {"noise before any work", false, false, 0.0, 5.0, 1.0, true},
    {"noise right after work", false, true, 10.0, 10.5, 1.0, false},
    {"noise exactly one interval later", false, true, 10.0, 11.0, 1.0, false},
    {"noise later than one interval", false, true, 10.0, 11.25, 1.0, true},
    {"same instant, no interval", false, true, 3.0, 3.0, 0.0, false},
    {"unknown time keeps the work line", false, true, 3.0, NAN, 1.0, false},
};

static void test_rule(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(rule_cases); i++) {
                bool got = logctx_line_wins(rule_cases[i].work, rule_cases[i].seen_work,
                                            rule_cases[i].last_work_s, rule_cases[i].now_s,
                                            rule_cases[i].hold_s);

                if (got != rule_cases[i].wins)
                        fail_msg("%s: got %d", rule_cases[i].name, got);
        }
}

#define MAX_TIMED 8
static const struct {
        const char *name;
        double hold_s;
        struct {
                double t;
                const char *line;
        } lines[MAX_TIMED];
        const char *context;
} timed_cases[] = {
    {"kbuild: the compile holds while it is fresh",
     1.0,
     {{0.0, "gcc -O2 -c -o big.o big.c"},
      {0.1, "\x1b[32m  CC\x1b[0m      heavy.o"},
      {0.5, "note: x"}},
     "CC      heavy.o"},
    {"kbuild: later output wins once the compile line is old",
     1.0,
     {{0.0, "  CC      heavy.o"}, {2.0, "generating docs for heavy"}},
     "generating docs for heavy"},
    {"a compiler's diagnostics never win, however old the work line",
     1.0,
     {{0.0, "  CC      heavy.o"},
      {2.0, "heavy.c:12: warning: unused"},
      {3.0, "   12 |   while (x)"},
      {3.0, "      |             ^~~~~~~~"},
      {4.0, "In file included from /usr/include/stdio.h:27,"}},
     "CC      heavy.o"},
    {"a newer work line wins at once",
     1.0,
     {{0.0, "  CC      a.o"}, {0.2, "  CC      b.o"}},
     "CC      b.o"},
    {"blank lines never win",
     0.2,
     {{0.0, "[3/9] Compiling C object heavy.c.o"}, {5.0, ""}, {6.0, "   "}},
     "[3/9] Compiling C object heavy.c.o"},
    {"libtool then a late linker message",
     0.5,
     {{0.0, "  CC       libfoo_la-foo.lo"},
      {0.3, "  CCLD     libfoo.la"},
      {3.0, "libtool: link: ar"}},
     "libtool: link: ar"},
    {"cargo",
     1.0,
     {{0.0, "   Compiling serde v1.0.200"}, {0.4, "warning: unused import"}},
     "Compiling serde v1.0.200"},
    {"bazel progress then INFO much later",
     1.0,
     {{0.0, "[1,234 / 5,678] Compiling src/heavy.cc; 3s linux-sandbox"},
      {9.0, "INFO: Elapsed time: 9.1s"}},
     "INFO: Elapsed time: 9.1s"},
    {"BuildKit 0.8's digest and DONE lines never become the context",
     0.2,
     {{0.0, "#12 [build 2/3] RUN make"},
      {5.0, "#12 sha256:9c28aec562426215ab6f496a071110f8d6b1cbc0fb1d76f862b169d80b3fb734"},
      {6.0, "#12 DONE 0.2s"},
      {7.0, "#12 CACHED"},
      {8.0, "#12 DONE"},
      {9.0, "#12 ..."}},
     "#12 [build 2/3] RUN make"},
    {"a status line after them does",
     0.2,
     {{0.0, "#12 [build 2/3] RUN make"},
      {6.0, "#12 DONE 0.2s"},
      {7.0, "#14 writing image sha256:0b done"}},
     "#14 writing image sha256:0b done"},
    {"cmake progress holds against a quick warning",
     1.0,
     {{0.0, "[ 45%] Building CXX object CMakeFiles/app.dir/heavy.cpp.o"},
      {0.9, "In file included"}},
     "[ 45%] Building CXX object CMakeFiles/app.dir/heavy.cpp.o"},
};

static void test_timed(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(timed_cases); i++) {
                struct logctx_config cfg = {.hold_s = timed_cases[i].hold_s};
                struct logctx *c = NULL;

                assert_int_equal(logctx_new(&cfg, &c), 0);
                for (size_t j = 0; j < MAX_TIMED && timed_cases[i].lines[j].line; j++) {
                        const char *l = timed_cases[i].lines[j].line;

                        logctx_feed_line_bk(c, l, strlen(l), timed_cases[i].lines[j].t, NULL);
                }
                if (strcmp(logctx_context(c), timed_cases[i].context) != 0)
                        fail_msg("%s: context '%s', want '%s'", timed_cases[i].name,
                                 logctx_context(c), timed_cases[i].context);
                logctx_free(c);
        }
}

static void test_bad_regex(void **state)
{
        struct logctx_config cfg = {.stage_regex = "(unclosed"};
        struct logctx *c = (struct logctx *)&cfg; /* must stay untouched */

        (void)state;
        assert_int_equal(logctx_new(&cfg, &c), -EINVAL);
        assert_ptr_equal(c, (struct logctx *)&cfg);
        assert_int_equal(logctx_new(NULL, &c), 0);
        assert_string_equal(logctx_stage(c), "");
        assert_string_equal(logctx_context(c), "");
        logctx_free(c);
        logctx_free(NULL);
}

static void test_caps(void **state)
{
        char line[2048], want[SAMPLE_STAGE_MAX + 1];
        struct logctx_config cfg = {.stage_regex = "^::st (.*)$"};
        struct logctx *c = NULL;
        int n;

        (void)state;
        assert_int_equal(logctx_new(&cfg, &c), 0);
        /* A 1000-byte stage name and context are capped. */
        n = snprintf(line, sizeof(line), "::st %01000d", 7);
        assert_true(n > 0 && (size_t)n < sizeof(line));
        logctx_feed_line(c, line, (size_t)n);
        assert_int_equal(strlen(logctx_stage(c)), SAMPLE_STAGE_MAX);
        memset(want, '0', SAMPLE_STAGE_MAX);
        want[SAMPLE_STAGE_MAX] = '\0';
        assert_string_equal(logctx_stage(c), want);
        assert_int_equal(strlen(logctx_context(c)), SAMPLE_CONTEXT_MAX);
        logctx_free(c);

        /* -c far past the context cap still makes a compiler line. */
        assert_int_equal(logctx_new(NULL, &c), 0);
        logctx_feed_line(c, "[1/2] first", 11);
        memset(line, 'I', sizeof(line));
        memcpy(line, "\x1b[0mgcc ", 8);
        memcpy(line + sizeof(line) - 7, " -c x.c", 7);
        logctx_feed_line(c, line, sizeof(line));
        assert_int_equal(strlen(logctx_context(c)), SAMPLE_CONTEXT_MAX);
        assert_memory_equal(logctx_context(c), "gcc III", 7);
        logctx_free(c);
}

/* ---- the BuildKit prefix, parsed once (bkline_parse, parse/buildkit.c) ---- */

static const struct {
        const char *name, *line;
        bool hash, ok;
        uint64_t n;
        int digits_end, rest, secs_end; /* offsets; -1: NULL */
        int end;                        /* offset of bl.end */
} bk_cases[] = {
    {"log line", "#10 0.547 [1/3] cc", true, true, 10, 3, 4, 9, 18},
    {"secs at the end", "#10 0.547", true, true, 10, 3, 4, 9, 9},
    {"secs and a space", "#10 0.547 ", true, true, 10, 3, 4, 9, 10},
    {"secs before CR", "#7 1.2\r\r", true, true, 7, 2, 3, 6, 6},
    {"four decimals", "#7 1.2345 x", true, true, 7, 2, 3, -1, 11},
    {"no decimals", "#7 12 x", true, true, 7, 2, 3, -1, 7},
    {"tab after secs", "#7 1.2\tx", true, true, 7, 2, 3, -1, 8},
    {"header", "#5 [builder 2/4] RUN make", true, true, 5, 2, 3, -1, 25},
    {"DONE", "#5 DONE 0.1s", true, true, 5, 2, 3, -1, 12},
    {"18 digits", "#123456789012345678 x", true, true, 123456789012345678ull, 19, 20, -1, 21},
    {"19 digits", "#1234567890123456789 1.0 x", true, false, 0, 20, -1, -1, 26},
    {"no space", "#5x", true, false, 0, 2, -1, -1, 3},
    {"only digits", "#5", true, false, 0, 2, -1, -1, 2},
    {"group", "##[group]Build", false, false, 0, -1, -1, -1, 14},
    {"hash only", "#", false, false, 0, -1, -1, -1, 1},
    {"plain text", "[1/2] cc -c a.c", false, false, 0, -1, -1, -1, 15},
};

static void test_bkline(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(bk_cases); i++) {
                const char *l = bk_cases[i].line;
                struct bkline bl;

                bkline_parse(l, strlen(l), &bl);
                if (bl.hash != bk_cases[i].hash || bl.ok != bk_cases[i].ok ||
                    (bl.ok && bl.n != bk_cases[i].n) || bl.end != l + bk_cases[i].end)
                        fail_msg("%s: hash %d ok %d n %llu end %td", bk_cases[i].name, bl.hash,
                                 bl.ok, (unsigned long long)bl.n, bl.end - l);
                if (bl.hash && bl.digits_end != l + bk_cases[i].digits_end)
                        fail_msg("%s: digits end at %td", bk_cases[i].name, bl.digits_end - l);
                if (bl.ok && bl.rest != l + bk_cases[i].rest)
                        fail_msg("%s: rest at %td", bk_cases[i].name, bl.rest - l);
                if (bk_cases[i].secs_end < 0 ? bl.secs_end != NULL
                                             : bl.secs_end != l + bk_cases[i].secs_end)
                        fail_msg("%s: secs end at %td", bk_cases[i].name,
                                 bl.secs_end ? bl.secs_end - l : -1);
        }
}

/* What the recorder feeds (each line with its prefix parsed, the chunk
 * known) says after every line what the plain lines say, here for the
 * lines of bk_cases and a few that need cleaning, and below for whole logs. */
static void test_bkline_same(void **state)
{
        static const char *const more[] = {
            "#5 1.2 \x1b[1m[1/2] cc -c a.c\x1b[0m",
            "#5 1.2 [3/4] b\r[4/4] c",
            "#6 0.1   cc -c a.c -o a.o",
            "#6 0.1 \t",
            "#6 0.1 note: x",
            "#6 0.1  ",
            "#8 0.2 CC foo.o",
            "#9 1.0 Compiling serde v1.0.2",
        };
        struct logctx *a = NULL, *b = NULL;
        double now = 0;

        (void)state;
        assert_int_equal(logctx_new(&(struct logctx_config){.hold_s = 1.0}, &a), 0);
        assert_int_equal(logctx_new(&(struct logctx_config){.hold_s = 1.0}, &b), 0);
        for (size_t i = 0; i < ARRAY_SIZE(bk_cases) + ARRAY_SIZE(more); i++, now += 0.75) {
                const char *l =
                    i < ARRAY_SIZE(bk_cases) ? bk_cases[i].line : more[i - ARRAY_SIZE(bk_cases)];
                struct bkline bl;

                logctx_feed_line_bk(a, l, strlen(l), now, NULL);
                bkline_parse(l, strlen(l), &bl);
                logctx_chunk(b, l, strlen(l));
                logctx_feed_line_bk(b, l, strlen(l), now, &bl);
                logctx_chunk(b, NULL, 0);
                if (strcmp(logctx_context(a), logctx_context(b)) != 0 ||
                    strcmp(logctx_stage(a), logctx_stage(b)) != 0)
                        fail_msg("after '%s': context '%s' / '%s', stage '%s' / '%s'", l,
                                 logctx_context(a), logctx_context(b), logctx_stage(a),
                                 logctx_stage(b));
        }
        logctx_free(a);
        logctx_free(b);
}

/* ---- whole logs, fed in chunks ---- */

static void feed_cb(void *userdata, const char *line, size_t len, bool truncated)
{
        (void)truncated;
        logctx_feed_line(userdata, line, len);
}

/* As the recorder's on_line: the prefix parsed once, the chunk known. */
static void feed_cb_bk(void *userdata, const char *line, size_t len, bool truncated)
{
        struct bkline bl;

        (void)truncated;
        bkline_parse(line, len, &bl);
        logctx_feed_line_bk(userdata, line, len, 0.0, &bl);
}

static const struct {
        const char *file;
        const char *stage;
        const char *context;
} log_cases[] = {
    {"ninja.log", "", "[4/6] Linking C static library libcore.a"},
    {"ninja-tty.log", "", "[3/3] Linking C executable app"},
    {"make.log", "", "[ 50%] Building CXX object app/CMakeFiles/app.dir/main.cpp.o"},
    {"buildkit-bake.log", "api/builder", "#5 1.733 cc -o build/api build/server.o build/db.o -lpq"},
    {"buildkit-single-crlf.log", "", "#4 [3/3] COPY . ."},
    {"gha.log", "Build", "2025-07-03T08:13:06.0000000Z [2/2] Linking C executable t"},
};

/* way 0: plain lines; 1: as the recorder feeds them. */
static void feed_log(struct linebuf *lb, struct logctx *c, const char *buf, size_t len, size_t step,
                     int way)
{
        for (size_t off = 0; off < len; off += step) {
                size_t n = MIN(step, len - off);

                if (way)
                        logctx_chunk(c, buf + off, n);
                linebuf_feed(lb, buf + off, n, way ? feed_cb_bk : feed_cb, c);
                logctx_chunk(c, NULL, 0);
        }
        linebuf_flush(lb, way ? feed_cb_bk : feed_cb, c);
}

static void test_logs(void **state)
{
        static const size_t steps[] = {0, 1, 2, 3, 7, 100};

        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(log_cases); i++) {
                _cleanup_free_ char *buf = NULL;
                char path[512];
                size_t len;
                int n;

                n = snprintf(path, sizeof(path), "%s/logs/%s", FIXTURES, log_cases[i].file);
                assert_true(n > 0 && (size_t)n < sizeof(path));
                assert_int_equal(read_file_at(AT_FDCWD, path, 1 << 20, &buf, &len), 0);
                for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
                        size_t step = steps[s] ? steps[s] : len;
                        struct linebuf *lb = NULL;
                        struct logctx *c = NULL;

                        for (int way = 0; way < 2; way++) {
                                assert_int_equal(linebuf_new(0, &lb), 0);
                                assert_int_equal(logctx_new(NULL, &c), 0);
                                feed_log(lb, c, buf, len, step, way);
                                if (strcmp(logctx_stage(c), log_cases[i].stage) != 0 ||
                                    strcmp(logctx_context(c), log_cases[i].context) != 0)
                                        fail_msg("%s step %zu way %d: stage '%s' context '%s'",
                                                 log_cases[i].file, steps[s], way, logctx_stage(c),
                                                 logctx_context(c));
                                logctx_free(c);
                                linebuf_free(lb);
                        }
                }
        }
}

/* Regex + fixed stage over a whole log. */
static void test_log_regex(void **state)
{
        struct logctx_config cfg = {.stage_regex = "Built target ([a-z]+)", .fixed_stage = "cm"};
        _cleanup_free_ char *buf = NULL;
        struct linebuf *lb = NULL;
        struct logctx *c = NULL;
        size_t len;

        (void)state;
        assert_int_equal(read_file_at(AT_FDCWD, FIXTURES "/logs/make.log", 1 << 20, &buf, &len), 0);
        assert_int_equal(linebuf_new(0, &lb), 0);
        assert_int_equal(logctx_new(&cfg, &c), 0);
        /* Before the first "Built target" the fixed stage shows. */
        linebuf_feed(lb, buf, 60, feed_cb, c);
        assert_string_equal(logctx_stage(c), "cm");
        linebuf_feed(lb, buf + 60, len - 60, feed_cb, c);
        linebuf_flush(lb, feed_cb, c);
        assert_string_equal(logctx_stage(c), "util");
        logctx_free(c);
        linebuf_free(lb);
}

/* ---- the lines of a chunk, looked at as a batch ---- */

/* One chunk of lines at one instant, fed as the recorder feeds it; then
 * the context and stage it must leave (NULL: what it was). */
static const struct {
        const char *name;
        double now;
        const char *chunk;
        const char *context, *stage;
} batch_cases[] = {
    {"step, work, noise: the stage and the work", 0.0,
     "#5 [app builder 2/4] RUN make\n#5 0.1 [1/3] cc -c a.c\n#5 0.2 noise after it\n",
     "#5 0.1 [1/3] cc -c a.c", "app/builder"},
    {"noise within the hold: nothing", 0.5, "#5 0.6 just noise\n#5 0.7 more noise\n",
     "#5 0.1 [1/3] cc -c a.c", "app/builder"},
    {"noise after the hold: its last line", 2.0,
     "#5 2.1 noise one\n#5 2.2 noise two\na.c:1:2: warning: x\n\n", "#5 2.2 noise two", NULL},
    {"the last of two steps; a later all-platform step names nothing", 2.5,
     "#6 [lib 1/2] FROM debian\n#7 [app runtime 3/4] COPY x y\n#8 [linux/amd64 1/2] FROM z\n",
     "#8 [linux/amd64 1/2] FROM z", "app/runtime"},
    {"bookkeeping never the context", 4.0, "#8 DONE 0.1s\n#9 CACHED\n",
     "#8 [linux/amd64 1/2] FROM z", NULL},
    {"a GitHub group after a step", 4.1,
     "#9 [x 1/1] RUN y\n2025-07-03T08:13:03.5879809Z ##[group]Run tests\n  cc -c q.c -o q.o\n",
     "cc -c q.c -o q.o", "Run tests"},
};

static void test_batch(void **state)
{
        struct logctx *c = NULL, *ref = NULL;
        _cleanup_free_ char *big = NULL;
        size_t off = 0, cap = 1500 * 32;

        (void)state;
        assert_int_equal(logctx_new(&(struct logctx_config){.hold_s = 1.0}, &c), 0);
        assert_int_equal(logctx_new(&(struct logctx_config){.hold_s = 1.0}, &ref), 0);
        for (size_t i = 0; i < ARRAY_SIZE(batch_cases); i++) {
                const char *ch = batch_cases[i].chunk, *nl;
                char prev_stage[SAMPLE_STAGE_MAX + 1];

                snprintf(prev_stage, sizeof(prev_stage), "%s", logctx_stage(c));
                logctx_chunk(c, ch, strlen(ch));
                for (const char *l = ch; *l; l = nl + 1) {
                        struct bkline bl;

                        nl = strchr(l, '\n');
                        bkline_parse(l, (size_t)(nl - l), &bl);
                        logctx_feed_line_bk(c, l, (size_t)(nl - l), batch_cases[i].now, &bl);
                        logctx_feed_line_bk(ref, l, (size_t)(nl - l), batch_cases[i].now, NULL);
                }
                logctx_chunk(c, NULL, 0);
                if (strcmp(logctx_context(c), batch_cases[i].context) != 0 ||
                    strcmp(logctx_stage(c),
                           batch_cases[i].stage ? batch_cases[i].stage : prev_stage))
                        fail_msg("%s: context '%s' stage '%s'", batch_cases[i].name,
                                 logctx_context(c), logctx_stage(c));
                /* and what the lines fed one at a time say */
                assert_string_equal(logctx_context(c), logctx_context(ref));
                assert_string_equal(logctx_stage(c), logctx_stage(ref));
        }

        /* More lines in one chunk than a batch holds: the work line in the
         * middle of 1,500 wins over the noise after it, at one instant. */
        big = malloc(cap);
        assert_non_null(big);
        for (int i = 0; i < 1500; i++) {
                int n = i == 1100 ? snprintf(big + off, cap - off, "#3 9.0 [7/9] cc -c m.c\n")
                                  : snprintf(big + off, cap - off, "#3 9.0 noise %d\n", i);

                assert_true(n > 0 && (size_t)n < cap - off);
                off += (size_t)n;
        }
        logctx_chunk(c, big, off);
        for (const char *l = big, *nl; l < big + off; l = nl + 1) {
                struct bkline bl;

                nl = memchr(l, '\n', (size_t)(big + off - l));
                bkline_parse(l, (size_t)(nl - l), &bl);
                logctx_feed_line_bk(c, l, (size_t)(nl - l), 9.0, &bl);
        }
        logctx_chunk(c, NULL, 0);
        assert_string_equal(logctx_context(c), "#3 9.0 [7/9] cc -c m.c");
        logctx_free(c);
        logctx_free(ref);
}

/* Chunks drawn from a pool of lines (clean and dirty; work, noise,
 * diagnostics, stages, blanks) say after each chunk what the same lines fed
 * one at a time say: the batch cleans its dirty lines when it looks at
 * them, and skips those that can be neither work nor a stage. */
static void test_batch_drawn(void **state)
{
        /* the first NOWORK are no work: half the rounds draw only those,
         * so that no work line wins and the last eligible one is the
         * context (a dirty one among them too) */
        static const char *const pool[] = {
            "PASS: test_a",
            "\x1b[32mok\x1b[0m 3 - frob",
            "progress 10%\r progress 20%\r",
            "\r\r",
            "\x1b[K",
            "   ",
            "",
            "::group::Test",
            "\x1b[1m::group::Colored",
            "  In file included from a.h:1,",
            "a.c:1:2: warning: x [-Wfoo]",
            "#5 DONE 1.0s",
            "make[1]: *** [x] Error 1",
            "x \x1b[1m-c\x1b[0m y",
            "downloading\r\x1b[Kdone -o",
            "=========",
            "\x1b[31merror\x1b[0m: ld returned 1",
            "Zz \x1b[1mtop\x1b[0m",
            /* work, stages */
            "\x1b[1m[ 50%]\x1b[0m Building C object a.o",
            "gcc -c a.c -o a.o",
            "##[group]Build lib",
            "#5 1.234 \x1b[0;32m   Compiling foo v0.1\x1b[0m",
            "#5 [lib 2/3] RUN make",
            "#5 \x1b[1m[app 1/3] RUN x",
            "CC lib/x.o",
            "2025-07-03T08:13:03.5879809Z ##[group]Run x",
        };
        const size_t NOWORK = 18;
        struct logctx *c = NULL, *ref = NULL;
        char chunk[4096];
        unsigned seed = 12345;

        (void)state;
        assert_int_equal(logctx_new(&(struct logctx_config){.hold_s = 1.0}, &c), 0);
        assert_int_equal(logctx_new(&(struct logctx_config){.hold_s = 1.0}, &ref), 0);
        for (int round = 0; round < 4000; round++) {
                double now = round / 3 * 0.7;
                size_t npool = round % 2 ? NOWORK : ARRAY_SIZE(pool);
                size_t len = 0, nlines;

                seed = seed * 1103515245u + 12345u;
                nlines = 1 + (seed >> 16) % 12;
                for (size_t i = 0; i < nlines; i++) {
                        const char *l;
                        int n;

                        seed = seed * 1103515245u + 12345u;
                        l = pool[(seed >> 16) % npool];
                        n = snprintf(chunk + len, sizeof(chunk) - len, "%s\n", l);
                        assert_true(n > 0 && (size_t)n < sizeof(chunk) - len);
                        len += (size_t)n;
                }
                logctx_chunk(c, chunk, len);
                for (const char *l = chunk, *nl; l < chunk + len; l = nl + 1) {
                        struct bkline bl;

                        nl = memchr(l, '\n', (size_t)(chunk + len - l));
                        bkline_parse(l, (size_t)(nl - l), &bl);
                        logctx_feed_line_bk(c, l, (size_t)(nl - l), now, &bl);
                        logctx_feed_line_bk(ref, l, (size_t)(nl - l), now, NULL);
                }
                logctx_chunk(c, NULL, 0);
                if (strcmp(logctx_context(c), logctx_context(ref)) != 0 ||
                    strcmp(logctx_stage(c), logctx_stage(ref)) != 0)
                        fail_msg("round %d: context '%s' / '%s', stage '%s' / '%s'", round,
                                 logctx_context(c), logctx_context(ref), logctx_stage(c),
                                 logctx_stage(ref));
        }
        logctx_free(c);
        logctx_free(ref);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_clean),     cmocka_unit_test(test_clean_cap_utf8),
            cmocka_unit_test(test_classify),  cmocka_unit_test(test_sequences),
            cmocka_unit_test(test_bad_regex), cmocka_unit_test(test_caps),
            cmocka_unit_test(test_logs),      cmocka_unit_test(test_log_regex),
            cmocka_unit_test(test_rule),      cmocka_unit_test(test_timed),
            cmocka_unit_test(test_bkline),    cmocka_unit_test(test_bkline_same),
            cmocka_unit_test(test_batch),     cmocka_unit_test(test_batch_drawn),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
