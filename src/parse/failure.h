/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "model/targets.h"

/* What failed, from the build's output lines (issue 35, item 2): the
 * failed target, edge or step, and the first and the last error line.
 *
 * - make: `make[2]: *** [Makefile:3042: foo.o] Error 1` names the target
 *   (foo.o, the rule's place left out); `make: *** No rule to make target`
 *   is an error line.
 * - ninja: `FAILED: out.o` names the edge (its first output).
 * - BuildKit: ` > [build 3/5] RUN make:` (the error epilogue) and
 *   `#12 [build 3/5] RUN make` followed by `#12 ERROR: ...` name the step;
 *   `ERROR: failed to solve: ...` and `#12 ERROR: ...` are error lines.
 * - gcc, clang, ld: `file:line:col: error: ...`, `fatal error:`,
 *   `collect2: error: ...`, `ld: error: ...`, `undefined reference to`.
 * - cmake: `CMake Error at CMakeLists.txt:3 (message):`.
 * - cargo: `error[E0308]: ...`, `error: could not compile ...`.
 *
 * The later failure wins the target (make reports the innermost first, the
 * outer `make: *** [all] Error 2` last: the first target is kept, the one
 * that failed); lines are kept cleaned (control characters and ANSI
 * escapes out) and cut at FAILURE_TEXT_MAX bytes, so memory is fixed. */

struct failure {
        struct run_failure r; /* what was found (model/targets.h) */
        /* BuildKit: the step each vertex #N names, the last few */
        struct {
                unsigned long n;
                char name[FAILURE_TEXT_MAX + 1];
        } steps[4];
        unsigned nsteps;
};

/* One line of the build's output, without its newline (any bytes), into f
 * (zeroed before the first). */
void failure_line(struct failure *f, const char *line, size_t len);
