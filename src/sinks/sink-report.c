/* SPDX-License-Identifier: MIT */
/* report-<id>.html, written once at the end (--no-report: not), and the
 * Markdown job summary appended to $GITHUB_STEP_SUMMARY when set. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runfiles/names.h"
#include "render/report.h"
#include "sinks/logfile.h"
#include "sinks/sink.h"
#include "util/macro.h"
#include "util/outfile.h"
#include "util/util.h"

struct report_state {
        char *html;    /* NULL: --no-report */
        char *summary; /* $GITHUB_STEP_SUMMARY; NULL: unset */
        char *files[8];
        char *build_log; /* its path, to name the .gz it may have become */
        struct report_data d;
};

static void report_close(void *state)
{
        struct report_state *st = state;

        free(st->html);
        free(st->summary);
        free(st->build_log);
        for (size_t i = 0; i < ARRAY_SIZE(st->files); i++)
                free(st->files[i]);
        report_data_release(&st->d);
        free(st);
}

static int report_open(const struct sink_ctx *ctx, void **ret_state)
{
        static const enum runfile names[] = {
            RUNFILE_CSV,     RUNFILE_SUMMARY_TXT, RUNFILE_SUMMARY_JSON,
            RUNFILE_TARGETS, RUNFILE_BUILD_LOG,   RUNFILE_REPORT,
        };
        struct report_state *st = calloc(1, sizeof(*st));
        const char *gh = getenv("GITHUB_STEP_SUMMARY");
        size_t k = 0;

        if (!st)
                return -ENOMEM;
        report_data_init(&st->d);
        if (!ctx->no_report &&
            !(st->html = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_REPORT)))
                goto oom;
        if (gh && *gh && !(st->summary = strdup(gh)))
                goto oom;
        if (ctx->log_dir &&
            !(st->build_log = runfiles_path(ctx->log_dir, ctx->run->run_id, RUNFILE_BUILD_LOG)))
                goto oom;
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                if (ctx->no_report && names[i] == RUNFILE_REPORT)
                        continue;
                st->files[k] = runfiles_path(NULL, ctx->run->run_id, names[i]);
                if (!st->files[k++])
                        goto oom;
        }
        *ret_state = st;
        return 0;
oom:
        report_close(st);
        return -ENOMEM;
}

static void report_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct report_state *st = state;

        if (st->html)
                (void)report_data_add(&st->d, s); /* out of memory: a shorter chart */
}

static int append_summary(const char *path, const struct run_model *m, const char *const *files)
{
        _cleanup_dbuf_ struct dbuf md = DBUF_INIT;
        int fd, r = report_render_markdown(m, files, &md);

        if (r < 0)
                return r;
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0)
                return -errno;
        r = write_all(fd, md.p, md.len);
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        return r;
}

/* sink-buildlog, before this sink, may have compressed the log. */
static void rename_compressed_log(struct report_state *st)
{
        _cleanup_free_ char *cur = st->build_log ? logfile_settled(st->build_log) : NULL;
        const char *base = cur ? strrchr(cur, '/') : NULL;

        if (!base || strcmp(cur, st->build_log) == 0)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(st->files); i++)
                if (st->files[i] && strncmp(st->files[i], "build-", 6) == 0) {
                        char *n = strdup(base + 1);

                        if (n) {
                                free(st->files[i]);
                                st->files[i] = n;
                        }
                }
}

static int report_finish(void *state, const struct run_model *m)
{
        struct report_state *st = state;
        struct dbuf html = DBUF_INIT;
        int r = 0, e;

        if (st->html) {
                r = report_render_html(&st->d, m, &html);
                if (r >= 0)
                        r = write_file_atomic(st->html, html.p, html.len);
                dbuf_release(&html);
        }
        if (st->summary) {
                rename_compressed_log(st);
                e = append_summary(st->summary, m, (const char *const *)st->files);
                if (r >= 0)
                        r = e;
        }
        return r;
}

const struct sink_ops sink_report = {
    .name = "report",
    .open = report_open,
    .sample = report_sample,
    .finish = report_finish,
    .close = report_close,
};

struct page_state {
        struct report_page_job *job;
        struct report_data d;
};

static int page_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct page_state *st = calloc(1, sizeof(*st));

        if (!st)
                return -ENOMEM;
        st->job = ctx->userdata;
        report_data_init(&st->d);
        *ret_state = st;
        return 0;
}

static void page_sample(void *state, const struct sample *s, const struct run_model *m)
{
        struct page_state *st = state;

        if (st->job->result >= 0)
                st->job->result = report_data_add(&st->d, s);
}

static int page_finish(void *state, const struct run_model *m)
{
        struct page_state *st = state;
        struct report_page_job *j = st->job;

        if (j->result >= 0)
                j->result = j->markdown ? report_render_markdown(m, NULL, &j->out)
                                        : report_render_html(&st->d, m, &j->out);
        return 0;
}

static void page_close(void *state)
{
        struct page_state *st = state;

        report_data_release(&st->d);
        free(st);
}

const struct sink_ops sink_report_page = {
    .name = "report",
    .open = page_open,
    .sample = page_sample,
    .finish = page_finish,
    .close = page_close,
};
