/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/summary.h"

/* A recorded CSV (resources-<id>.csv) as a source: every good row goes to
 * summary_add(); torn or junk rows are skipped and counted in
 * s->skipped_rows. Returns the number of good rows, or -EINVAL when buf does
 * not start with a buildtel header, or -ENOMEM. */
int64_t csvread_summary(const char *buf, size_t len, struct summary *s);

/* Called with each good row of a recorded CSV, in order; the sample's
 * strings point into the parser's record for the call only. A negative
 * return stops the walk and is returned. */
typedef int (*csvread_sample_fn)(void *userdata, const struct sample *s);

/* Walk the good rows of buf (torn or junk rows are skipped and counted in
 * *ret_skipped). Returns the number of good rows, -EINVAL when buf does not
 * start with a buildtel header, -ENOMEM, or what fn returned. */
int64_t csvread_samples(const char *buf, size_t len, csvread_sample_fn fn, void *userdata,
                        uint64_t *ret_skipped);
