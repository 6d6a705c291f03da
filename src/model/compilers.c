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

/* The length of each name beside it (T(name)): a lookup compares one length and
 * one first byte per entry, no strlen. */
#define NAME_MAX_LEN 10 /* the longest ("cc1objplus"); past it T() does not compile */
#define NAME_LEN(name)                                                                             \
        (sizeof(name) - 1 + 0 * sizeof(char[sizeof(name) - 1 <= NAME_MAX_LEN ? 1 : -1]))
#define T(name) name, NAME_LEN(name)

/* The sampler's defaults first, in the order `help run` lists them. */
static const struct {
        const char *name;
        unsigned char len;
        unsigned kinds;
} tools[] = {
    {T("cc1plus"), C | N | G},
    {T("cc1"), C | N | G},
    {T("cc1obj"), C | N},
    {T("clang"), C | D | N | G | X},
    {T("clang++"), C | D | N | G | X},
    {T("rustc"), C | N | G},
    {T("lto1"), C | N},
    {T("ld"), L | N | G | X},
    {T("ld.gold"), L | N | G},
    {T("ld.lld"), L | N | G},
    {T("collect2"), L}, /* waits on its ld: counted, one link would be two */
    {T("nvcc"), C | D | N | G},
    {T("cicc"), C | N},
    {T("ptxas"), C | N},
    {T("cc1objplus"), C},
    {T("f951"), C},
    {T("clang-cl"), C},
    {T("gcc"), C | D | G | X},
    {T("g++"), C | D | G | X},
    {T("c++"), C | D | G | X},
    {T("cc"), C | D | G | X},
    {T("hipcc"), C | D},
    {T("icx"), C | D},
    {T("icpx"), C | D},
    {T("cl.exe"), C},
    {T("zig"), C | D},
    {T("gfortran"), C | D},
    {T("swiftc"), C},
    {T("javac"), C},
    {T("go"), C},
    {T("compile"), C},
    {T("tsc"), C},
    {T("ghc"), C},
    {T("as"), C},
    {T("ld.bfd"), L | G},
    {T("lld"), L},
    {T("gold"), L},
    {T("mold"), L},
    {T("ld64.lld"), L},
    {T("wasm-ld"), L},
    /* compiler caches in front of a compiler: a compile whose driver they
     * are (a hit runs no compiler; a miss runs it, and the preprocessor,
     * under them: one unit) */
    {T("ccache"), D},
    {T("sccache"), D},
};

bool compilers_has(const char *s, size_t n, unsigned kinds)
{
        /* This runs for the first word of many log lines (logctx): most are
         * no name's length, the rest differ in the first byte. */
        if (n == 0 || n > NAME_MAX_LEN)
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (tools[i].len == n && tools[i].name[0] == s[0] && (tools[i].kinds & kinds) &&
                    memcmp(tools[i].name, s, n) == 0)
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
