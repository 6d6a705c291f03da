/* SPDX-License-Identifier: MIT */
#pragma once

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/sample.h"
#include "store/history.h"
#include "store/store.h"

/* Inside src/store/ only: the SQLite handle and what the writer (store.c)
 * and the readers (history.c, history-run.c) share. No header outside
 * src/store/ includes this one: callers see structs, never a handle or a
 * row keyed by column names. */

/* sqlite3_prepare_v2() with the error mapped. Returns 0 or -errno. */
int store_prepare(struct store *st, const char *sql, sqlite3_stmt **ret);

/* The end of a row loop: rc was SQLITE_DONE (0), or an error (-errno). */
int store_step_end(struct store *st, int rc);

/* Run a statement to its end (a row is fine too) and reset it: 0 or
 * -errno. */
int store_step_done(struct store *st, sqlite3_stmt *s);
/* The row id of the last INSERT. */
int64_t store_last_rowid(struct store *st);

/* What store_set_liveness() gave; NULL: none. */
const struct store_liveness *store_liveness(const struct store *st);

/* Step s (prepared and bound) through at most max rows, each to row(),
 * then finalize it. Returns the number of rows, or -errno, or what row()
 * returned (a negative return stops). */
typedef int (*store_row_fn)(void *ctx, sqlite3_stmt *s);
int64_t store_rows(struct store *st, sqlite3_stmt *s, int64_t max, store_row_fn row, void *ctx);

/* store_prepare() sql, bind the arguments after binds to ?1, ?2...: one
 * letter each, 'i' an int64_t, 'n' an int64_t (negative: NULL), 'd' a
 * double, 'r' a double (not finite: NULL), 't' a string (NULL: NULL);
 * then store_rows(). Returns what store_rows() does, or -errno. */
int64_t store_query(struct store *st, const char *sql, int64_t max, store_row_fn row, void *ctx,
                    const char *binds, ...);
/* The same for a statement without rows, run once: 0 or -errno. */
int store_exec(struct store *st, const char *sql, const char *binds, ...);
/* Bind as store_query() does, from ?first on, to s prepared once for a
 * loop (store_step_done() runs and resets it). */
void store_bind(sqlite3_stmt *s, int first, const char *binds, ...);

/* Which columns of the sample column table (sample.h) the samples table
 * has, by name: an older file lacks the newer ones. */
int store_sample_columns(struct store *st, bool have[SAMPLE_COLUMNS_MAX]);

/* Column readers: SQL NULL reads as unknown (NULL, NAN, -1), and so does
 * a negative count (a count is never negative; a hand-edited file may
 * hold anything). Text is borrowed until the next step. */
const char *store_col_text(sqlite3_stmt *s, int i);
double store_col_real(sqlite3_stmt *s, int i);
int64_t store_col_count(sqlite3_stmt *s, int i);

/* A stored count as the model's: -1 (unknown) is 0, and it saturates. */
uint32_t store_u32_of(int64_t v);

/* The distinct steps and cached steps run row id stored (-1: none, as a
 * run of an older buildtel). Returns 0 or -errno. */
int store_run_steps(struct store *st, int64_t id, int64_t *ret_steps, int64_t *ret_cached);
