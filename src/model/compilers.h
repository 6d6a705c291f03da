/* SPDX-License-Identifier: MIT */
#pragma once
/* What counts as a compiler: the one table of the tool names buildtel
 * knows, each with what it is. The sampler counts the TOOL_COUNTED ones
 * (the --compilers default), the process scan (platform/cgroup-top) finds
 * compile units with the compilers, drivers and linkers, and the log
 * context (parse/logctx) recognises a command line by the TOOL_LOG ones
 * (TOOL_LOG_CROSS also behind a cross prefix: aarch64-linux-gnu-gcc). */

#include <stdbool.h>
#include <stddef.h>

enum {
        TOOL_COMPILER = 1 << 0,  /* a compiler proper (cc1plus, rustc, ...) */
        TOOL_DRIVER = 1 << 1,    /* runs a compiler or a linker (gcc, clang) */
        TOOL_LINKER = 1 << 2,    /* ld, lld, mold, ... */
        TOOL_COUNTED = 1 << 3,   /* the sampler's compilers column by default */
        TOOL_LOG = 1 << 4,       /* names a compile or link line in the log */
        TOOL_LOG_CROSS = 1 << 5, /* the same behind a cross prefix */
};

/* True when s[0..n) is a tool name of any of kinds. */
bool compilers_has(const char *s, size_t n, unsigned kinds);

/* The names of any of kinds, in the table's order, into ret (at most cap,
 * NULL-terminated: cap includes the NULL). Returns how many. */
size_t compilers_list(unsigned kinds, const char **ret, size_t cap);
