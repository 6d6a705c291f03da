/* SPDX-License-Identifier: MIT */
/* buildtel import-buildx REF...: a build's figures from buildx history
 * (`docker buildx history inspect --format json REF`, buildx >= 0.21),
 * run with a fixed argv, never a shell. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd.h"
#include "model/figures.h"
#include "model/run.h"
#include "parse/bakemeta.h"
#include "parse/bkrecord.h"
#include "parse/buildkit.h"
#include "platform/buildx.h"
#include "render/summary.h"
#include "util/dbuf.h"
#include "util/macro.h"
#include "util/util.h"

#define IMPORT_TIMEOUT_S 30.0

/* The record's steps by buildtel's definition (its replayed log: own
 * [stage i/n] steps, internal vertices left out); without the replay,
 * BuildKit's vertex counts, said as such. */
struct replayed {
        bool set;
        uint32_t steps, cached;
};

static void print_history(const char *what, const struct buildx_history *h,
                          const struct replayed *rp)
{
        _cleanup_dbuf_ struct dbuf name = DBUF_INIT;
        uint32_t tot = rp->set ? rp->steps : h->total_steps,
                 ca = rp->set ? rp->cached : h->cached_steps;
        double ratio = figure_cached_ratio(tot, ca);
        double pct = isnan(ratio) ? 0 : 100.0 * ratio;

        (void)run_append_utf8_lossy(&name, h->name, strlen(h->name), true);
        printf("%s: %s %s, ", what, name.p ? name.p : "", h->status[0] ? h->status : "unknown");
        if (rp->set)
                printf("%u steps (%u cached, %.0f%%; %u vertices in all), ", tot, ca, pct,
                       h->total_steps);
        else
                printf("%u/%u vertices (%u cached, %.0f%%; internal ones included: no replayed "
                       "log), ",
                       h->completed_steps, tot, ca, pct);
        if (isnan(h->duration_s))
                printf("duration unknown");
        else
                printf("%.1fs", h->duration_s);
        if (h->vcs_revision[0])
                printf(", revision %s", h->vcs_revision);
        putchar('\n');
}

static int import_one(const char *what, const char *buf, size_t len, const struct replayed *rp)
{
        struct buildx_history h;

        if (buildx_history_parse(buf, len, &h) < 0) {
                fprintf(stderr,
                        "buildtel import-buildx: %s: not the JSON of `docker buildx history "
                        "inspect --format json` (buildx >= 0.21)\n",
                        what);
                return -EINVAL;
        }
        print_history(what, &h, rp);
        return 0;
}

/* One exec step of BuildKit's record, with the usage it sampled. */
static void print_step(void *userdata, const struct bkrecord_step *st)
{
        const struct step_exec *u = &st->u;

        if (!u->set)
                return;
        printf("  step (BuildKit's record): cpu %.3f s, peak %s, read %s, written %s, oom kills "
               "%.0f: %s\n",
               u->cpu_s, BYTES_STR(u->mem_peak_bytes), BYTES_STR(u->io_read_bytes),
               BYTES_STR(u->io_write_bytes), isnan(u->oom_kills) ? 0.0 : u->oom_kills, st->xcmd);
}

/* The RUN steps' usage of BuildKit's record, when it has any (cgroup v2). */
static void print_record(const char *ref)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        if (buildx_history_provenance(ref, IMPORT_TIMEOUT_S, &buf, &len) >= 0 &&
            bkrecord_parse(buf, len, print_step, NULL) == 0)
                printf("  (BuildKit's record has no usage of its steps: a cgroup v1 or hybrid "
                       "host, or dockerd's systemd driver without --cgroup-parent)\n");
}

/* history logs REF, counted; rp->set false when it cannot be had. */
static void replay(const char *ref, struct replayed *rp)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        rp->set = buildx_history_logs(ref, IMPORT_TIMEOUT_S, &buf, &len) >= 0 &&
                  buildkit_count_log(buf, len, &rp->steps, &rp->cached) >= 0;
}

int cmd_import_buildx(int argc, char **argv)
{
        struct common_opts o;
        const char *file;
        int k, ret = 0;

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
                if (import_one(file, buf, len, &(struct replayed){0}) < 0)
                        ret = 1;
        } else if (k >= argc) {
                fprintf(stderr, "buildtel import-buildx: no REF given\n");
                cmd_print_usage("import-buildx");
                return EXIT_BT_USAGE;
        }
        for (int i = k; i < argc; i++) {
                _cleanup_free_ char *buf = NULL;
                struct replayed rp = {0};
                size_t len = 0;
                /* any form buildx prints: <builder>/<node>/<id> or <id> */
                int e = buildx_history_fetch(argv[i], IMPORT_TIMEOUT_S, &buf, &len);

                if (e < 0) {
                        fprintf(stderr,
                                "buildtel import-buildx: docker buildx history inspect %s: %s\n",
                                argv[i],
                                e == -ENOENT   ? "docker not found"
                                : e == -EINVAL ? "not a ref"
                                : e == -EIO    ? "failed (no such record on this builder, or "
                                                 "buildx older than 0.21)"
                                               : strerror(-e));
                        ret = 1;
                        continue;
                }
                replay(argv[i], &rp);
                if (import_one(argv[i], buf, len, &rp) < 0)
                        ret = 1;
                else
                        print_record(argv[i]);
        }
        return ret;
}
