/* SPDX-License-Identifier: MIT */
/* buildtel prune: the oldest finished runs' files and history rows, gone
 * together; the policy is model/retention's, the rows go through
 * store_run_delete(), the files are unlinked here. */
#include "cmd/cmd-prune.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "runfiles/names.h"
#include "pipeline/recorder.h"
#include "render/summary.h"
#include "sinks/sink.h"
#include "store/history.h"
#include "store/store.h"
#include "util/macro.h"
#include "util/util.h"

/* One run of the history as prune sees it. */
struct prune_run {
        int64_t id;
        char *run_id, *dir, *job; /* job: NULL when none */
        uint64_t files;
};

struct prune_list {
        struct prune_run *v;
        struct retention_run *r;
        size_t n, cap, rcap; /* of v and of r */
        const char *log_dir, *self;
        int err;
};

static void list_release(struct prune_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].run_id);
                free(l->v[i].dir);
                free(l->v[i].job);
        }
        free(l->v);
        free(l->r);
}

/* A run id as buildtel makes them: no '/', no leading '.', short. */
static bool run_id_safe(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        return n > 0 && n <= 64 && s[0] != '.' && !strchr(s, '/');
}

/* The log directory of a run: where its build log is (schema 7), else the
 * current one. malloc'd; NULL on ENOMEM. */
static char *dir_of(const struct store_run *r, const char *log_dir)
{
        const char *slash =
            r->build_log && r->build_log[0] == '/' ? strrchr(r->build_log, '/') : NULL;

        if (slash)
                return strndup(r->build_log,
                               slash == r->build_log ? 1 : (size_t)(slash - r->build_log));
        return strdup(log_dir);
}

/* The run's files in dir that exist as regular files: counted into
 * *files and *bytes, or with rm unlinked. The files a run writes are every
 * kind of runfiles/names.h, by name, in its log directory: nothing else is
 * ever removed. 0 or the first -errno of rm (the others still go). */
static int run_files(const char *dir, const char *run_id, bool rm, uint64_t *files, uint64_t *bytes)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = dfd < 0 && errno != ENOENT ? -errno : 0;

        for (int k = 0; dfd >= 0 && k < RUNFILE_COUNT_; k++) {
                _cleanup_free_ char *name = runfiles_path(NULL, run_id, (enum runfile)k);
                struct stat sb;

                if (!name || fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(sb.st_mode))
                        continue;
                if (!rm) {
                        (*files)++;
                        *bytes += (uint64_t)sb.st_size;
                } else if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT && r == 0) {
                        r = -errno;
                }
        }
        return r;
}

static int add_run(void *userdata, const struct store_run *r)
{
        struct prune_list *l = userdata;
        struct prune_run *p;
        struct retention_run *q;

        if (array_grow(&l->v, &l->cap, l->n, sizeof(*l->v), 64) < 0 ||
            array_grow(&l->r, &l->rcap, l->n, sizeof(*l->r), 64) < 0)
                return -ENOMEM;
        p = &l->v[l->n];
        q = &l->r[l->n];
        *p = (struct prune_run){.id = r->id};
        *q = (struct retention_run){.start_epoch = r->info.start_epoch,
                                    .end_epoch = r->info.end_epoch};
        /* Running, unknown, a run id that is not ours to turn into a file
         * name, or the run that asks: kept (and counted). */
        q->pinned = r->state == STORE_RUN_RUNNING || r->state == STORE_RUN_UNKNOWN ||
                    !run_id_safe(r->info.run_id) ||
                    (l->self && r->info.run_id && strcmp(l->self, r->info.run_id) == 0);
        if (!(p->run_id = strdup(r->info.run_id ? r->info.run_id : "")) ||
            !(p->dir = dir_of(r, l->log_dir)) || (r->info.job && !(p->job = strdup(r->info.job)))) {
                free(p->run_id);
                free(p->dir);
                return -ENOMEM;
        }
        if (run_id_safe(p->run_id))
                (void)run_files(p->dir, p->run_id, false, &p->files, &q->bytes);
        l->n++;
        return 0;
}

/* Remove run i (files first: a row without files is found again by the
 * next prune, files without a row never would be). */
static int prune_one(struct store *st, const struct prune_list *l, size_t i, bool dry, bool verbose,
                     struct prune_result *res)
{
        const struct prune_run *p = &l->v[i];
        _cleanup_dbuf_ struct dbuf dir = DBUF_INIT;
        int r = dry ? 0 : run_files(p->dir, p->run_id, true, NULL, NULL);

        if (r >= 0 && !dry)
                r = store_run_delete(st, p->id);
        if (r < 0) {
                fprintf(stderr, "buildtel prune: cannot remove run %s: %s\n", p->run_id,
                        store_strerror(r));
                res->failed++;
                return r;
        }
        res->runs++;
        res->files += p->files;
        res->bytes += l->r[i].bytes;
        /* the directory is the row's: whoever edited it chose its bytes */
        if (verbose && history_put_clean(&dir, p->dir, 4096) >= 0 && dir.p)
                printf("%s %s (%llu files, %s in %s)\n", dry ? "would remove" : "removed",
                       p->run_id, (unsigned long long)p->files, BYTES_STR((double)l->r[i].bytes),
                       dir.p);
        return 0;
}

/* A job none of whose runs is left has no textfile either: its default
 * one (buildtel-JOB.prom) goes from the textfile directory, where node_exporter
 * would serve its last figures for ever (a --prom-file name is the user's). */
