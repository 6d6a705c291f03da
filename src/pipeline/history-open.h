/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

struct store;

/* store_open(), with what a reader needs to tell a running run from an
 * incomplete one (store_set_liveness: this host, this boot, /proc). Every
 * reader of run rows opens the database through it. */
int history_store_open(const char *path, bool create, int busy_ms, struct store **ret);
