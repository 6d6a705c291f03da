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
