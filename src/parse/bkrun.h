/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "parse/buildkit.h"

/* The RUN steps of a BuildKit build, as its progress output names them and
 * as the kernel shows their processes, turned into the same normalized
 * text, so that this invocation's exec cgroups can be told from another
 * build's on the same daemon. Normalized: whitespace runs become one
 * space, none at the ends, other control bytes '?'; cut at BKRUN_CMD_MAX. */

#define BKRUN_CMD_MAX 255 /* bytes kept, without NUL */

/* The command of a vertex name "[stage 2/3] RUN cmd" (any bracket prefix,
 * or none): the shell form's text, or an exec form's ["a", "b"] as "a b";
 * leading --mount=, --network= ... options skipped. Returns the length
 * written into out (NUL-terminated; cap bytes), 0 when the name is not a
 * RUN step, -EINVAL when cap is 0. */
int bkrun_vertex_cmd(const char *name, size_t len, char *out, size_t cap);

/* The command of a process's raw cmdline (NUL-separated): for a shell
 * ("sh", "bash", ... with -c, also -ec or SHELL options before it) the
 * argument after -c; otherwise every argument joined by one space. Returns
 * the length written (out NUL-terminated), 0 for an empty cmdline,
 * -EINVAL when cap is 0. */
int bkrun_argv_cmd(const char *argv, size_t len, char *out, size_t cap);

/* One line of BuildKit progress (plain or rawjson), bl its bkline_parse():
 * cb gets the command of every RUN vertex it names. Returns how many. */
typedef void (*bkrun_fn)(void *userdata, const char *cmd, size_t len);
size_t bkrun_feed_line_bk(const struct bkline *bl, const char *line, size_t len, bkrun_fn cb,
                          void *userdata);
/* Whether a line can name a RUN step at all: a plain header ("#N [", the
 * raw end: the name may end in '\r') or a rawjson object. Inline: it is
 * asked of every line, and most are neither. */
static inline bool bkrun_wants(const struct bkline *bl, const char *line, size_t len)
{
        const char *p = bl->digits_end;

        if (bl->hash)
                return p + 1 < line + len && p[0] == ' ' && p[1] == '[';
        return len > 2 && line[0] == '{';
}

/* "#0 building with "NAME" instance using DRIVER driver": the driver
 * ("docker", "docker-container", "remote", ...) into out, and NAME (the
 * builder, cut to bcap) into builder. Returns the driver's length, 0 when
 * the line is not that line, -EINVAL when a cap is 0. */
int bkrun_driver(const char *line, size_t len, char *out, size_t cap, char *builder, size_t bcap);

/* Does a command drive BuildKit: one of its words (in any argument, so
 * that sh -c 'docker buildx bake' counts) is docker, docker-buildx,
 * buildx, buildctl, nerdctl, podman or docker-compose (by base name)? A
 * command that only prints a BuildKit log (cat build.log) does not. */
bool bkrun_argv_drives(char *const *argv);