static void prune_textfiles(const struct prune_list *l, const bool *gone, const char *textfile_dir,
                            bool dry, bool verbose)
{
        const char *dir = prom_textfile_where(textfile_dir);
        _cleanup_close_ int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

        for (size_t i = 0; dfd >= 0 && i < l->n; i++) {
                const char *job = l->v[i].job;
                char name[128];
                struct stat sb;
                size_t k;

                if (!gone[i] || !job || common_prom_file(job, name, sizeof(name)) < 0)
                        continue;
                /* a run of the job kept, or one gone before i (said already) */
                for (k = 0; k < l->n; k++)
                        if (k != i && l->v[k].job && strcmp(l->v[k].job, job) == 0 &&
                            (!gone[k] || k < i))
                                break;
                if (k < l->n || fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(sb.st_mode) || (!dry && unlinkat(dfd, name, 0) < 0))
                        continue;
                if (verbose)
                        printf("%s %s/%s (job %s has no run left)\n",
                               dry ? "would remove" : "removed", dir, name, job);
        }
}

int prune_apply(const char *db_path, const char *log_dir, const char *textfile_dir,
                const struct retention_policy *p, const char *self, bool dry, bool verbose,
                struct prune_result *ret)
{
        _cleanup_free_ char *def_db = db_path ? NULL : store_default_path();
        _cleanup_free_ char *def_log = log_dir ? NULL : recorder_default_log_dir();
        struct prune_list l = {.log_dir = log_dir ? log_dir : def_log, .self = self};
        struct prune_result res = {0};
        _cleanup_free_ bool *go = NULL;
        struct store *st = NULL;
        int r;

        if (!(db_path = db_path ? db_path : def_db) || !l.log_dir)
                return -ENOMEM;
        /* with liveness: a run whose buildtel was killed reads as incomplete, not running */
        r = history_store_open(db_path, false, 3000, &st);
        if (r >= 0)
                r = store_runs_each(st, NAN, 0, add_run, &l);
        if (r >= 0 && !(go = calloc(l.n ? l.n : 1, sizeof(*go))))
                r = -ENOMEM;
        if (r >= 0) {
                (void)retention_decide(p, l.r, l.n, now_realtime(), go);
                for (size_t i = 0; i < l.n; i++) {
                        if (!go[i] || prune_one(st, &l, i, dry, verbose, &res) < 0) {
                                res.kept_runs++;
                                res.kept_bytes += l.r[i].bytes;
                                go[i] = false;
                        }
                }
                prune_textfiles(&l, go, textfile_dir, dry, verbose);
                *ret = res;
        }
        store_close(st);
        list_release(&l);
        return r < 0 ? r : 0;
}

/* An environment variable's count (size: a size) into *ret; -1 after
 * saying why not. */
static int parse_limit(const char *cmd, const char *what, const char *arg, bool size, uint64_t *ret)
{
        if ((size ? parse_size_str(arg, ret) : parse_u64_str(arg, ret)) >= 0)
                return 0;
        fprintf(stderr, "buildtel %s: %s takes %s, not '%s'\n", cmd, what,
                size ? "a size (500M, 2G; 0: no limit)" : "a count (0: keep all)", arg);
        return -1;
}

int prune_limit_of(const char *cmd, const struct common_opts *o, struct retention_policy *ret)
{
        struct retention_policy p = {.keep = PRUNE_KEEP_RUNS, .max_bytes = PRUNE_KEEP_BYTES};
        const char *er = getenv("BUILDTEL_KEEP_RUNS"), *es = getenv("BUILDTEL_KEEP_SIZE");

        if ((er && *er && parse_limit(cmd, "BUILDTEL_KEEP_RUNS", er, false, &p.keep) < 0) ||
            (es && *es && parse_limit(cmd, "BUILDTEL_KEEP_SIZE", es, true, &p.max_bytes) < 0))
                return -1;
        if (o->keep_runs_given)
                p.keep = o->keep_runs;
        if (o->keep_size_given)
                p.max_bytes = o->keep_size;
        *ret = p;
        return 0;
}

int cmd_prune(int argc, char **argv)
{
        struct common_opts o;
        struct prune_result res;
        int k, r, ret = history_opts_parse("prune", argc, argv, &o, &k);

        if (ret >= 0)
                return ret;
        if (k != argc) {
                cmd_print_short_usage("prune");
                return EXIT_BT_USAGE;
        }
        /* no limit given: the one `run` applies at its end */
        if (!o.prune_given && prune_limit_of("prune", &o, &o.prune) < 0)
                return EXIT_BT_USAGE;
        r = prune_apply(o.rec.db_path, o.rec.log_dir, o.rec.prom.textfile_dir, &o.prune, NULL,
                        o.dry_run, true, &res);
        if (r < 0) {
                fprintf(stderr, "buildtel prune: cannot read the history: %s\n", store_strerror(r));
                return 1;
        }
        printf("%s %llu runs (%llu files, %s); %llu runs kept (%s)\n",
               o.dry_run ? "would remove" : "removed", (unsigned long long)res.runs,
               (unsigned long long)res.files, BYTES_STR((double)res.bytes),
               (unsigned long long)res.kept_runs, BYTES_STR((double)res.kept_bytes));
        return res.failed ? 1 : 0;
}
