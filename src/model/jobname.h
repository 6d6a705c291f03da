/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* The job of a run (issue 23): the name of what repeats, so that a run is
 * compared with the earlier runs of the same job, stored in the history
 * (runs.job) and used to name its Prometheus textfile. The one rule, here:
 *
 *   1. the --job option, when given and not empty;
 *   2. else $BUILDTEL_JOB, when not empty;
 *   3. else GitHub Actions: $GITHUB_WORKFLOW "/" $GITHUB_JOB (both set);
 *   4. else GitLab CI: $CI_PROJECT_PATH "/" $CI_JOB_NAME (both set);
 *   5. else derived from the command and the working directory:
 *      "<basename of cwd>:<basename of argv[0]>-<8 hex>", the hex a hash
 *      of cwd and every argument, so the same command in the same
 *      directory is the same job run after run, and another is not; both
 *      names are cut to 32 bytes and every byte outside [A-Za-z0-9._+-]
 *      becomes '_'.
 *
 * A given name (1-4) is kept as it is except that control bytes (C0, DEL)
 * become '_' and it is cut at JOBNAME_MAX bytes (never inside a UTF-8
 * sequence). Pure: the environment comes through lookup. */

#define JOBNAME_MAX 128

/* Like getenv(): the value of name, or NULL when unset. */
typedef const char *(*jobname_lookup_fn)(void *userdata, const char *name);

/* The job, malloc'd into *ret. option NULL: none given; argv may be NULL
 * or empty and cwd NULL (they then count as ""). Returns 0 or -ENOMEM. */
int jobname_get(const char *option, char *const *argv, const char *cwd, jobname_lookup_fn lookup,
                void *userdata, char **ret);

/* A form of job fit for a file name, into buf: [A-Za-z0-9._-] kept, every
 * other byte '_', a leading '.' too, cut at 64 bytes; when that changed
 * anything, "-" and 8 hex of a hash of job follow, so "a/b" and "a_b"
 * name different files. buf needs JOBNAME_FILE_SIZE bytes. Returns the
 * length, or -ENOBUFS (size too small), -EINVAL (job NULL or empty). */
#define JOBNAME_FILE_SIZE 80
int jobname_file_part(const char *job, char *buf, size_t size);
