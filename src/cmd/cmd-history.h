/* SPDX-License-Identifier: MIT */
#pragma once

#include "pipeline/history-open.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "store/history.h"
#include "store/store.h"
#include "util/dbuf.h"

/* What the history commands (status, inspect, layers, cache, summarize
 * RUN) share: their options, opening the database with one clear error
 * line, and the text formats of their tables. */

struct json_t;
struct common_opts;

/* Parse the options of cmd with the one option table (cmd-options.c):
 * the rows for cmd, before or after the operands. Sets *ret_optind to the
 * first operand. Returns -1 when the command goes on, else its exit
 * status: 0 after printing the help for --help, EXIT_BT_USAGE after
 * printing the error. o holds nothing to release. */
int history_opts_parse(const char *cmd, int argc, char **argv, struct common_opts *o,
                       int *ret_optind);

/* Open the database at db (--db; NULL: store_default_path()) for cmd; on
 * failure print "buildtel CMD: history database 'PATH': reason" and
 * return 1 (0 on success). create: make the file when missing (cache);
 * without it a missing file is an error. */
int history_open(const char *cmd, const char *db, bool create, struct store **ret);
/* The start of a command without operands (status, layers, cache): its
 * options, --help, the database opened (create: as history_open()).
 * Returns -1 when *ret_st is open and the command goes on, else the exit
 * status (after printing why). */
int history_list_begin(const char *cmd, int argc, char **argv, struct common_opts *o, bool create,
                       struct store **ret_st);
/* Resolve spec (a run id or unique prefix; NULL: the latest run) to a
 * row id. 0, or -errno after printing "buildtel CMD: why". */
int history_find_run(const char *cmd, struct store *st, const char *spec, int64_t *ret);

/* The end of a history command (status, layers, inspect, compare), from
 * n, what its walk returned: an error (said; exit 1), or the JSON json
 * (--json), or the rows in out, or the line empty (NULL: none) when there
 * were none. Frees json and out, closes st. Returns the exit status. */
int history_list_end(const char *cmd, int n, struct json_t *json, struct dbuf *out,
                     const char *empty, struct store *st);

/* Print v as 2-space-indented JSON plus a newline. Returns 0 or 1. */
int history_print_json(const struct json_t *v);

/* The columns' spellings, in buf or a constant; the *_STR forms in a
 * buffer of the expression's own, as render/summary.h's SIZE_STR. */
/* Local time "2026-11-29 15:40:20" (seconds with with_seconds). */
const char *history_fmt_time(double epoch, bool with_seconds, char buf[static 32]);
/* A count as "12"; "-" for a negative (unknown) one. */
const char *history_fmt_count(int64_t v, char buf[static 24]);
/* A ratio as "42%"; "-" for NAN. */
const char *history_fmt_ratio(double v, char buf[static 16]);
#define TIME_STR(epoch, with_seconds) history_fmt_time(epoch, with_seconds, (char[32]){0})
#define COUNT_STR(v) history_fmt_count(v, (char[24]){0})
#define RATIO_STR(v) history_fmt_ratio(v, (char[16]){0})
/* A duration as a column spells it (FMT_DURATION_COMPACT). */
#define SPAN_STR(s) fmt_duration(s, FMT_DURATION_COMPACT, (char[FMT_DURATION_LEN]){0})

/* A count as JSON (null for -1 or any negative; render/jsonw.h has the
 * reals and strings). NULL only when memory ran out. */
struct json_t *history_json_count(int64_t v);

/* What became of run r: "ok", "exit 2", "signal 9", "running",
 * "incomplete" or "unknown". */
const char *history_run_result(const struct store_run *r, char buf[static 32]);
#define RESULT_STR(r) history_run_result(r, (char[32]){0})

/* Run r as the JSON object status --json prints (and inspect --json
 * extends), keys in their documented order. NULL when memory ran out. */
struct json_t *history_run_json(const struct store_run *r);

/* Append s to out with C0 controls and bad UTF-8 replaced (for text meant
 * for a terminal), cut to max bytes with "..." when longer. */
int history_put_clean(struct dbuf *out, const char *s, size_t max);
/* history_put_clean() into w after lead (NULL: none); nothing once w has
 * failed. */
void history_dw_clean(struct dwriter *w, const char *lead, const char *s, size_t max);
/* "<lead>foo.o (make): <first error> ... <last error>\n" when the run
 * named a failure: 1; 0 when not; -ENOMEM. */
int history_put_failure(struct dbuf *out, const struct store_run *r, const char *lead);
