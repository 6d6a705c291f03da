/* SPDX-License-Identifier: MIT */
/* buildtel bench: hyperfine's loop over whole buildtel runs. Each run
 * (warmup and timed) goes through run's own code path in this process
 * (cmd_run_build: cgroup, recorder, files, history row); its facts come
 * from the run's model at the recorder's finish (on_finish). Each BUILD
 * is one shell string, run as `sh -c BUILD`, as hyperfine takes them:
 * they are the user's own command line, never a string from a build. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-run.h"
#include "cmd/cmd.h"
#include "model/bench.h"
#include "model/run.h"
#include "platform/spawn.h"
#include "render/bench.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

#define BENCH_HOOK_TIMEOUT_S 86400.0
#define BENCH_PARAM_VALUES 100

/* hyperfine's --parameter-scan NAME MIN MAX [-D STEP] and --parameter-list
 * NAME V1,V2,...: each BUILD run once per value, {NAME} replaced. */
struct scan {
        const char *name;
        char *values[BENCH_PARAM_VALUES];
        size_t n;
        char *list; /* --parameter-list's, split in place */
};

struct bench {
        const struct common_opts *tmpl; /* the parsed options: copied for each run */
        const struct scan *scan;        /* NULL: none */
        const struct child_fds *given;
        bool have_facts;
        struct run_figures facts; /* the last run's, from on_finish */
};

static void take_facts(void *userdata, const struct run_model *m)
{
        struct bench *B = userdata;

        run_figures_of(m, &B->facts);
        B->have_facts = true;
}

/* Our stdout and stderr onto /dev/null for a run, unless --show-output:
 * saved[] keeps them (-1: not moved). */
static void quiet_begin(const struct bench *B, int saved[2])
{
        int null;

        saved[0] = saved[1] = -1;
        if (B->tmpl->show_output)
                return;
        fflush(stdout);
        fflush(stderr);
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null < 0)
                return;
        for (int fd = 1; fd <= 2; fd++) {
                saved[fd - 1] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                if (saved[fd - 1] >= 0)
                        (void)dup2(null, fd);
        }
        close(null);
}

static void quiet_end(int saved[2])
{
        for (int fd = 1; fd <= 2; fd++)
                if (saved[fd - 1] >= 0) {
                        (void)dup2(saved[fd - 1], fd);
                        close(saved[fd - 1]);
                }
}

/* One whole buildtel run of sh -c command. Its facts into *ret_f, its id
 * into ret_id; returns its exit status (or EXIT_BT_*, EXIT_BT_SIGNAL). */
static int one_run(struct bench *B, char *command, struct run_figures *ret_f, char *ret_id)
{
        struct common_opts o = *B->tmpl;
        char sh[] = "sh", dash_c[] = "-c";
        char *argv[] = {sh, dash_c, command, NULL};
        int saved[2], st;
        double t0 = now_monotonic();

        o.run_id[0] = '\0';
        o.rec.quiet = true;
        o.rec.on_finish = take_facts;
        o.rec.on_finish_userdata = B;
        B->have_facts = false;
        quiet_begin(B, saved);
        st = cmd_run_build(&o, argv, 3, B->given);
        quiet_end(saved);
        if (!B->have_facts)
                run_figures_init(&B->facts); /* its duration NAN: ours below */
        if (!isfinite(B->facts.duration_s))
                B->facts.duration_s = now_monotonic() - t0;
        B->facts.exit_code = exit_bt_status(st);
        *ret_f = B->facts;
        snprintf(ret_id, BENCH_RUN_ID_MAX, "%s", o.run_id);
        return st;
}

/* --prepare or --cleanup: sh -c cmd, its output shown only with
 * --show-output (and its stderr when it fails). 0, or -1 after one line. */
