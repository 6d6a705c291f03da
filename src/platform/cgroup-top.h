/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/procfs.h"

/* The culprit: the build's few processes with the largest RSS, each with a
 * short label ("cc1plus aten/src/ATen/native/Foo.cpp", "python3 setup.py
 * build"). cmdline is read only for the ones kept. */

#define PROCTOP_N 3
#define PROCTOP_LABEL_MAX 100 /* bytes, without NUL */

struct proctop_entry {
        long pid;
        uint64_t rss_pages;
        char comm[65];
        char label[PROCTOP_LABEL_MAX + 1];
};

/* e[0] is the largest; n of them are set. */
struct proctop {
        struct proctop_entry e[PROCTOP_N];
        size_t n;
};

void proctop_reset(struct proctop *t);
/* Keep ps if it is among the PROCTOP_N largest so far (zombies skipped). */
void proctop_consider(struct proctop *t, const struct pidstat *ps);
/* Read the cmdline of each kept process through p and label it; a process
 * that is gone by now keeps its comm as its label. */
void proctop_label_all(struct proctop *t, struct procfs *p);

/* Label a process from its comm and raw cmdline (NUL-separated): "comm
 * SOURCE" for a compile unit (a long path's tail after "..."), "comm
 * OUTPUT" for a link, else "comm ARG1 ARG2 ..." (60 bytes of arguments).
 * Control bytes become '?'; cut at MIN(cap - 1, PROCTOP_LABEL_MAX) bytes
 * on a UTF-8 boundary. The length (out NUL-terminated), or -EINVAL when
 * cap is 0. */
int proctop_label(const char *comm, const char *cmdline, size_t len, char *out, size_t cap);

/* ---- compile units: what a process is working on ---- */

#define PROCUNIT_TOOL_MAX 32  /* bytes, without NUL */
#define PROCUNIT_NAME_MAX 96  /* bytes, without NUL */
#define PROCUNIT_PATH_MAX 255 /* bytes, without NUL: src and cwd */

enum procunit_kind {
        PROCUNIT_NONE,    /* not a compile unit (make, sh, as, ...) */
        PROCUNIT_COMPILE, /* a compiler or its driver, with its source file */
        PROCUNIT_LINK,    /* a linker or LTO, with its output's base name */
};

#define PROCUNIT_TAG_MAX 32 /* bytes, without NUL */

struct procunit {
        enum procunit_kind kind;
        char tool[PROCUNIT_TOOL_MAX + 1]; /* comm, cut */
        char name[PROCUNIT_NAME_MAX + 1]; /* source path (its tail when long) or output */
        /* A compile's identity beside its source: a hash of its -o output
         * (0: none, or a link), so one source built several ways at once is
         * several units. A compiler run by a driver takes the driver's. */
        uint64_t key;
        char std[PROCUNIT_TAG_MAX + 1];  /* its -std= value, "" none */
        char dir[PROCUNIT_NAME_MAX + 1]; /* its output's directory (the tail), "" none */
        /* A compile's source argument as given ("" for rustc's crates,
         * links, or one too long) and, when relative, the process's cwd (""
         * when unread); model/unitname.h resolves the two. */
        char src[PROCUNIT_PATH_MAX + 1];
        char cwd[PROCUNIT_PATH_MAX + 1];
};

/* comm may be a unit (a compiler, driver, linker or LTO): its cmdline is
 * worth reading. */
bool procunit_maybe(const char *comm);
/* What one process compiles or links, from its comm and raw cmdline:
 * compilers and drivers with a source file (rustc: its --crate-name) give
 * PROCUNIT_COMPILE; linkers, a driver with -o and no source, and LTO (its
 * output without ".ltransN"/".wpa") PROCUNIT_LINK with the output's base
 * name; anything else PROCUNIT_NONE. Control bytes become '?'. */
void procunit_classify(const char *comm, const char *cmdline, size_t len, struct procunit *ret);

/* One unit in flight at a scan (kind, name and key): its processes summed. */
struct procscan_unit {
        struct procunit u;
        uint64_t rss_pages;
        double cpu_s; /* utime + stime of its live processes, seconds */
        unsigned nprocs;
};

#define PROCSCAN_UNITS_MAX 64  /* units in flight kept per scan */
#define PROCSCAN_PIDS_MAX 4096 /* processes remembered between scans */

struct procscan;

int procscan_new(struct procscan **ret);
void procscan_free(struct procscan *s); /* NULL is a no-op */
/* A scan: begin, consider each of the build's processes, end. A process
 * (pid + start time) whose comm procunit_maybe() accepts has its cmdline,
 * and for a relative source its cwd, read once. */
void procscan_begin(struct procscan *s);
void procscan_consider(struct procscan *s, const struct pidstat *ps);
void procscan_end(struct procscan *s, struct procfs *p);
/* The units in flight at the last scan, largest RSS first; s's until the
 * next scan. */
const struct procscan_unit *procscan_units(const struct procscan *s, size_t *ret_n);

/* The units whose processes of the scan before have ended since: their
 * CPU as last seen and how many (rss_pages 0). s's until the next scan;
 * none after a scan that hit PROCSCAN_PIDS_MAX. */
const struct procscan_unit *procscan_ended(const struct procscan *s, size_t *ret_n);

/* "heavy.c s5.c ld:app.so x2": the units, largest first (a compile as its
 * source's base name, a link as tool:output, repeats counted), whole words
 * as fit in cap - 1 bytes. The length, or -EINVAL when cap is 0. */
int procscan_running_text(const struct procscan_unit *u, size_t n, char *out, size_t cap);
