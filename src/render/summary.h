/* SPDX-License-Identifier: MIT */
#pragma once

#include "model/run.h"
#include "model/summary.h"
#include "util/dbuf.h"
#include "util/util.h"

/* Rendering of a summary. The text and JSON forms carry the same numbers. */

/* Pretty JSON (2-space indent, stable key order, trailing newline). */
int render_summary_json(const struct summary *s, const struct run_info *ri, struct dbuf *out);
/* The full text form (summary.txt). */
int render_summary_text(const struct summary *s, const struct run_info *ri, struct dbuf *out);
/* What near-OOM meant for the run (model/summary.h's rule), in words:
 * "available < 4096 MiB", with a cap ", or within 9.60 MiB of the 96.0
 * MiB cap", after an OOM kill ", or an OOM kill". */
void summary_near_oom_rule(const struct summary *s, char *buf, size_t len);
/* Who an OOM kill's victim is by its source: "victim (the kernel's
 * report)", "likely victim (last seen)"... */
const char *summary_victim_words(const struct summary_oom *e);
/* A few lines for stderr at exit. */
int render_summary_short(const struct summary *s, const struct run_info *ri, struct dbuf *out);
/* The build's bytes made safe for a terminal (valid UTF-8, no controls). */
void summary_put_text(struct dwriter *w, const char *s);
/* The texts' spellings: a size as every text says one ("512 MiB", "18.2
 * GiB"; of bytes, or of MiB), a figure ("%.*f", "?" unknown, no "-0"), a
 * duration ("1h02m03s"); the *_STR forms in a buffer of the expression's
 * own, as systemd's FORMAT_TIMESPAN(). */
#define SUMMARY_NUM_LEN 320 /* "%.*f" of any double, a few decimals */
const char *summary_size(double bytes, char buf[static 32]);
const char *summary_num(double v, int decimals, char buf[static SUMMARY_NUM_LEN]);
#define BYTES_STR(bytes) summary_size(bytes, (char[32]){0})
#define SIZE_STR(mb) BYTES_STR((mb)*1048576.0)
#define NUM_STR(v, decimals) summary_num(v, decimals, (char[SUMMARY_NUM_LEN]){0})
#define DURATION_STR(s) fmt_duration(s, FMT_DURATION_EXACT, (char[FMT_DURATION_LEN]){0})
