/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

#include "cmd/cmd-common.h"
#include "platform/child.h"

/* One whole `buildtel run` of argv[0..argc) with the options o (parsed;
 * its OTLP settings loaded): cgroup, recorder, the build, its files,
 * history row, summary and the end-of-run lines. given: the fds the build
 * gets (child_fds_take). Returns the build's exit status, EXIT_BT_SIGNAL
 * when it died of SIGINT or SIGQUIT, or one of EXIT_BT_* when buildtel
 * itself failed. bench calls it once per run. */
int cmd_run_build(struct common_opts *o, char **argv, size_t argc, const struct child_fds *given);