static int hook(const struct bench *B, const char *what, const char *cmd)
{
        char sh[] = "sh", dash_c[] = "-c";
        _cleanup_free_ char *copy = strdup(cmd);
        char *argv[] = {sh, dash_c, copy, NULL};
        struct spawn_config cfg = {.argv = argv,
                                   .out_max = 65536,
                                   .timeout_s = BENCH_HOOK_TIMEOUT_S,
                                   .capture_stderr = true};
        struct spawn_result r = {0};
        int st = copy ? spawn_capture(&cfg, &r) : -ENOMEM;

        if (st >= 0 && B->tmpl->show_output) {
                (void)write_all(STDOUT_FILENO, r.out, r.out_len);
                (void)write_all(STDERR_FILENO, r.err, r.err_len);
        }
        if (st != 0) {
                if (st > 0 && !B->tmpl->show_output && r.err_len)
                        (void)write_all(STDERR_FILENO, r.err, r.err_len);
                fprintf(stderr, "buildtel bench: the %s command '%s' %s%s%d\n", what, cmd,
                        st < 0 ? "could not run: " : "failed with exit status ",
                        st < 0 ? strerror(-st) : "", st < 0 ? 0 : st);
        }
        spawn_result_release(&r);
        return st == 0 ? 0 : -1;
}

static int failed(const struct common_opts *o, const char *cmd, int st, const char *run_id)
{
        /* Interrupted (the build died of SIGINT or SIGQUIT: we end by it,
         * main; or run passed SIGINT or SIGTERM on to it): the bench ends
         * there, -i or not, as hyperfine on Ctrl-C. */
        if (st < 0 || st == 128 + SIGINT || st == 128 + SIGTERM) {
                fprintf(stderr, "buildtel bench: interrupted (run %s)\n", run_id);
                return st;
        }
        if (st == 0 || o->ignore_failure)
                return 0;
        fprintf(stderr,
                "buildtel bench: '%s' exited with status %d (run %s)%s; use -i/--ignore-failure "
                "to go on\n",
                cmd, st, run_id,
                st >= EXIT_BT_INTERNAL && st <= EXIT_BT_NOTFOUND && !o->show_output
                    ? " (buildtel's own status or the shell's: --show-output says why)"
                    : "");
        return st;
}

/* The warmup and timed runs of one command: the timed ones' figures and
 * ids into f and run_id, counted in *n. 0, or the exit status to stop with. */
static int series(struct bench *B, char *cmd, struct run_figures *f,
                  char (*run_id)[BENCH_RUN_ID_MAX], size_t *n)
{
        const struct common_opts *o = B->tmpl;
        struct run_figures warm;
        char id[BENCH_RUN_ID_MAX];
        int st;

        for (uint64_t i = 0; i < o->bench_warmup + o->bench_runs; i++) {
                bool timed = i >= o->bench_warmup; /* a warmup run's figures are dropped */
                char *rid = timed ? run_id[*n] : id;

                if (o->prepare && hook(B, "prepare", o->prepare) < 0)
                        return 1;
                if (isatty(STDERR_FILENO)) /* hyperfine's progress, on a terminal */
                        fprintf(stderr, "\r\033[Kbuildtel bench: %s: %s %llu of %llu", cmd,
                                timed ? "run" : "warmup",
                                (unsigned long long)(timed ? i - o->bench_warmup + 1 : i + 1),
                                (unsigned long long)(timed ? o->bench_runs : o->bench_warmup));
                st = one_run(B, cmd, timed ? &f[(*n)++] : &warm, rid);
                if (isatty(STDERR_FILENO))
                        fputs("\r\033[K", stderr);
                if ((st = failed(o, cmd, st, rid)))
                        return st;
        }
        if (o->cleanup && hook(B, "cleanup", o->cleanup) < 0)
                return 1;
        return 0;
}

/* The text on stdout and the exports. 0, or -1 after saying why. */
static int report(const struct common_opts *o, const struct bench_view *v)
{
        const struct {
                const char *opt, *path;
                int (*render)(const struct bench_view *v, struct dbuf *out);
        } exports[] = {{"--export-json", o->export_json, render_bench_json},
                       {"--export-markdown", o->export_markdown, render_bench_markdown}};
        _cleanup_dbuf_ struct dbuf b = DBUF_INIT;
        int e = 0;

        for (size_t i = 0; i < v->n && e >= 0; i++)
                e = render_bench_series(v, i, &b);
        if (e >= 0)
                e = render_bench_summary(v, &b);
        if (e < 0) {
                fprintf(stderr, "buildtel bench: out of memory\n");
                return -1;
        }
        fwrite(b.p, 1, b.len, stdout);
        fflush(stdout);
        for (size_t i = 0; i < ARRAY_SIZE(exports); i++) {
                if (!exports[i].path)
                        continue;
                dbuf_reset(&b);
                if (exports[i].render(v, &b) < 0)
                        return -1;
                e = outfile_write(exports[i].path, b.p, b.len);
                if (e < 0) {
                        fprintf(stderr, "buildtel bench: %s: cannot write '%s': %s\n",
                                exports[i].opt, exports[i].path, outfile_strerror(e));
                        return -1;
                }
        }
        return 0;
}

