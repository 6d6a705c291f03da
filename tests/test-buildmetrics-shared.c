/* SPDX-License-Identifier: MIT */
/* The build-metrics parsers over ../shared/fixtures (real build logs we may
 * read but not ship). Every expected value below was read off the files by
 * hand; the comments say where. Plain C: the folder is optional (exit 77
 * when it is missing). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/buildmetrics.h"
#include "parse/ccstats.h"
#include "parse/ninjalog.h"
#include "util/macro.h"
#include "util/util.h"
#include "helpers/parse.h"

#ifndef SHARED_FIXTURES
#error "SHARED_FIXTURES must be defined by the build"
#endif

static int failures;

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
                        failures++;                                                                \
                }                                                                                  \
        } while (0)

#define CHECK_U(a, b)                                                                              \
        do {                                                                                       \
                uint64_t a_ = (a), b_ = (b);                                                       \
                if (a_ != b_) {                                                                    \
                        fprintf(stderr, "%s:%d: %s is %" PRIu64 ", expected %" PRIu64 "\n",        \
                                __FILE__, __LINE__, #a, a_, b_);                                   \
                        failures++;                                                                \
                }                                                                                  \
        } while (0)

#define CHECK_S(a, b)                                                                              \
        do {                                                                                       \
                const char *a_ = (a), *b_ = (b);                                                   \
                if (strcmp(a_, b_) != 0) {                                                         \
                        fprintf(stderr, "%s:%d: %s is '%s', expected '%s'\n", __FILE__, __LINE__,  \
                                #a, a_, b_);                                                       \
                        failures++;                                                                \
                }                                                                                  \
        } while (0)

static char *slurp(const char *rel, size_t *len)
{
        char path[1024];
        char *buf = NULL;
        int e;

        if (snprintf(path, sizeof(path), "%s/%s", SHARED_FIXTURES, rel) >= (int)sizeof(path))
                abort();
        e = read_file_at(AT_FDCWD, path, 64u << 20, &buf, len);
        if (e < 0) {
                fprintf(stderr, "cannot read %s: %s\n", path, strerror(-e));
                exit(1);
        }
        return buf;
}

/* The fenced block that follows the line `heading` in a markdown file. */
static void fenced(const char *buf, size_t len, const char *heading, const char **ret,
                   size_t *ret_len)
{
        const char *h = memmem(buf, len, heading, strlen(heading)), *s, *e;

        if (!h)
                abort();
        s = memmem(h, len - (size_t)(h - buf), "```\n", 4);
        if (!s)
                abort();
        s += 4;
        e = memmem(s, len - (size_t)(s - buf), "\n```", 4);
        if (!e)
                abort();
        *ret = s;
        *ret_len = (size_t)(e - s) + 1;
}

static struct buildmetrics *feed(const char *buf, size_t len, const char *targets)
{
        struct buildmetrics_config cfg = {.targets = targets};
        struct buildmetrics *bm = NULL;
        const char *c = buf, *end = buf + len;
        double now = 0;

        if (buildmetrics_new(&cfg, &bm) < 0)
                abort();
        while (c < end) {
                const char *nl = memchr(c, '\n', (size_t)(end - c));
                const char *le = nl ? nl : end;
                buildmetrics_feed_line(bm, c, (size_t)(le - c), now);
                now += 0.5;
                c = nl ? nl + 1 : end;
        }
        buildmetrics_finish(bm);
        return bm;
}

static const struct target *get(const struct targets *ts, const char *name)
{
        int i = targets_find(ts, name);

        if (i < 0) {
                fprintf(stderr, "no target '%s'\n", name);
                failures++;
                static struct target none;
                return &none;
        }
        return &ts->t[i];
}

static void check_target(const struct targets *ts, const char *name, uint32_t steps,
                         uint32_t cached, bool done)
{
        const struct target *t = get(ts, name);

        if (t->steps != steps || t->cached != cached || t->done != done) {
                fprintf(stderr, "target %s: %u steps, %u cached, done %d; expected %u, %u, %d\n",
                        name, t->steps, t->cached, t->done, steps, cached, done);
                failures++;
        }
}

