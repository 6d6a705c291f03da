/* SPDX-License-Identifier: MIT */
/* A recorded run through the one pipeline (replay.h). */
#include "pipeline/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/targets.h"
#include "model/units.h"
#include "runfiles/names.h"
#include "runfiles/runjson.h"
#include "runfiles/targetsjson.h"
#include "runfiles/unitscsv.h"
#include "pipeline/history-open.h"
#include "pipeline/recorder.h"
#include "store/history-run.h"
#include "store/store.h"
#include "util/json-cleanup.h"
#include "util/util.h"

#define REPLAY_MAX_CSV (4ULL << 30)
#define REPLAY_BUSY_MS 2000

struct replay {
        struct replay_ref ref;
        struct replay_run run;
        char *csv, *db;
        char *buf; /* the CSV's bytes */
        size_t len;
        struct store *st; /* the history's rows: st and id */
        int64_t id;
        struct recorder *rec;
        /* the recorded model */
        struct run_facts *facts;
        struct targets *targets;
        struct units *units;
        bool have_targets; /* the targets were read (a CSV may have no file of them) */
};

#define note(x, ...) note_to((x)->ref.note, (x)->ref.userdata, __VA_ARGS__)

static int say(char *why, size_t cap, int e, const char *fmt, ...) _printf_(4, 5);
static int say(char *why, size_t cap, int e, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(why, cap, fmt, ap);
        va_end(ap);
        return e;
}

/* ---- the run's files beside its CSV (names and parsers: runfiles/) ---- */

static void load_run_info(struct replay *rp)
{
        _cleanup_free_ char *path = runfiles_beside(rp->csv, RUNFILE_RUN);
        _cleanup_free_ char *buf = NULL;
        struct run_info *ri = &rp->run.ri;
        size_t len;

        ri->end_epoch = ri->start_epoch = NAN;
        ri->exit_code = -1;
        if (!path || read_file_at(AT_FDCWD, path, 1 << 20, &buf, &len) < 0)
                return;
        if (runjson_parse(buf, len, ri) < 0) /* ri untouched: unknown, as above */
                note(rp, "'%s' is not a run record; run facts left out", path);
}

static void load_units_file(struct replay *rp)
{
        _cleanup_free_ char *path = runfiles_beside(rp->csv, RUNFILE_UNITS);
        _cleanup_free_ char *buf = NULL;
        size_t len, skipped = 0;

        if (!path || read_file_at(AT_FDCWD, path, 64 << 20, &buf, &len) < 0 ||
            units_new(&rp->units) < 0)
                return;
        if (unitscsv_parse(buf, len, rp->units, &skipped) < 0) {
                note(rp, "'%s' is not a units file; units left out", path);
                units_free(rp->units);
                rp->units = NULL;
        } else if (skipped)
                note(rp, "%zu bad rows of '%s' skipped", skipped, path);
}

static void load_targets_file(struct replay *rp)
{
        _cleanup_free_ char *path = runfiles_beside(rp->csv, RUNFILE_TARGETS);
        _cleanup_free_ char *buf = NULL;
        size_t len;

        if (!path || read_file_at(AT_FDCWD, path, 16 << 20, &buf, &len) < 0)
                return;
        if (targetsjson_parse(buf, len, rp->facts, rp->targets) == -EINVAL) {
                targets_release(rp->targets);
                targets_init(rp->targets);
                return;
        }
        rp->have_targets = true;
}

/* ---- the history's rows ---- */

/* The run's targets' facts, BuildKit steps, slowest ninja edges, the log's
 * compiler-cache blocks, and its units when it had process scans. */
/* The critical path the run's summary stored. */
static int replay_path(struct replay *rp)
{
        _cleanup_free_ char *json = NULL;
        int e = store_path_get(rp->st, rp->id, &json);

        return e > 0 ? targetsjson_path_load(json, &rp->targets->path) : e;
}

static int load_db(struct replay *rp, bool with_units)
{
        struct store_run run = {0};
        int e = store_targets_get(rp->st, rp->id, rp->facts);

        if (e >= 0 && store_run_get(rp->st, rp->id, &run) >= 0)
                run_failure_set(&rp->facts->failure, run.fail_target, run.fail_tool, run.fail_first,
                                run.fail_last);
        store_run_release(&run);

        for (size_t i = 0; e >= 0 && i < rp->facts->n; i++)
                (void)targets_get(rp->targets, rp->facts->t[i].name, strlen(rp->facts->t[i].name));
        if (e >= 0)
                e = store_steps_get(rp->st, rp->id, rp->targets);
        if (e >= 0)
                e = store_edges_get(rp->st, rp->id, rp->targets);
        if (e >= 0)
                e = replay_path(rp);
        /* the report's cache blocks only: none is no error */
        (void)store_cc_log_get(rp->st, rp->id, rp->run.ri.start_epoch, rp->targets);
        if (e >= 0 && with_units) {
                e = units_new(&rp->units);
                if (e >= 0)
                        e = store_units_read(rp->st, rp->id, rp->units);
        }
        return e;
}