/* The statistics of the n series run, printed and exported. */
static int conclude(const struct common_opts *o, const struct bench_series *s, size_t n)
{
        _cleanup_free_ struct bench_result *r = calloc(n, sizeof(*r));
        _cleanup_free_ struct bench_cmp *cmp = calloc(n, sizeof(*cmp));
        struct bench_view v = {.s = s, .r = r, .n = n, .cmp = cmp};
        int ret = -1, k = 0;

        if (!r || !cmp)
                goto out;
        for (size_t i = 0; i < n; i++)
                if (bench_result_of(&s[i], &r[i]) < 0)
                        goto out;
        if (n > 1 && (k = bench_compare(s, r, n, cmp, &v.ref)) < 0)
                goto out;
        v.nc = (size_t)k;
        ret = report(o, &v);
out:
        if (ret < 0 && (!r || !cmp || k < 0))
                fprintf(stderr, "buildtel bench: out of memory\n");
        return ret;
}

/* Each command's series, its runs' figures and ids in one array each. */
static int bench_all(struct bench *B, char **cmds, size_t n)
{
        size_t runs = B->tmpl->bench_runs, per = B->scan ? B->scan->n : 0;
        _cleanup_free_ struct bench_series *s = calloc(n, sizeof(*s));
        _cleanup_free_ struct run_figures *f = calloc(n * runs, sizeof(*f));
        _cleanup_free_ char(*ids)[BENCH_RUN_ID_MAX] = calloc(n * runs, sizeof(*ids));
        const char(*cids)[BENCH_RUN_ID_MAX] = (const char(*)[BENCH_RUN_ID_MAX])ids;
        int st = 0;

        if (!s || !f || !ids) {
                fprintf(stderr, "buildtel bench: out of memory\n");
                return EXIT_BT_INTERNAL;
        }
        for (size_t i = 0; i < n && st == 0; i++) {
                s[i] = (struct bench_series){.command = cmds[i],
                                             .f = f + i * runs,
                                             .run_id = cids + i * runs,
                                             .param = per ? B->scan->name : NULL,
                                             .value = per ? B->scan->values[i % per] : NULL};
                st = series(B, cmds[i], f + i * runs, ids + i * runs, &s[i].n);
        }
        if (st == 0 && conclude(B->tmpl, s, n) < 0)
                st = EXIT_BT_INTERNAL;
        return st;
}

static int bad_scan(const char *what)
{
        fprintf(stderr, "buildtel bench: %s\n", what);
        cmd_print_short_usage("bench");
        return -1;
}

/* Take the parameter options out of argv (getopt gives an option one
 * argument; these take two or three), up to "--". Returns the new argc,
 * or -1 after saying what is wrong. */
