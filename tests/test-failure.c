/* SPDX-License-Identifier: MIT */
/* What failed, from the build's output (parse/failure), table-driven: each
 * case a build's lines as the tools print them (our own, not a fixture). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "parse/failure.h"
#include "util/macro.h"

struct tcase {
        const char *name;
        const char *lines[10];
        const char *target, *tool, *first, *last;
        uint64_t errors;
};

static const struct tcase cases[] = {
    {"make -j2 and gcc",
     {"gcc -c -o a.o a.c", "a.c: In function 'main':",
      "a.c:3:9: error: expected ';' before '}' token",
      "a.c:4:1: warning: control reaches end of non-void function",
      "make[1]: *** [Makefile:3042: a.o] Error 1", "make[1]: Leaving directory '/src'",
      "make: *** [Makefile:12: all] Error 2"},
     "a.o", "make", "a.c:3:9: error: expected ';' before '}' token",
     "a.c:3:9: error: expected ';' before '}' token", 1},
    {"old make, no rule place",
     {"cc1: fatal error: b.c: No such file or directory", "make: *** [b.o] Error 1"},
     "b.o", "make", "cc1: fatal error: b.c: No such file or directory",
     "cc1: fatal error: b.c: No such file or directory", 1},
    {"make -j2: its 'Waiting for unfinished jobs' is no error (zlib, seen)",
     {"adler32.c:61:14: error: 'x' undeclared here (not in a function)",
      "make: *** Waiting for unfinished jobs....", "make: *** [Makefile:286: adler32.o] Error 1"},
     "adler32.o", "make", "adler32.c:61:14: error: 'x' undeclared here (not in a function)",
     "adler32.c:61:14: error: 'x' undeclared here (not in a function)", 1},
    {"make: no rule",
     {"make: *** No rule to make target 'nothere.c', needed by 'x.o'.  Stop."},
     "", "", "make: *** No rule to make target 'nothere.c', needed by 'x.o'.  Stop.",
     "make: *** No rule to make target 'nothere.c', needed by 'x.o'.  Stop.", 1},
    {"ninja",
     {"[1/3] Building C object CMakeFiles/x.dir/u1.c.o",
      "FAILED: CMakeFiles/x.dir/u2.c.o ", "/usr/bin/cc -o CMakeFiles/x.dir/u2.c.o -c ../u2.c",
      "../u2.c:1:1: error: unknown type name 'nope'", "ninja: build stopped: subcommand failed."},
     "CMakeFiles/x.dir/u2.c.o", "ninja", "../u2.c:1:1: error: unknown type name 'nope'",
     "../u2.c:1:1: error: unknown type name 'nope'", 1},
    {"ninja 1.12 code, two outputs",
     {"FAILED: [code=1] a.o a.d", "clang: error: no input files"},
     "a.o", "ninja", "clang: error: no input files", "clang: error: no input files", 1},
    {"the linker",
     {"/usr/bin/ld: m.o: in function `main':", "m.c:(.text+0x5): undefined reference to `f'",
      "collect2: error: ld returned 1 exit status", "make: *** [Makefile:5: app] Error 1"},
     "app", "make", "m.c:(.text+0x5): undefined reference to `f'",
     "collect2: error: ld returned 1 exit status", 2},
    {"BuildKit plain",
     {"#8 [build 3/5] RUN make -j2", "#8 1.204 x.c:2:1: error: expected identifier",
      "#8 1.210 make: *** [Makefile:4: x.o] Error 1",
      "#8 ERROR: process \"/bin/sh -c make -j2\" did not complete successfully: exit code: 2",
      "------", " > [build 3/5] RUN make -j2:", "1.204 x.c:2:1: error: expected identifier",
      "------",
      "ERROR: failed to solve: process \"/bin/sh -c make -j2\" did not complete successfully: "
      "exit code: 2"},
     "[build 3/5] RUN make -j2", "buildkit", "x.c:2:1: error: expected identifier",
     "ERROR: failed to solve: process \"/bin/sh -c make -j2\" did not complete successfully: "
     "exit code: 2",
     4},
    {"cmake",
     {"-- Configuring incomplete, errors occurred!", "CMake Error at CMakeLists.txt:3 (message):",
      "  boom"},
     "", "", "CMake Error at CMakeLists.txt:3 (message):",
     "CMake Error at CMakeLists.txt:3 (message):", 1},
    {"cargo",
     {"   Compiling foo v0.1.0 (/src)", "error[E0308]: mismatched types", " --> src/main.rs:2:18",
      "error: could not compile `foo` (bin \"foo\") due to 1 previous error"},
     "", "", "error[E0308]: mismatched types",
     "error: could not compile `foo` (bin \"foo\") due to 1 previous error", 2},
    {"colours and tabs cleaned",
     {"\033[01m\033[Ka.c:1:2:\033[m\033[K \033[01;31m\033[Kerror: \033[m\033[Kbad\tthing\r"},
     "", "", "a.c:1:2: error: bad thing", "a.c:1:2: error: bad thing", 1},
    {"warnings and a clean build: nothing",
     {"a.c:1:1: warning: unused", "[2/2] Linking C executable app", "make: Nothing to be done"},
     "", "", "", "", 0},
};

static void test_cases(void **state)
{
        (void)state;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                const struct tcase *c = &cases[i];
                struct failure f = {0};

                printf("case %s\n", c->name);
                for (size_t k = 0; k < ARRAY_SIZE(c->lines) && c->lines[k]; k++)
                        failure_line(&f, c->lines[k], strlen(c->lines[k]));
                assert_string_equal(f.r.target, c->target);
                assert_string_equal(f.r.tool, c->tool);
                assert_string_equal(f.r.first, c->first);
                assert_string_equal(f.r.last, c->last);
                assert_int_equal(f.r.errors, c->errors);
        }
}

/* A long line is cut between characters; memory stays fixed. */
static void test_long(void **state)
{
        char line[1000];
        struct failure f = {0};

        (void)state;
        memcpy(line, "x.c:1:1: error: ", 16);
        for (size_t i = 16; i + 2 < sizeof(line); i += 2)
                memcpy(line + i, "\xc3\xa9", 2); /* é */
        failure_line(&f, line, sizeof(line) - 2);
        assert_true(strlen(f.r.first) <= FAILURE_TEXT_MAX);
        assert_true(strlen(f.r.first) >= FAILURE_TEXT_MAX - 1);
        assert_int_equal(strlen(f.r.first) % 2, 0); /* 16 ASCII bytes, then whole é's */
        failure_line(&f, "", 0);
        failure_line(&f, "\0\0\0", 3);
        assert_int_equal(f.r.errors, 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_long),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
