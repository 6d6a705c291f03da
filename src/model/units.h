/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The build's compile units (a compiler and its source, a linker or LTO and
 * its output), as the process scans saw them over the run: when each was
 * first and last seen, its peak RSS (its processes summed at one scan) and
 * its CPU seconds where known. Fed by the recorder after every scan. The
 * names come from the build's command lines: hostile, so the table is
 * capped (UNITS_MAX) and the units past the cap are only counted. */

#define UNITS_MAX 20000
#define UNITS_TOOL_MAX 32
#define UNITS_NAME_MAX 96
#define UNITS_TAG_MAX 32
#define UNITS_PATH_MAX 255 /* a resolved source path */
#define UNITS_TOP 20       /* listed in the summary */
#define UNITS_JOBS_MIN 20  /* units needed before the -j reading is said */

enum units_kind {
        UNITS_COMPILE = 1,
        UNITS_LINK = 2,
};

enum units_cache {
        UNITS_CACHE_UNKNOWN = 0,
        UNITS_CACHE_HIT = 'h',  /* served from the cache: its figures measure no compile */
        UNITS_CACHE_MISS = 'm',
        UNITS_CACHE_NONE = 'u', /* not cacheable (a link, preprocessing, ...) */
};

struct unit {
        int kind; /* enum units_kind */
        char tool[UNITS_TOOL_MAX + 1];
        char name[UNITS_NAME_MAX + 1];
        double first_s, last_s; /* elapsed seconds of the first and last scan that saw it */
        double peak_mb;         /* the largest sum of its processes' RSS at one scan */
        double peak_s;          /* when */
        double cpu_s;           /* user + system of its processes: the ended ones as last seen, plus
                                 * the live ones; NAN unknown */
        bool exact; /* its figures are the kernel's accounting (units_done), not a scan's */
        char cache; /* what ccache's stats log (or sccache's log) said of it: enum units_cache */
        /* Its processes' time waiting for a CPU, for block IO, for memory
         * (the kernel's delay accounting); NAN unknown: sampled, or
         * kernel.task_delayacct 0. */
        double wait_s[3];
        /* The source resolved against the compiler's cwd, absolute and
         * normalised (model/unitname.h); "" when unknown (a link, a crate,
         * a cwd that could not be read, a path over UNITS_PATH_MAX). */
        char path[UNITS_PATH_MAX + 1];
        /* While observed, not stored: the unit's source (or output) as
         * given, its identity (path, or base when path is unknown) and its
         * key (units_see); name is base, or "base [tag]" when several
         * units share ident. A row put back has base = name, ident = path
         * or name, and a key of its name (0 without a path). */
        uint64_t key;
        char base[UNITS_NAME_MAX + 1];
        char ident[UNITS_PATH_MAX + 1];
        char std[UNITS_TAG_MAX + 1];
        char dir[UNITS_NAME_MAX + 1];
        double ended_cpu; /* CPU seconds of its processes that ended */
        uint32_t gnext;   /* the next row of its ident, + 1; 0 none */
};

struct units;

/* Returns 0 or -ENOMEM. */
int units_new(struct units **ret);
void units_free(struct units *u); /* NULL is a no-op */

/* Put back a whole row (a stored table read again): a unit of the same
 * kind, name and path is replaced. Returns 0, -ENOSPC when full, -EINVAL. */
int units_put(struct units *u, const struct unit *row);

/* One unit seen at a scan: a compile or link process (with the compilers it
 * runs) known by kind, name (its source or output) and key (a hash of its
 * output, 0 for the default one). Units of one name and different keys are
 * several rows, each named "name [tag]": tag is the -std= value (std) when
 * that tells them apart, else the part of the output's directory (dir)
 * that differs ("test-conversions_cpp17" from ".../test-conversions_cpp17.dir/src"),
 * else "#N" in order of first sight. Strings are cut to their maximum;
 * std and dir may be NULL. The tool kept is the one seen at the unit's
 * peak. Returns 0, -ENOSPC when the table is full, or -EINVAL for an empty
 * name or a bad kind. */
struct units_seen {
        int kind;
        const char *tool, *name, *std, *dir;
        /* The source whole as given and the compiler's cwd (either NULL or
         * ""): resolved into the row's path; units of one name and
         * different paths are different units. */
        const char *src, *cwd;
        uint64_t key;
        double elapsed_s, rss_mb, cpu_s;
        bool exact;       /* a new row is marked exact */
        double wait_s[3]; /* units_done only: added to the row's when finite */
};
int units_see(struct units *u, const struct units_seen *s);

/* A unit's processes all ended, accounted whole (pipeline/acct): seen from
 * start_s to s->elapsed_s, its peak s->rss_mb, s->cpu_s added to its CPU
 * (a source compiled twice of one key is one row, as scans see it).
 * Returns as units_see. */
int units_done(struct units *u, const struct units_seen *s, double start_s);

/* Processes of the unit s names (its kind, name, src, cwd and key), seen
 * at an earlier scan, have ended, with s->cpu_s seconds between them as
 * last seen: from now on the unit's CPU is that plus its live processes'.
 * Call it before the scan's units_see(). Returns 0, -ENOENT when no such
 * unit was seen, -EINVAL. */
int units_ended_seen(struct units *u, const struct units_seen *s);

size_t units_count(const struct units *u);
/* Every unit, in order of first sight; owned by u. */
const struct unit *units_rows(const struct units *u, size_t *ret_n);

/* True when there are units and every one is exact (units_done). */
bool units_exact(const struct units *u);

/* ccache's word on a compile of input (its stats log, parse/ccstats.h):
 * the first unit in order of first sight not yet marked whose source it
 * is (its path ends with input, or its name is input's base name) gets
 * cache. Returns 0, or -ENOENT when no unit is. */
int units_mark_cache(struct units *u, const char *input, char cache);

/* "hit", "miss", "uncacheable", "" unknown; and back (anything else is
 * unknown). */
const char *units_cache_name(char cache);
char units_cache_of(const char *name);

/* The k largest by peak RSS (ties: first seen first), into out (cap
 * entries); returns how many. */
size_t units_top(const struct units *u, struct unit *out, size_t cap);

/* The -j reading over the units is in model/jobs.h. */