/* The row of run_id in the history, for the baseline of a replay of its
 * files: 0 when there is no database, no such run (one recorded with
 * --no-db), or it cannot be read. */
static int64_t history_row(const char *db, const char *run_id)
{
        struct store *st = NULL;
        struct store_run run = {0};
        int64_t id = 0;

        if (!db || !run_id || !run_id[0] || history_store_open(db, false, REPLAY_BUSY_MS, &st) < 0)
                return 0;
        /* the run's own id, not a prefix of another's */
        if (store_run_find(st, run_id, &id) < 0 || store_run_get(st, id, &run) < 0 ||
            !run.info.run_id || strcmp(run.info.run_id, run_id) != 0)
                id = 0;
        store_run_release(&run);
        store_close(st);
        return id;
}

/* ---- finding the run ---- */

static int open_csv(struct replay *rp, char *why, size_t cap)
{
        int e = read_file_at(AT_FDCWD, rp->csv, REPLAY_MAX_CSV, &rp->buf, &rp->len);

        if (e < 0)
                return say(why, cap, e, "cannot read '%s': %s", rp->csv, strerror(-e));
        load_run_info(rp);
        if (rp->ref.need_record && !rp->run.ri.run_id) {
                _cleanup_free_ char *path = runfiles_beside(rp->csv, RUNFILE_RUN);

                return say(why, cap, -EINVAL, "'%s' is missing or not a run record",
                           path ? path : rp->csv);
        }
        rp->run.csv = rp->csv;
        /* the cap is the run's fact, not a threshold to choose again */
        rp->run.thresholds.mem_cap_mb = rp->run.ri.memory_max_mb;
        rp->run.state = rp->run.ri.finished ? STORE_RUN_FINISHED : STORE_RUN_INCOMPLETE;
        rp->run.row = history_row(rp->db, rp->run.ri.run_id);
        return 0;
}

/* The run's row: 0, -ENOENT when the database or the run is not there,
 * or -errno with why. */
static int open_db(struct replay *rp, const char *spec, char *why, size_t cap)
{
        _cleanup_json_ json_t *procs = NULL, *guard = NULL;
        struct store_run run;
        int e = history_store_open(rp->db, false, REPLAY_BUSY_MS, &rp->st);

        if (e == -ENOENT)
                return e;
        if (e >= 0)
                e = store_run_find(rp->st, spec, &rp->id);
        if (e == -ENOENT)
                return e;
        if (e == -EEXIST)
                return say(why, cap, e, "'%s' names several runs in '%s'; give more of the id",
                           spec, rp->db);
        if (e >= 0)
                e = store_run_get(rp->st, rp->id, &run);
        if (e < 0)
                return say(why, cap, e, "history database '%s': %s", rp->db, store_strerror(e));
        rp->run.ri = run.info;
        run.info = (struct run_info){0};
        procs = json_loads(run.procs_json, 0, NULL); /* NULL in, NULL out */
        guard = json_loads(run.guard_json, 0, NULL);
        (void)runjson_procs_parse(procs, &rp->run.ri.procs); /* a bad one is none */
        (void)runjson_guard_parse(guard, &rp->run.ri.guard);
        rp->run.vcs_rev = TAKE_PTR(run.vcs_rev);
        rp->run.state = run.state;
        rp->run.row = rp->id;
        if (rp->ref.own_thresholds)
                (void)store_run_thresholds(&run, &rp->run.thresholds);
        /* the cap is the run's fact, not a threshold to choose again */
        rp->run.thresholds.mem_cap_mb = isfinite(run.mem_cap_mb) ? run.mem_cap_mb : 0;
        store_run_release(&run);
        return 0;
}

static bool is_path(const char *spec)
{
        size_t n = strlen(spec);
        struct stat st;

        return stat(spec, &st) == 0 || strchr(spec, '/') ||
               (n > 4 && strcmp(spec + n - 4, ".csv") == 0);
}