static int take_scan(int argc, char **argv, struct scan *sc)
{
        const char *min = NULL, *max = NULL, *step = NULL;
        double lo, hi, d = 1;
        int n = 1;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                bool scan = !strcmp(a, "--parameter-scan") || !strcmp(a, "-P");
                bool list = !strcmp(a, "--parameter-list") || !strcmp(a, "-L");

                if (!strcmp(a, "--")) {
                        while (i < argc)
                                argv[n++] = argv[i++];
                        break;
                }
                if ((scan || list) && sc->name)
                        return bad_scan("one parameter at most");
                if (scan && i + 3 < argc) {
                        sc->name = argv[++i];
                        min = argv[++i];
                        max = argv[++i];
                } else if (list && i + 2 < argc) {
                        sc->name = argv[++i];
                        if (!(sc->list = strdup(argv[++i])))
                                return bad_scan("out of memory");
                } else if ((!strcmp(a, "--parameter-step-size") || !strcmp(a, "-D")) &&
                           i + 1 < argc) {
                        step = argv[++i];
                } else if (scan || list) {
                        return bad_scan(
                            "--parameter-scan takes NAME MIN MAX, --parameter-list NAME V1,V2");
                } else {
                        argv[n++] = argv[i];
                }
        }
        if (!sc->name)
                return step ? bad_scan("-D/--parameter-step-size goes with --parameter-scan") : n;
        if (!sc->name[0] || strpbrk(sc->name, "{}"))
                return bad_scan("a parameter's name: not empty, no braces");
        if (sc->list) {
                for (char *p = sc->list, *v; (v = strsep(&p, ","));)
                        if (*v && sc->n < BENCH_PARAM_VALUES) /* empty values skipped */
                                sc->values[sc->n++] = strdup(v);
                return sc->n ? n : bad_scan("--parameter-list: no value");
        }
        if (parse_double_str(min, &lo) < 0 || parse_double_str(max, &hi) < 0 ||
            (step && (parse_double_str(step, &d) < 0 || !(d > 0))) || !(lo <= hi) ||
            (!step && (lo != floor(lo) || hi != floor(hi))))
                return bad_scan("--parameter-scan: MIN <= MAX, whole numbers (or -D STEP > 0)");
        for (double v = lo; v <= hi + d * 1e-9 && sc->n < BENCH_PARAM_VALUES;
             v = lo + d * (double)sc->n) {
                char buf[32];

                snprintf(buf, sizeof(buf), "%.10g", v);
                sc->values[sc->n++] = strdup(buf);
        }
        return n;
}

/* Each BUILD once per value, {NAME} replaced; NULL after saying why. */
static char **expand(const struct scan *sc, char **builds, size_t nb)
{
        char **out = calloc(nb * sc->n + 1, sizeof(*out));
        _cleanup_free_ char *pat = NULL;

        if (!out || asprintf(&pat, "{%s}", sc->name) < 0) {
                free(out);
                return NULL;
        }
        for (size_t b = 0; b < nb; b++) {
                if (!strstr(builds[b], pat)) {
                        fprintf(stderr, "buildtel bench: '%s' does not hold %s\n", builds[b], pat);
                        goto fail;
                }
                for (size_t v = 0; v < sc->n; v++) {
                        struct dbuf d = DBUF_INIT;
                        const char *p = builds[b], *q;

                        for (; (q = strstr(p, pat)); p = q + strlen(pat)) {
                                dbuf_append(&d, p, (size_t)(q - p));
                                dbuf_puts(&d, sc->values[v] ? sc->values[v] : "");
                        }
                        if (dbuf_puts(&d, p) < 0 || !sc->values[v])
                                goto fail;
                        out[b * sc->n + v] = d.p;
                }
        }
        return out;
fail:
        for (size_t i = 0; i < nb * sc->n; i++)
                free(out[i]);
        free(out);
        return NULL;
}

int cmd_bench(int argc, char **argv)
{
        struct common_opts o = {.help = false}; /* cmd_parse_options sets it up */
        struct child_fds given;
        struct scan sc = {.name = NULL};
        struct bench B = {.tmpl = &o, .given = &given};
        char **cmds = NULL;
        int k, ret = EXIT_BT_USAGE;

        if (child_fds_take(&given) < 0)
                given.overflow = true;
        if ((argc = take_scan(argc, argv, &sc)) < 0)
                goto out;
        k = cmd_parse_options(CMDS_BENCH, "bench", argc, argv, &o);
        if (k <= 0) {
                ret = k == 0 ? 0 : ret;
                goto out;
        }
        if (k >= argc) {
                fprintf(stderr, "buildtel bench: no command given\n");
                cmd_print_short_usage("bench");
                goto out;
        }
        for (int i = k; i < argc; i++)
                if (!argv[i][0]) {
                        fprintf(stderr, "buildtel bench: an empty command\n");
                        goto out;
                }
        if (sc.name) {
                if (!(cmds = expand(&sc, argv + k, (size_t)(argc - k)))) {
                        ret = EXIT_BT_USAGE;
                        goto out;
                }
                B.scan = &sc;
                ret = bench_all(&B, cmds, (size_t)(argc - k) * sc.n);
        } else {
                ret = bench_all(&B, argv + k, (size_t)(argc - k));
        }
out:
        for (size_t i = 0; cmds && cmds[i]; i++)
                free(cmds[i]);
        free(cmds);
        for (size_t i = 0; i < sc.n; i++)
                free(sc.values[i]);
        free(sc.list);
        common_opts_release(&o);
        return ret;
}
