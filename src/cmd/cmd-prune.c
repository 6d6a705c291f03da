/* SPDX-License-Identifier: MIT */
/* buildtel prune: the oldest finished runs' files and history rows, gone
 * together; the policy is model/retention's, the rows go through
 * store_run_delete(), the files are unlinked here. */
#include "cmd/cmd-prune.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "parse/runfiles.h"
#include "pipeline/recorder.h"
#include "store/history.h"
#include "store/store.h"
#include "util/macro.h"
#include "util/util.h"

/* The files a run writes are every kind of parse/runfiles.h, by name, in
 * its log directory: nothing else is ever removed. The name of kind k for
 * run_id into buf; false when it does not fit. */
static bool run_file_name(const char *run_id, int k, char *buf, size_t len)
{
        _cleanup_free_ char *n = runfiles_path(NULL, run_id, (enum runfile)k);
        int r = n ? snprintf(buf, len, "%s", n) : -1;

        return r >= 0 && (size_t)r < len;
}

/* One run of the history as prune sees it. */
struct prune_run {
        int64_t id;
        char *run_id, *dir;
        uint64_t files;
};

struct prune_list {
        struct prune_run *v;
        struct retention_run *r;
        size_t n, cap;
        const char *log_dir, *self;
        int err;
};

static void list_release(struct prune_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].run_id);
                free(l->v[i].dir);
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
        const char *slash = r->build_log && r->build_log[0] == '/' ? strrchr(r->build_log, '/')
                                                                   : NULL;

        if (slash)
                return strndup(r->build_log, slash == r->build_log ? 1 : (size_t)(slash - r->build_log));
        return strdup(log_dir);
}

/* The run's files in dir that exist as regular files: count and bytes. */
static void measure(const char *dir, const char *run_id, uint64_t *ret_files, uint64_t *ret_bytes)
{
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        *ret_files = *ret_bytes = 0;
        for (int k = 0; dfd >= 0 && k < RUNFILE_COUNT_; k++) {
                char name[256];
                struct stat sb;

                if (!run_file_name(run_id, k, name, sizeof(name)) ||
                    fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
                        continue;
                (*ret_files)++;
                *ret_bytes += (uint64_t)sb.st_size;
        }
}

static int add_run(void *userdata, const struct store_run *r)
{
        struct prune_list *l = userdata;
        struct prune_run *p;
        struct retention_run *q;

        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 64;
                void *v = realloc(l->v, cap * sizeof(*l->v)), *w;

                if (!v)
                        return -ENOMEM;
                l->v = v;
                w = realloc(l->r, cap * sizeof(*l->r));
                if (!w)
                        return -ENOMEM;
                l->r = w;
                l->cap = cap;
        }
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
            !(p->dir = dir_of(r, l->log_dir))) {
                free(p->run_id);
                return -ENOMEM;
        }
        if (run_id_safe(p->run_id))
                measure(p->dir, p->run_id, &p->files, &q->bytes);
        l->n++;
        return 0;
}

/* Unlink the run's files; 0 or the first -errno (the others still go). */
static int remove_files(const struct prune_run *p)
{
        _cleanup_close_ int dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = 0;

        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        for (int k = 0; k < RUNFILE_COUNT_; k++) {
                char name[256];
                struct stat sb;

                if (!run_file_name(p->run_id, k, name, sizeof(name)) ||
                    fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode))
                        continue;
                if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT && r == 0)
                        r = -errno;
        }
        return r;
}

/* Remove run i (files first: a row without files is found again by the
 * next prune, files without a row never would be). */
static int prune_one(struct store *st, const struct prune_list *l, size_t i, bool dry,
                     bool verbose, struct prune_result *res)
{
        const struct prune_run *p = &l->v[i];
        char size[32];
        int r = dry ? 0 : remove_files(p);

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
        history_fmt_bytes((double)l->r[i].bytes, size, sizeof(size));
        if (verbose)
                printf("%s %s (%llu files, %s in %s)\n", dry ? "would remove" : "removed",
                       p->run_id, (unsigned long long)p->files, size, p->dir);
        return 0;
}

int prune_apply(const char *db_path, const char *log_dir, const struct retention_policy *p,
                const char *self, bool dry, bool verbose, struct prune_result *ret)
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
        r = store_open(db_path, false, 3000, &st);
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
                        }
                }
                *ret = res;
        }
        store_close(st);
        list_release(&l);
        return r < 0 ? r : 0;
}

static int parse_keep(const char *cmd, const char *what, const char *arg, uint64_t *ret)
{
        if (parse_u64_str(arg, ret) < 0) {
                fprintf(stderr, "buildtel %s: %s takes a count (0: keep all), not '%s'\n", cmd,
                        what, arg);
                return -1;
        }
        return 0;
}