/* Sample 01, the compose (bake) build before the remediation (lines 37-331).
 * Steps are the [... i/n] vertices:
 *   frontend: #7 deps 1/5 (DONE), #21-#26 (CACHED), #27 builder 4/5 (DONE),
 *             #34 builder 5/5 (DONE), #35 #36 runner 3/7 4/7 (CACHED),
 *             #37-#39 runner 5/7-7/7 (DONE): 14 steps, 8 cached.
 *   beat:     #10 builder 1/5 (DONE), #12-#19 (CACHED), #20 stage-1 6/6: 10, 8.
 *   worker:   #20 only, re-announced as "[worker stage-1 6/6]", DONE 11.3s: 1, 0.
 *   backend:  no step vertex of its own (only internal ones, export #30): 0, 0.
 * #20 is shared by beat and worker: the totals count it once (14+10+1-1 = 24
 * steps, 8+8 = 16 cached). #4 [worker internal] re-announced as [beat
 * internal] is one vertex. Every target's "exporting to image" ends DONE. */
static void sample01(void)
{
        size_t len, blen;
        const char *blk;
        char *buf =
            slurp("realworld/buildkit-plain/01_pgsims_compose-bake_multitarget_runbook.md", &len);
        struct buildmetrics *bm;
        const struct targets *ts;

        fenced(buf, len, "### docker compose up -d --build --remove-orphans", &blk, &blen);
        bm = feed(blk, blen, NULL);
        ts = buildmetrics_model(bm);
        CHECK_U(ts->n, 4);
        CHECK(ts->multi || ts->n == 4);
        check_target(ts, "frontend", 14, 8, true);
        check_target(ts, "beat", 10, 8, true);
        check_target(ts, "worker", 1, 0, true);
        check_target(ts, "backend", 0, 0, true);
        CHECK_U(ts->steps, 24);
        CHECK_U(ts->cached, 16);
        /* 41 vertices (#1-#41), 24 of them steps. */
        CHECK_U(ts->internal, 41 - 24);
        CHECK_U(ts->errors, 0);
        CHECK_U(ts->nfailed, 0);
        /* First seen at line 5 of the block ("#2 [backend internal]"), the
         * last backend line is "#31 DONE 0.2s" (block line 176); 0.5 s a line. */
        CHECK(get(ts, "backend")->first_seen == 2.0);
        CHECK(get(ts, "backend")->last_seen == 87.5);
        buildmetrics_free(bm);

        /* The remediation build (lines 380-636): frontend #6 (DONE), #27-#32
         * (CACHED), #33 #34 (DONE), #35 #36 (CACHED), #37-#39 (DONE): 14, 8;
         * beat #10 (DONE), #12-#20 (CACHED): 10, 9; worker and backend only
         * export. */
        fenced(buf, len, "### remediation: compose up with --env-file .env", &blk, &blen);
        bm = feed(blk, blen, NULL);
        ts = buildmetrics_model(bm);
        CHECK_U(ts->n, 4);
        check_target(ts, "frontend", 14, 8, true);
        check_target(ts, "beat", 10, 9, true);
        check_target(ts, "worker", 0, 0, true);
        check_target(ts, "backend", 0, 0, true);
        CHECK_U(ts->steps, 24);
        CHECK_U(ts->cached, 17);
        buildmetrics_free(bm);
        free(buf);
}

/* Sample 05: a single-target build (no prefix), two steps end in ERROR:
 * #8 [stage-1 2/5] and #9 [buildstage 2/3]; the epilogue repeats them
 * without "#N" and adds nothing. Steps: #5 (CACHED), #6 (CACHED), #8, #9. */
static void sample05(void)
{
        size_t len;
        char *buf =
            slurp("realworld/buildkit-plain/05_containerforge_build_two-errors_ansi.log", &len);
        struct buildmetrics *bm = feed(buf, len, NULL);
        const struct targets *ts = buildmetrics_model(bm);

        CHECK_U(ts->n, 1);
        CHECK_S(ts->t[0].name, "default");
        CHECK_S(ts->builder, "default");
        CHECK_U(ts->steps, 4);
        CHECK_U(ts->cached, 2);
        CHECK_U(ts->errors, 2);
        CHECK_U(ts->nfailed, 2);
        CHECK_S(ts->failed[0].name,
                "[stage-1 2/5] RUN   echo \"**** create var lib folder ****\" &&   install -d -o "
                "apps -g apps     /var/lib/syncthing && USER apps");
        CHECK_S(ts->failed[1].name,
                "[buildstage 2/3] RUN  echo \"**** install build packages ****\" &&   apt-get "
                "update && apt-get install -y --no-install-recommends     build-essential");
        CHECK(ts->failed[0].target == 0);
        CHECK(!ts->t[0].done);
        buildmetrics_free(bm);
        free(buf);
}