/* RUN: a CSV path; else the history; else its files in the log directory. */
static int resolve(struct replay *rp, const char *spec, char *why, size_t cap)
{
        _cleanup_free_ char *dir = NULL;
        int e = -ENOENT;

        if (spec[0] && is_path(spec)) {
                rp->csv = strdup(spec);
                return rp->csv ? open_csv(rp, why, cap) : -ENOMEM;
        }
        if (rp->db)
                e = open_db(rp, spec, why, cap);
        if (e != -ENOENT)
                return e;
        if (!spec[0])
                return say(why, cap, e, "no run in the history database '%s'",
                           rp->db ? rp->db : "(none)");
        dir = rp->ref.log_dir ? strdup(rp->ref.log_dir) : recorder_default_log_dir();
        rp->csv = dir ? runfiles_path(dir, spec, RUNFILE_CSV) : NULL;
        if (rp->csv && access(rp->csv, F_OK) == 0)
                return open_csv(rp, why, cap);
        if (rp->db && !rp->ref.no_db)
                return say(why, cap, e,
                           "no run '%s' in the history database '%s', nor its file '%s'", spec,
                           rp->db, rp->csv ? rp->csv : "resources-RUN.csv");
        return say(why, cap, e, "no run '%s': no file '%s'%s", spec,
                   rp->csv ? rp->csv : "resources-RUN.csv",
                   rp->ref.no_db ? " (--no-db)" : ", and no history database");
}

int replay_open(const struct replay_ref *ref, struct replay **ret, char *why, size_t cap)
{
        struct replay *rp = calloc(1, sizeof(*rp));
        int e = rp ? 0 : -ENOMEM;

        why[0] = '\0';
        if (e >= 0) {
                rp->ref = *ref;
                rp->run.thresholds = ref->thresholds;
                if (!ref->no_db)
                        rp->db = ref->db_path ? strdup(ref->db_path) : store_default_path();
                rp->run.db_path = rp->db;
                rp->facts = calloc(1, sizeof(*rp->facts));
                rp->targets = malloc(sizeof(*rp->targets));
                e = rp->facts && rp->targets && (rp->db || !ref->db_path) ? 0 : -ENOMEM;
        }
        if (e >= 0) {
                targets_init(rp->targets);
                e = resolve(rp, ref->run ? ref->run : "", why, cap);
        }
        if (e < 0) {
                replay_free(rp);
                return e;
        }
        *ret = rp;
        return 0;
}

void replay_free(struct replay *rp)
{
        if (!rp)
                return;
        recorder_free(rp->rec);
        store_close(rp->st);
        run_info_release(&rp->run.ri);
        free(rp->run.vcs_rev);
        free(rp->csv);
        free(rp->db);
        free(rp->buf);
        if (rp->targets)
                targets_release(rp->targets);
        free(rp->targets);
        free(rp->facts);
        units_free(rp->units);
        free(rp);
}

const struct replay_run *replay_run(const struct replay *rp)
{
        return &rp->run;
}

/* The samples of the run's source through rp->rec. */
static int64_t samples(struct replay *rp, char *why, size_t cap)
{
        int64_t n = rp->st ? recorder_replay_history(rp->rec, rp->st, rp->id)
                           : recorder_replay_csv(rp->rec, rp->buf ? rp->buf : "", rp->len);

        if (n >= 0 || n == -ENOMEM)
                return n;
        if (rp->st)
                say(why, cap, (int)n, "history database '%s': %s", rp->db, store_strerror((int)n));
        else
                say(why, cap, (int)n, "'%s' is not a buildtel CSV (%s)", rp->csv,
                    n == -EINVAL ? "no buildtel header" : strerror((int)-n));
        return n;
}

int64_t replay_through(struct replay *rp, const struct sink_ops *const *sinks, void *userdata,
                       const struct run_model **ret_model, char *why, size_t cap)
{
        struct recorder_config cfg = {.summary = rp->run.thresholds,
                                      .sinks = sinks,
                                      .sink_userdata = userdata,
                                      .db_path = rp->db,
                                      .no_db = rp->ref.no_db,
                                      .note = rp->ref.note,
                                      .userdata = rp->ref.userdata};
        struct run_model m;
        int64_t n;
        int e;

        why[0] = '\0';
        e = recorder_new(&cfg, &rp->run.ri, &rp->rec);
        if (e >= 0) {
                e = recorder_open_sinks(rp->rec);
                if (e < 0 && e != -ENOMEM)
                        return say(why, cap, e, "its outputs could not be opened: %s",
                                   strerror(-e));
        }
        n = e < 0 ? e : samples(rp, why, cap);
        if (n < 0)
                return n;
        targets_facts(NULL, &rp->run.ri, rp->facts);
        rp->have_targets = rp->st != NULL;
        if (rp->st)
                e = load_db(rp, recorder_summary(rp->rec)->build.mode[0] != '\0');
        else {
                load_units_file(rp);
                load_targets_file(rp);
        }
        if (e < 0)
                return e == -ENOMEM ? e
                                    : say(why, cap, e, "history database '%s': %s", rp->db,
                                          store_strerror(e));
        m = (struct run_model){.facts = rp->facts,
                               .targets = rp->have_targets ? rp->targets : NULL,
                               .units = rp->units};
        (void)recorder_finish_recorded(rp->rec, &m, rp->run.row);
        *ret_model = recorder_model(rp->rec);
        return n;
}