static int parse_max_size(const char *cmd, const char *what, const char *arg, uint64_t *ret)
{
        if (strcmp(arg, "0") != 0 && parse_size_str(arg, ret) < 0) {
                fprintf(stderr, "buildtel %s: %s takes a size (500M, 2G; 0: no limit), not '%s'\n",
                        cmd, what, arg);
                return -1;
        }
        if (strcmp(arg, "0") == 0)
                *ret = 0;
        return 0;
}

int prune_limit_of(const char *cmd, const char *keep_runs, const char *keep_size,
                   struct retention_policy *ret)
{
        struct retention_policy p = {.keep = PRUNE_KEEP_RUNS, .max_bytes = PRUNE_KEEP_BYTES};
        const char *er = getenv("BUILDTEL_KEEP_RUNS"), *es = getenv("BUILDTEL_KEEP_SIZE");

        if (er && *er && parse_keep(cmd, "BUILDTEL_KEEP_RUNS", er, &p.keep) < 0)
                return -1;
        if (es && *es && parse_max_size(cmd, "BUILDTEL_KEEP_SIZE", es, &p.max_bytes) < 0)
                return -1;
        if (keep_runs && parse_keep(cmd, "--keep-runs", keep_runs, &p.keep) < 0)
                return -1;
        if (keep_size && parse_max_size(cmd, "--keep-size", keep_size, &p.max_bytes) < 0)
                return -1;
        *ret = p;
        return 0;
}

struct prune_opts {
        struct retention_policy p;
        const char *db, *log_dir;
        bool dry, given, help;
};

static int parse_older(const char *arg, double *ret)
{
        double now = now_realtime(), t;

        /* a span back from now (90s, 30m, 2h, 3d, 1w): how old */
        if (!*arg || !strchr("smhdw", arg[strlen(arg) - 1]) ||
            history_parse_when(arg, now, &t) < 0 || !(t <= now)) {
                fprintf(stderr, "buildtel prune: --older-than takes a span: 90s, 30m, 2h, 3d, "
                                "1w, not '%s'\n",
                        arg);
                return -1;
        }
        *ret = now - t;
        return 0;
}

static int prune_parse(int argc, char **argv, struct prune_opts *o, int *ret_optind)
{
        static const struct option longopts[] = {
            {"keep", required_argument, NULL, 'k'},      {"older-than", required_argument, NULL, 'o'},
            {"max-size", required_argument, NULL, 's'},  {"dry-run", no_argument, NULL, 'n'},
            {"db", required_argument, NULL, 'd'},        {"log-dir", required_argument, NULL, 'l'},
            {"help", no_argument, NULL, 'h'},            {0},
        };
        int c, r = 0;

        optind = 1;
        while (r == 0 && (c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                o->given |= c == 'k' || c == 'o' || c == 's';
                r = c == 'k'   ? parse_keep("prune", "--keep", optarg, &o->p.keep)
                    : c == 'o' ? parse_older(optarg, &o->p.older_than_s)
                    : c == 's' ? parse_max_size("prune", "--max-size", optarg, &o->p.max_bytes)
                               : 0;
                if (c == 'n')
                        o->dry = true;
                else if (c == 'd')
                        o->db = optarg;
                else if (c == 'l')
                        o->log_dir = optarg;
                else if (c == 'h')
                        o->help = true;
                else if (c == '?')
                        r = -1;
        }
        *ret_optind = optind;
        return r;
}

int cmd_prune(int argc, char **argv)
{
        struct prune_opts o = {0};
        struct prune_result res;
        char freed[32], left[32];
        int oi, r;

        if (prune_parse(argc, argv, &o, &oi) < 0 || oi != argc) {
                fprintf(stderr, "usage: buildtel prune [--keep N] [--older-than SPAN] "
                                "[--max-size SIZE] [--dry-run] [--db PATH] [--log-dir DIR]\n");
                return EXIT_BT_USAGE;
        }
        if (o.help)
                return cmd_print_usage("prune") < 0;
        /* no limit given: the one `run` applies at its end */
        if (!o.given && prune_limit_of("prune", NULL, NULL, &o.p) < 0)
                return EXIT_BT_USAGE;
        r = prune_apply(o.db, o.log_dir, &o.p, NULL, o.dry, true, &res);
        if (r < 0) {
                fprintf(stderr, "buildtel prune: cannot read the history: %s\n", store_strerror(r));
                return 1;
        }
        history_fmt_bytes((double)res.bytes, freed, sizeof(freed));
        history_fmt_bytes((double)res.kept_bytes, left, sizeof(left));
        printf("%s %llu runs (%llu files, %s); %llu runs kept (%s)\n",
               o.dry ? "would remove" : "removed", (unsigned long long)res.runs,
               (unsigned long long)res.files, freed, (unsigned long long)res.kept_runs, left);
        return res.failed ? 1 : 0;
}
