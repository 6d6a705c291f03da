/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* `ninja -t graph` (graphviz dot, as ninja's graphviz.cc writes it): which
 * edge builds each file, its rule and its inputs (issue 38). The lines:
 *   "ID" [label="PATH"]                   a file
 *   "ID" [label="RULE", shape=ellipse]    an edge of several inputs or outputs
 *   "IN" -> "OUT" [label=" RULE"]         an edge of one input and one output
 *   "EDGE" -> "OUT"                       an output of an ellipse edge
 *   "IN" -> "EDGE" [arrowhead=none ...]   an input of one (order-only too)
 * Anything else is skipped. Pure: a buffer in, any bytes. Chosen over
 * reading build.ninja: ninja resolves its variables, includes and
 * subninjas itself, and the tool runs once, at the end. */

struct ninjagraph;

/* Returns 0, -EINVAL (not a ninja graph, or one of no file), -ENOMEM. */
int ninjagraph_parse(const char *buf, size_t len, struct ninjagraph **ret);
void ninjagraph_free(struct ninjagraph *g); /* NULL is a no-op */

/* The edge that builds path: its rule into *ret_rule (owned by g) and each
 * input's path to fn (NULL: none). Returns the number of inputs, -ENOENT when no edge
 * builds path (a source). */
int ninjagraph_inputs(const void *graph, const char *path, const char **ret_rule,
                      void (*fn)(void *userdata, const char *input), void *userdata);
