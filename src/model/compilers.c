/* SPDX-License-Identifier: MIT */
#include "model/compilers.h"

#include <string.h>

#include "util/macro.h"

#define C TOOL_COMPILER
#define D TOOL_DRIVER
#define L TOOL_LINKER
#define N TOOL_COUNTED
#define G TOOL_LOG
#define X TOOL_LOG_CROSS

/* The sampler's defaults first, in the order `help run` lists them. */
static const struct {
        const char *name;
        unsigned kinds;
} tools[] = {
    {"cc1plus", C | N | G},
    {"cc1", C | N | G},
    {"cc1obj", C | N},
    {"clang", C | D | N | G | X},
    {"clang++", C | D | N | G | X},
    {"rustc", C | N | G},
    {"lto1", C | N},
    {"ld", L | N | G | X},
    {"ld.gold", L | N | G},
    {"ld.lld", L | N | G},
    {"collect2", L | N},
    {"nvcc", C | D | N | G},
    {"cicc", C | N},
    {"ptxas", C | N},
    {"cc1objplus", C},
    {"f951", C},
    {"clang-cl", C},
    {"gcc", C | D | G | X},
    {"g++", C | D | G | X},
    {"c++", C | D | G | X},
    {"cc", C | D | G | X},
    {"hipcc", C | D},
    {"icx", C | D},
    {"icpx", C | D},
    {"cl.exe", C},
    {"zig", C | D},
    {"gfortran", C | D},
    {"swiftc", C},
    {"javac", C},
    {"go", C},
    {"compile", C},
    {"tsc", C},
    {"ghc", C},
    {"as", C},
    {"ld.bfd", L | G},
    {"lld", L},
    {"gold", L},
    {"mold", L},
    {"ld64.lld", L},
    {"wasm-ld", L},
};

bool compilers_has(const char *s, size_t n, unsigned kinds)
{
        /* The first byte rules out almost every name before a strlen: this
         * runs for the first word of many log lines (logctx). */
        if (n == 0)
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (tools[i].name[0] == s[0] && (tools[i].kinds & kinds) &&
                    strlen(tools[i].name) == n && memcmp(tools[i].name, s, n) == 0)
                        return true;
        return false;
}

size_t compilers_list(unsigned kinds, const char **ret, size_t cap)
{
        size_t n = 0;

        if (cap == 0)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(tools) && n + 1 < cap; i++)
                if (tools[i].kinds & kinds)
                        ret[n++] = tools[i].name;
        ret[n] = NULL;
        return n;
}
