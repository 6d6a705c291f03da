/* SPDX-License-Identifier: MIT */
/* buildtel import-buildx REF...: a build's figures from buildx history
 * (`docker buildx history inspect --format json REF`, buildx >= 0.21),
 * run with a fixed argv, never a shell. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "model/figures.h"
#include "model/run.h"
#include "parse/bakemeta.h"
#include "platform/buildx.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#define IMPORT_TIMEOUT_S 30.0

static void print_history(const char *what, const struct buildx_history *h)
{
        _cleanup_dbuf_ struct dbuf name = DBUF_INIT;
        double ratio = figure_cached_ratio(h->total_steps, h->cached_steps);
        double pct = isnan(ratio) ? 0 : 100.0 * ratio;

        (void)run_append_utf8_lossy(&name, h->name, strlen(h->name), true);
        printf("%s: %s %s, %u/%u steps (%u cached, %.0f%%), ", what, name.p ? name.p : "",
               h->status[0] ? h->status : "unknown", h->completed_steps, h->total_steps,
               h->cached_steps, pct);
        if (isnan(h->duration_s))
                printf("duration unknown");
        else
                printf("%.1fs", h->duration_s);
        if (h->vcs_revision[0])
                printf(", revision %s", h->vcs_revision);
        putchar('\n');
}

static int import_one(const char *what, const char *buf, size_t len)
{
        struct buildx_history h;

        if (buildx_history_parse(buf, len, &h) < 0) {
                fprintf(stderr,
                        "buildtel import-buildx: %s: not the JSON of `docker buildx history "
                        "inspect --format json` (buildx >= 0.21)\n",
                        what);
                return -EINVAL;
        }
        print_history(what, &h);
        return 0;
}

int cmd_import_buildx(int argc, char **argv)
{
        struct common_opts o;
        const char *file;
        int k, ret = 0;

        common_opts_init(&o);
        k = cmd_parse_options(CMDS_IMPORT_BUILDX, "import-buildx", argc, argv, &o);
        file = o.json_file;
        common_opts_release(&o);
        if (k <= 0)
                return k == 0 ? 0 : EXIT_BT_USAGE;
        if (file) {
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;
                int e = read_file_at(AT_FDCWD, file, BAKEMETA_MAX_FILE, &buf, &len);

                if (e < 0) {
                        fprintf(stderr, "buildtel import-buildx: cannot read '%s': %s\n", file,
                                strerror(-e));
                        return 1;
                }
                if (import_one(file, buf, len) < 0)
                        ret = 1;
        } else if (k >= argc) {
                fprintf(stderr, "buildtel import-buildx: no REF given\n");
                cmd_print_usage("import-buildx");
                return EXIT_BT_USAGE;
        }
        for (int i = k; i < argc; i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;
                int e = buildx_history_fetch(argv[i], IMPORT_TIMEOUT_S, &buf, &len);

                if (e < 0) {
                        fprintf(stderr,
                                "buildtel import-buildx: docker buildx history inspect %s: %s\n",
                                argv[i],
                                e == -ENOENT ? "docker not found"
                                : e == -EIO  ? "failed (unknown ref, or buildx older than 0.21?)"
                                             : strerror(-e));
                        ret = 1;
                        continue;
                }
                if (import_one(argv[i], buf, len) < 0)
                        ret = 1;
        }
        return ret;
}