/* Sample 06: bake of one target (no prefix), #10 [buildstage 3/3] RUN ...
 * ends in ERROR; its \r progress meters are log lines. Steps #6 (CACHED),
 * #7 (DONE), #8 (CACHED), #10 (ERROR). The header is 600+ bytes: the name is
 * kept to TARGET_STEP_NAME_MAX. */
static void sample06(void)
{
        size_t len;
        char *buf = slurp(
            "realworld/buildkit-plain/06_containerforge_bake_error_carriage-returns.log", &len);
        struct buildmetrics *bm = feed(buf, len, NULL);
        const struct targets *ts = buildmetrics_model(bm);
        static const char head[] = "[buildstage 3/3] RUN echo \"**** fetch source code ****\" &&"
                                   "   mkdir -p     /tmp/pwndrop &&   curl -fL -o   /tmp/pwndrop"
                                   "-src.tar.gz     \"https://github.com/kgretzky/pwndrop/archiv"
                                   "e/refs/tags/${VERSION}.tar.gz\"";

        CHECK_U(ts->n, 1);
        CHECK_U(ts->steps, 4);
        CHECK_U(ts->cached, 2);
        CHECK_U(ts->errors, 1);
        CHECK_U(ts->nfailed, 1);
        CHECK(strncmp(ts->failed[0].name, head, sizeof(head) - 1) == 0);
        CHECK_U(strlen(ts->failed[0].name), TARGET_STEP_NAME_MAX);
        buildmetrics_free(bm);
        free(buf);
}

/* Sample 16 (sccache 0.8.0): "Cache hits 484" and "Cache misses 1"; the
 * per-language rows (C/C++ 36, Rust 448) are not added again. With no
 * BuildKit in the stream the numbers go to the "default" target, and since
 * no marker step printed them they are flagged as a guess. */
static void sample16(void)
{
        size_t len;
        char *buf = slurp("realworld/sccache/16_musl-docker_sccache-0.8.0_show-stats.md", &len);
        struct ccstats st = {0};
        struct buildmetrics *bm;
        const struct targets *ts;

        CHECK(ccstats_parse(buf, len, &st) == 0);
        CHECK(st.kind == CCSTATS_SCCACHE);
        CHECK_U(st.hits, 484);
        CHECK_U(st.misses, 1);
        bm = feed(buf, len, NULL);
        ts = buildmetrics_model(bm);
        CHECK_U(ts->n, 1);
        CHECK_S(ts->t[0].name, "default");
        CHECK(ts->t[0].sccache.set);
        CHECK_U(ts->t[0].sccache.hits, 484);
        CHECK_U(ts->t[0].sccache.misses, 1);
        CHECK(ts->t[0].sccache_guess);
        CHECK(!ts->t[0].ccache.set);
        buildmetrics_free(bm);
        free(buf);
}

/* Sample 17 (ccache 3.x -s): hits = direct 5139 + preprocessed 24 = 5163,
 * misses = "cache miss 2488". */
static void sample17(void)
{
        size_t len;
        char *buf = slurp("realworld/ccache/17_zawzaww_ccache-3.x_show-stats.md", &len);
        struct ccstats st = {0};
        struct buildmetrics *bm;
        const struct targets *ts;

        CHECK(ccstats_parse(buf, len, &st) == 0);
        CHECK(st.kind == CCSTATS_CCACHE);
        CHECK_U(st.hits, 5163);
        CHECK_U(st.misses, 2488);
        bm = feed(buf, len, NULL);
        ts = buildmetrics_model(bm);
        CHECK_U(ts->n, 1);
        CHECK(ts->t[0].ccache.set);
        CHECK_U(ts->t[0].ccache.hits, 5163);
        CHECK_U(ts->t[0].ccache.misses, 2488);
        CHECK(!ts->t[0].sccache.set);
        buildmetrics_free(bm);
        free(buf);
}

