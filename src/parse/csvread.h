/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model/sample.h"
#include "model/summary.h"

/* Called with each good row of a recorded CSV, in order (its strings are
 * borrowed for the call), and with NULL for each torn or junk row. */
typedef void (*csvread_fn)(void *userdata, const struct sample *s);

/* A recorded CSV (resources-<id>.csv) read back: every row to fn. Returns
 * the number of good rows, or -EINVAL when buf does not start with a
 * buildtel header, or -ENOMEM. */
int64_t csvread_samples(const char *buf, size_t len, csvread_fn fn, void *userdata);

/* The same into summary_add(); torn or junk rows are counted in
 * s->skipped_rows. */
int64_t csvread_summary(const char *buf, size_t len, struct summary *s);

/* The same walk with every good row given to fn (its strings borrowed for
 * the call); a negative return from fn stops it and is returned. Torn or
 * junk rows are counted in *ret_skipped. Returns the number of good rows,
 * -EINVAL (no buildtel header), -ENOMEM, or fn's error. */
int64_t csvread_each(const char *buf, size_t len, int (*fn)(void *userdata, const struct sample *s),
                     void *userdata, uint64_t *ret_skipped);

/* The same walk with every good row given to fn (its strings borrowed for
 * the call); a negative return from fn stops the walk and is returned. Torn
 * or junk rows are counted in *ret_skipped. */
int64_t csvread_each(const char *buf, size_t len, int (*fn)(void *userdata, const struct sample *s),
                     void *userdata, uint64_t *ret_skipped);
