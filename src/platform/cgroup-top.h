/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "platform/procfs.h"

/* The culprit: the build's few processes with the largest RSS, each with a
 * short label ("cc1plus aten/src/ATen/native/Foo.cpp", "python3 setup.py
 * build"). cmdline is read only for the ones kept. */

#define PROCTOP_N 3
#define PROCTOP_LABEL_MAX 160 /* bytes, without NUL */

struct proctop_entry {
        long pid;
        uint64_t rss_pages;
        char comm[65];
        char label[PROCTOP_LABEL_MAX + 1];
};

/* A plain value: e[0] is the largest; n of them are set. */
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

/* Label a process from its comm and its raw cmdline (NUL-separated, need
 * not end in NUL). A compiler (cc1plus, clang, rustc, nvcc, ...) with a
 * source-file argument (.c .cc .cpp .cxx .cu .hip .rs .S ...) gets
 * "comm FILE"; anything else "comm ARG1 ARG2 ...". Control bytes become
 * '?'; the label is cut at cap - 1 bytes on a UTF-8 boundary. Returns the
 * length written (out is NUL-terminated), or -EINVAL when cap is 0. */
int proctop_label(const char *comm, const char *cmdline, size_t len, char *out, size_t cap);