struct edge {
        const char *out;
        int64_t ms;
};

static void check_slow(const struct targets *ts, const struct edge *want, size_t n)
{
        CHECK_U(ts->nslow, n);
        for (size_t i = 0; i < n && i < ts->nslow; i++) {
                CHECK_S(ts->slow[i].output, want[i].out);
                CHECK_U((uint64_t)(ts->slow[i].end_ms - ts->slow[i].start_ms),
                        (uint64_t)want[i].ms);
        }
}

/* Where the last run of buf starts (a log rewritten: ninjalog_window()). */
static size_t last_run(const char *buf, size_t len)
{
        struct ninjalog_run r;

        return ninjalog_runs(buf, len, &r, 1) == 1 ? (size_t)r.begin : 0;
}

/* Sample 21 (.ninja_log v5, eleven runs appended, one header). The end
 * times drop at lines 962, 970, ..., 1155. The first run (lines 2-961)
 * holds 935 edges once the two lines (relative and absolute path) of each
 * multi-output edge are merged; its ten slowest, by end - start, sorted with
 * `awk | sort -k1,1nr -s`. The last run (lines 1155-1177) has 9 edges. */
static void sample21(void)
{
        static const struct edge first[] = {
            {"bootloader-prefix/src/bootloader-stamp/bootloader-configure", 18299},
            {"esp-idf/esp_system/ld/sections.ld", 12150},
            {"bootloader-prefix/src/bootloader-stamp/bootloader-build", 8980},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_types.cpp.obj", 8292},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_partition_manager.cpp.obj",
             7915},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_api.cpp.obj", 7624},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_page.cpp.obj", 6880},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_storage.cpp.obj", 6879},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_cxx_api.cpp.obj", 6640},
            {"esp-idf/nvs_flash/CMakeFiles/__idf_nvs_flash.dir/src/nvs_handle_simple.cpp.obj",
             6412},
        };
        static const struct edge last[] = {
            {"esp-idf/esp_system/ld/sections.ld", 11048},
            {"esp32-plant-sensor.elf", 580},
            {".bin_timestamp", 253},
            {"esp-idf/main/CMakeFiles/__idf_main.dir/hello_world_main.c.obj", 159},
            {"bootloader-prefix/src/bootloader-stamp/bootloader-build", 132},
            {"CMakeFiles/bootloader-complete", 86},
            {"esp-idf/esptool_py/CMakeFiles/app_check_size", 77},
            {"esp-idf/main/libmain.a", 43},
            {"bootloader-prefix/src/bootloader-stamp/bootloader-install", 27},
        };
        size_t len, cut = 0, line = 1;
        char *buf = slurp("realworld/ninja-make/21_esp32-plant-sensor_ninja_log_v5_large", &len);
        struct targets ts;

        /* The byte offset of line 962. */
        for (size_t i = 0; i < len && line < 962; i++)
                if (buf[i] == '\n' && ++line == 962)
                        cut = i + 1;
        CHECK(cut > 0);
        targets_init(&ts);
        CHECK(ninjalog_parse(buf, cut, &ts) == 0);
        CHECK_U(ts.ninja_edges, 935);
        check_slow(&ts, first, ARRAY_SIZE(first));

        targets_init(&ts);
        CHECK(ninjalog_parse(buf + last_run(buf, len), len - last_run(buf, len), &ts) == 0);
        CHECK_U(ts.ninja_edges, 9);
        check_slow(&ts, last, ARRAY_SIZE(last));
        free(buf);
}

/* generated/: ccache 4.7.5 on a 7-file project, cold then warm. */
static void generated_ccache(void)
{
        static const struct {
                const char *file;
                uint64_t hits, misses;
        } cases[] = {
            /* "Hits: 0 / 7", "Misses: 7 / 7" */
            {"generated/ccache-4.7.5_s_after_cold.txt", 0, 7},
            /* "Hits: 14 / 21", "Misses: 7 / 21" */
            {"generated/ccache-4.7.5_s_after_warm.txt", 14, 7},
            /* -v: the "Local storage:" Hits/Misses rows are not the summary */
            {"generated/ccache-4.7.5_s_v_after_cold.txt", 0, 7},
            /* direct_cache_hit 14 + preprocessed_cache_hit 0, cache_miss 7 */
            {"generated/ccache-4.7.5_print-stats.tsv", 14, 7},
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                size_t len;
                char *buf = slurp(cases[i].file, &len);
                struct ccstats st = {0};

                if (ccstats_parse(buf, len, &st) != 0 || st.kind != CCSTATS_CCACHE ||
                    st.hits != cases[i].hits || st.misses != cases[i].misses) {
                        fprintf(stderr,
                                "%s: %" PRIu64 "/%" PRIu64 ", expected %" PRIu64 "/%" PRIu64 "\n",
                                cases[i].file, st.hits, st.misses, cases[i].hits, cases[i].misses);
                        failures++;
                }
                free(buf);
        }
}

/* generated/: ninja 1.11.1 piped output and its .ninja_log (two runs). */
static void generated_ninja(void)
{
        /* Run 1 (lines 2-11): liblib1.a 78-357, liblib2.a 139-359, f2.c.o 1-78. */
        static const struct edge first[] = {
            {"liblib1.a", 279},
            {"liblib2.a", 220},
            {"CMakeFiles/lib1.dir/src/f2.c.o", 77},
        };
        /* Run 2 (lines 12-21, end times restart at 5): liblib2.a 13-66,
         * liblib1.a 6-55, app 66-82. */
        static const struct edge last[] = {
            {"liblib2.a", 53},
            {"liblib1.a", 49},
            {"app", 16},
        };
        size_t len, cut;
        char *buf = slurp("generated/ninja-1.11.1_.ninja_log", &len);
        const char *second = strstr(buf, "\n1\t5\t");
        struct targets ts;

        CHECK(second != NULL);
        cut = second ? (size_t)(second - buf) + 1 : len;
        targets_init(&ts);
        CHECK(ninjalog_parse(buf, cut, &ts) == 0);
        CHECK_U(ts.ninja_edges, 10);
        CHECK_U(ts.nslow, 10);
        ts.nslow = MIN(ts.nslow, ARRAY_SIZE(first));
        check_slow(&ts, first, ARRAY_SIZE(first));
        targets_init(&ts);
        CHECK(ninjalog_parse(buf + last_run(buf, len), len - last_run(buf, len), &ts) == 0);
        CHECK_U(ts.ninja_edges, 10);
        ts.nslow = MIN(ts.nslow, ARRAY_SIZE(last));
        check_slow(&ts, last, ARRAY_SIZE(last));
        free(buf);

        static const struct {
                const char *file;
                uint64_t done, total;
                int pct;
        } logs[] = {
            {"generated/ninja-1.11.1_cold_piped.txt", 10, 10, -1},
            {"generated/ninja-1.11.1_warm_piped.txt", 10, 10, -1},
            /* "[1/3] Building C object ...f6.c.o", then FAILED */
            {"generated/ninja-1.11.1_failure_piped.txt", 1, 3, -1},
            /* the last "[100%] Built target app" */
            {"generated/make-cmake-3.25_j4_piped.txt", 0, 0, 100},
        };
        for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
                struct buildmetrics *bm;
                const struct targets *m;

                buf = slurp(logs[i].file, &len);
                bm = feed(buf, len, NULL);
                m = buildmetrics_model(bm);
                if (m->ninja_done != logs[i].done || m->ninja_total != logs[i].total ||
                    m->make_pct != logs[i].pct) {
                        fprintf(stderr, "%s: ninja %" PRIu64 "/%" PRIu64 " make %d\n", logs[i].file,
                                m->ninja_done, m->ninja_total, m->make_pct);
                        failures++;
                }
                CHECK_U(m->n, 0);
                buildmetrics_free(bm);
                free(buf);
        }
}

int main(void)
{
        struct stat st;

        if (stat(SHARED_FIXTURES, &st) < 0) {
                printf("skip: no shared fixtures at %s\n", SHARED_FIXTURES);
                return 77;
        }
        sample01();
        sample05();
        sample06();
        sample16();
        sample17();
        sample21();
        generated_ccache();
        generated_ninja();
        if (failures) {
                fprintf(stderr, "%d check(s) failed\n", failures);
                return 1;
        }
        printf("all checks passed\n");
        return 0;
}
