/* SPDX-License-Identifier: MIT */
#include "platform/cgroup-top.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/compilers.h"
#include "platform/cgroup-int.h"
#include "util/macro.h"
#include "util/util.h"

#define PROCSCAN_CMDLINE_MAX 32768 /* compile lines run to kilobytes */

/* Arguments after comm in the label of a process that is no unit. */
#define ARGS_KEEP 60

static const char *const source_exts[] = {
    ".c",     ".cc", ".cpp",  ".cxx", ".c++", ".C",   ".cp",   ".cu",  ".hip", ".rs",
    ".S",     ".s",  ".sx",   ".m",   ".mm",  ".ii",  ".i",    ".f",   ".f90", ".F90",
    ".swift", ".go", ".java", ".ts",  ".hs",  ".ixx", ".cppm", ".zig",
};

void proctop_reset(struct proctop *t)
{
        memset(t, 0, sizeof(*t));
}

void proctop_consider(struct proctop *t, const struct pidstat *ps)
{
        size_t at;

        if (ps->state == 'Z' || ps->state == 'X' || ps->state == 'x')
                return;
        /* Ties keep the one seen first. */
        for (at = 0; at < t->n; at++)
                if (ps->rss_pages > t->e[at].rss_pages)
                        break;
        if (at >= PROCTOP_N)
                return;
        memmove(&t->e[at + 1], &t->e[at],
                (MIN(t->n, (size_t)PROCTOP_N - 1) - at) * sizeof(t->e[0]));
        t->e[at].pid = ps->pid;
        t->e[at].rss_pages = ps->rss_pages;
        snprintf(t->e[at].comm, sizeof(t->e[at].comm), "%s", ps->comm);
        t->e[at].label[0] = '\0';
        if (t->n < PROCTOP_N)
                t->n++;
}

/* Options whose value is the next argument (never the source): the
 * one-letter ones of ONE_LETTER_ARGS (-o, -I, ...), and the words of
 * arg_options. */
#define ONE_LETTER_ARGS "oIDUxLlTCmze"
static const char arg_options[] =
    "-include -imacros -isystem -iquote -idirafter -MF -MT -MQ -dumpbase -dumpdir -auxbase "
    "-auxbase-strip -main-file-name -isysroot -Xclang -target -arch -triple -dumpbase-ext "
    "-resource-dir -fdebug-compilation-dir --crate-name --crate-type --edition --out-dir "
    "--cfg --cap-lints --target --emit -plugin -plugin-opt -soname -rpath --sysroot -Map";

/* "gcc-12", "x86_64-linux-gnu-gcc-12" -> does it name one of set? */
static bool tool_in(const char *s, size_t n, unsigned kinds)
{
        const char *dash;

        for (int pass = 0; pass < 3; pass++) {
                if (compilers_has(s, n, kinds))
                        return true;
                dash = n ? memrchr(s, '-', n) : NULL;
                if (!dash)
                        return false;
                if (pass == 0 && dash + 1 < s + n && dash[1] >= '0' && dash[1] <= '9') {
                        n = (size_t)(dash - s); /* version suffix */
                        continue;
                }
                /* cross prefix: the part after the last dash */
                n = (size_t)(s + n - dash - 1);
                s = dash + 1;
        }
        return false;
}

static bool is_lto(const char *comm)
{
        return strncmp(comm, "lto1", 4) == 0;
}

bool procunit_maybe(const char *comm)
{
        size_t n = strnlen(comm, 64);

        return tool_in(comm, n, TOOL_COMPILER) || tool_in(comm, n, TOOL_LINKER) ||
               tool_in(comm, n, TOOL_DRIVER) || is_lto(comm);
}

static bool has_source_ext(const char *a, size_t n)
{
        for (size_t i = 0; i < ARRAY_SIZE(source_exts); i++) {
                size_t e = strlen(source_exts[i]);

                if (n > e && memcmp(a + n - e, source_exts[i], e) == 0)
                        return true;
        }
        return false;
}

struct out {
        char *p;
        size_t cap, len; /* cap includes the NUL */
        bool full;
};

/* Append bytes, control bytes as '?', cut on a UTF-8 boundary (copy_utf8)
 * once full. */
static void put(struct out *o, const char *s, size_t n)
{
        size_t k;

        if (o->full)
                return;
        k = copy_utf8(o->p + o->len, o->cap - o->len, s, n);
        for (size_t i = o->len; i < o->len + k; i++)
                if ((unsigned char)o->p[i] < 0x20 || o->p[i] == 0x7f)
                        o->p[i] = '?';
        o->len += k;
        o->full = k < n;
}

/* a[0..n) in at most budget bytes: whole, or "..." and its tail from a
 * byte that starts a character (a path is most telling at its end). */
static void put_tail(struct out *o, const char *a, size_t n, size_t budget)
{
        const char *t;

        if (n <= budget) {
                put(o, a, n);
                return;
        }
        if (budget <= 3)
                return;
        t = a + n - (budget - 3);
        while (t < a + n && ((unsigned char)*t & 0xC0) == 0x80)
                t++;
        put(o, "...", 3);
        put(o, t, (size_t)(a + n - t));
}

/* The next NUL-separated argument of [*cur, end). */
static bool next_arg(const char **cur, const char *end, const char **ret_a, size_t *ret_n)
{
        const char *nul;

        if (*cur >= end)
                return false;
        nul = memchr(*cur, '\0', (size_t)(end - *cur));
        *ret_a = *cur;
        *ret_n = (size_t)((nul ? nul : end) - *cur);
        *cur = nul ? nul + 1 : end;
        return true;
}

/* A piece of the cmdline (not NUL-terminated); p NULL: none. */
struct span {
        const char *p;
        size_t n;
};

/* What the arguments after argv[0] say. */
struct argscan {
        struct span source, output, dumpbase, crate, std;
        size_t nsources;
        bool compile_only; /* -c, -S, -E or -cc1 */
};

/* An option whose value is the next argument. */
static bool takes_value(const char *a, size_t n)
{
        const char *p = arg_options, *end = p + sizeof(arg_options) - 1, *w;
        size_t wn;

        if (n == 2 && strchr(ONE_LETTER_ARGS, a[1]))
                return true;
        while (next_word(&p, end, &w, &wn))
                if (wn == n && memcmp(w, a, n) == 0)
                        return true;
        return false;
}

static void scan_args(const char *cur, const char *end, struct argscan *r)
{
        const char *a, *prev = NULL;
        size_t n, prev_n = 0;

        memset(r, 0, sizeof(*r));
        while (next_arg(&cur, end, &a, &n)) {
                if (prev) {
                        if (word_is(prev, prev_n, "-o"))
                                r->output = (struct span){a, n};
                        else if (word_is(prev, prev_n, "-dumpbase"))
                                r->dumpbase = (struct span){a, n};
                        else if (word_is(prev, prev_n, "--crate-name"))
                                r->crate = (struct span){a, n};
                        prev = NULL;
                        continue;
                }
                if (n > 0 && a[0] == '-') {
                        if (takes_value(a, n))
                                prev = a, prev_n = n;
                        if (n > 2 && a[1] == 'o' && !r->output.p)
                                r->output = (struct span){a + 2, n - 2}; /* -ofoo */
                        if (n > 5 && memcmp(a, "-std=", 5) == 0)
                                r->std = (struct span){a + 5, n - 5};
                        if (word_is(a, n, "-c") || word_is(a, n, "-S") || word_is(a, n, "-E") ||
                            word_is(a, n, "-cc1"))
                                r->compile_only = true;
                        continue;
                }
                if (n > 0 && has_source_ext(a, n) && r->nsources++ == 0)
                        r->source = (struct span){a, n};
        }
}

static struct span base_of(struct span s)
{
        const char *slash = s.n ? memrchr(s.p, '/', s.n) : NULL;

        return slash ? (struct span){slash + 1, (size_t)(s.p + s.n - slash - 1)} : s;
}

/* "./redis-server.ltrans1.ltrans" -> "redis-server", "./app.so.wpa" -> "app.so" */
static struct span lto_output(struct span s)
{
        struct span b = base_of(s);
        const char *m = memmem(b.p, b.n, ".ltrans", 7);

        if (!m && b.n > 4 && memcmp(b.p + b.n - 4, ".wpa", 4) == 0)
                m = b.p + b.n - 4;
        if (m && m > b.p)
                b.n = (size_t)(m - b.p);
        return b;
}

/* The unit's kind and raw name (into cmdline, or a literal). */
static enum procunit_kind classify_args(const char *comm, const char *cmdline, size_t len,
                                        struct span *ret, struct argscan *ret_as)
{
        const char *cur = cmdline, *end = cmdline + len, *a;
        size_t n, tn = strnlen(comm, 64);
        struct argscan as;

        (void)next_arg(&cur, end, &a, &n); /* argv[0] */
        scan_args(cur, end, &as);
        *ret_as = as;
        if (is_lto(comm)) {
                if (!as.dumpbase.p && !as.output.p)
                        return PROCUNIT_NONE;
                *ret = lto_output(as.dumpbase.p ? as.dumpbase : as.output);
                return PROCUNIT_LINK;
        }
        if (tool_in(comm, tn, TOOL_LINKER)) {
                *ret = as.output.p ? base_of(as.output) : (struct span){"a.out", 5};
                return PROCUNIT_LINK;
        }
        if (as.crate.p) { /* rustc: the crate names the unit */
                *ret = as.crate;
                return PROCUNIT_COMPILE;
        }
        /* A driver given several sources (redis's `cc -MM *.c`) is none of
         * them: the compiler it runs for each stands for that one. */
        if (as.nsources > 1 && tool_in(comm, tn, TOOL_DRIVER))
                return PROCUNIT_NONE;
        if (as.source.p && !word_is(comm, tn, "as")) {
                *ret = as.source;
                return PROCUNIT_COMPILE;
        }
        if (tool_in(comm, tn, TOOL_DRIVER) && !as.compile_only && as.output.p) {
                *ret = base_of(as.output);
                return PROCUNIT_LINK;
        }
        return PROCUNIT_NONE;
}

/* A compile's key, -std= and output directory. */
static void compile_identity(const struct argscan *as, struct procunit *ret)
{
        struct out o = {ret->std, sizeof(ret->std), 0, false};
        const char *slash;

        if (as->std.p)
                put(&o, as->std.p, as->std.n);
        if (!as->output.p || as->output.n == 0)
                return;
        ret->key = fnv1a(FNV1A_OFFSET, as->output.p, as->output.n);
        ret->key += !ret->key; /* 0 is "no output" */
        slash = memrchr(as->output.p, '/', as->output.n);
        if (slash && slash > as->output.p) {
                o = (struct out){ret->dir, sizeof(ret->dir), 0, false};
                put_tail(&o, as->output.p, (size_t)(slash - as->output.p), PROCUNIT_NAME_MAX);
        }
}

void procunit_classify(const char *comm, const char *cmdline, size_t len, struct procunit *ret)
{
        struct out o = {ret->tool, sizeof(ret->tool), 0, false};
        struct span a = {NULL, 0};
        struct argscan as;

        memset(ret, 0, sizeof(*ret));
        comm = comm ? comm : "";
        put(&o, comm, strnlen(comm, 64));
        if (!cmdline || len == 0 || !procunit_maybe(comm))
                return;
        ret->kind = classify_args(comm, cmdline, len, &a, &as);
        if (ret->kind == PROCUNIT_NONE)
                return;
        o = (struct out){ret->name, sizeof(ret->name), 0, false};
        put_tail(&o, a.p, a.n, PROCUNIT_NAME_MAX);
        if (o.len == 0) {
                ret->kind = PROCUNIT_NONE;
                return;
        }
        if (ret->kind != PROCUNIT_COMPILE)
                return;
        compile_identity(&as, ret);
        if (a.p == as.source.p && a.n <= PROCUNIT_PATH_MAX) {
                o = (struct out){ret->src, sizeof(ret->src), 0, false};
                put(&o, a.p, a.n);
        }
}

int proctop_label(const char *comm, const char *cmdline, size_t len, char *out, size_t cap)
{
        const char *cur = cmdline, *end = cmdline + (cmdline ? len : 0), *a;
        struct argscan as;
        struct span unit;
        struct out o;
        size_t n, args_end;

        if (cap == 0 || !out)
                return -EINVAL;
        o = (struct out){out, MIN(cap, (size_t)PROCTOP_LABEL_MAX + 1), 0, false};
        put(&o, comm ? comm : "", comm ? strnlen(comm, 64) : 0);
        if (!cmdline || len == 0)
                return (int)o.len;
        if (comm && procunit_maybe(comm) &&
            classify_args(comm, cmdline, len, &unit, &as) != PROCUNIT_NONE) {
                put(&o, " ", 1);
                if (!o.full && o.len + 1 < o.cap)
                        put_tail(&o, unit.p, unit.n, o.cap - 1 - o.len);
                return (int)o.len;
        }
        (void)next_arg(&cur, end, &a, &n); /* argv[0]: comm says it shorter */
        args_end = o.len + ARGS_KEEP;
        while (!o.full && o.len < args_end && next_arg(&cur, end, &a, &n)) {
                if (n == 0)
                        continue;
                put(&o, " ", 1);
                put(&o, a, MIN(n, args_end > o.len ? args_end - o.len : 0));
        }
        return (int)o.len;
}

void proctop_label_all(struct proctop *t, struct procfs *p)
{
        char buf[PROCSCAN_CMDLINE_MAX];

        for (size_t i = 0; i < t->n; i++) {
                ssize_t n = procfs_cmdline(p, t->e[i].pid, buf, sizeof(buf));

                (void)proctop_label(t->e[i].comm, buf, n > 0 ? (size_t)n : 0, t->e[i].label,
                                    sizeof(t->e[i].label));
        }
}

/* ---- the scan: units in flight, with a cmdline read once per process ---- */

struct pentry {
        long pid, ppid; /* pid first: procfs_cmp_pid */
        uint64_t start; /* with pid, the process's identity */
        uint64_t rss_pages, cpu_ticks;
        char comm[16]; /* an exec changes it: then the cmdline is read again */
        bool classified;
        struct procunit u;
};

struct procscan {
        struct pentry *prev, *cur; /* in pentries, swapped; prev sorted by pid */
        struct pentry pentries[2][PROCSCAN_PIDS_MAX];
        size_t nprev, ncur;
        struct procscan_unit units[PROCSCAN_UNITS_MAX];
        size_t nunits;
        struct procscan_unit ended[PROCSCAN_UNITS_MAX];
        size_t nended;
        double ticks_per_s;
        char cmdline[PROCSCAN_CMDLINE_MAX];
};

int procscan_new(struct procscan **ret)
{
        struct procscan *s = calloc(1, sizeof(*s));
        long hz = sysconf(_SC_CLK_TCK);

        if (!s)
                return -ENOMEM;
        s->prev = s->pentries[0];
        s->cur = s->pentries[1];
        s->ticks_per_s = hz > 0 ? (double)hz : 100.0;
        *ret = s;
        return 0;
}

void procscan_free(struct procscan *s)
{
        free(s);
}

void procscan_begin(struct procscan *s)
{
        s->ncur = 0;
}

static const struct pentry *find_in(const struct pentry *v, size_t n, long pid)
{
        return bsearch(&pid, v, n, sizeof(*v), procfs_cmp_pid);
}

void procscan_consider(struct procscan *s, const struct pidstat *ps)
{
        const struct pentry *old;
        struct pentry *e;

        if (ps->state == 'Z' || ps->state == 'X' || ps->state == 'x' ||
            s->ncur >= PROCSCAN_PIDS_MAX)
                return;
        e = &s->cur[s->ncur++];
        e->pid = ps->pid;
        e->ppid = ps->ppid;
        e->start = ps->starttime;
        e->rss_pages = ps->rss_pages;
        e->cpu_ticks = ps->utime + ps->stime;
        memcpy(e->comm, ps->comm, sizeof(e->comm) - 1);
        e->comm[sizeof(e->comm) - 1] = '\0';
        old = find_in(s->prev, s->nprev, ps->pid);
        if (old && old->start == e->start && old->classified && strcmp(old->comm, e->comm) == 0) {
                e->u = old->u;
                e->classified = true;
                return;
        }
        e->classified = !procunit_maybe(e->comm);
        e->u.kind = PROCUNIT_NONE;
}

static int cmp_unit_rss(const void *a, const void *b)
{
        const struct procscan_unit *x = a, *y = b;

        return (x->rss_pages < y->rss_pages) - (x->rss_pages > y->rss_pages);
}

/* One unit: one name and output, and one source from one cwd (../x.c from
 * a/build and from b/build are two files; the model tells which are one). */
static bool same_unit(const struct procunit *a, const struct procunit *b)
{
        return a->kind == b->kind && a->key == b->key && strcmp(a->name, b->name) == 0 &&
               strcmp(a->src, b->src) == 0 && strcmp(a->cwd, b->cwd) == 0;
}

/* u's entry in v[0..*n), added when new; NULL when there is no room. */
static struct procscan_unit *unit_of(struct procscan_unit *v, size_t *n, const struct procunit *u)
{
        for (size_t i = 0; i < *n; i++)
                if (same_unit(&v[i].u, u))
                        return &v[i];
        if (*n >= PROCSCAN_UNITS_MAX)
                return NULL;
        v[*n] = (struct procscan_unit){.u = *u};
        return &v[(*n)++];
}

/* Sum e into the scan's units; the tool is the one of the largest process. */
static void add_unit(struct procscan *s, const struct pentry *e, uint64_t *top_rss)
{
        struct procscan_unit *u = unit_of(s->units, &s->nunits, &e->u);

        if (!u)
                return;
        u->rss_pages += e->rss_pages;
        u->cpu_s += (double)e->cpu_ticks / s->ticks_per_s;
        u->nprocs++;
        if (e->rss_pages > top_rss[u - s->units]) {
                top_rss[u - s->units] = e->rss_pages;
                memcpy(u->u.tool, e->u.tool, sizeof(u->u.tool));
        }
}

/* The previous scan's unit processes missing from this one (both sorted
 * by pid), their CPU summed per unit. */
static void collect_ended(struct procscan *s)
{
        s->nended = 0;
        if (s->ncur >= PROCSCAN_PIDS_MAX) /* some were not kept: not ended */
                return;
        for (size_t i = 0; i < s->nprev; i++) {
                const struct pentry *e = &s->prev[i], *now;
                struct procscan_unit *u;

                if (!e->classified || e->u.kind == PROCUNIT_NONE)
                        continue;
                now = find_in(s->cur, s->ncur, e->pid);
                if ((now && now->start == e->start) || !(u = unit_of(s->ended, &s->nended, &e->u)))
                        continue;
                u->cpu_s += (double)e->cpu_ticks / s->ticks_per_s;
                u->nprocs++;
        }
}

/* A compiler run by a driver of the same source (cc1plus under c++, clang
 * -cc1 under clang++) is that driver's compile: it takes the driver's key,
 * -std= and directory. cur is sorted by pid and classified. */
static void join_drivers(struct procscan *s)
{
        for (size_t i = 0; i < s->ncur; i++) {
                struct pentry *e = &s->cur[i];
                const struct pentry *up = e, *p;

                if (!e->classified || e->u.kind != PROCUNIT_COMPILE)
                        continue;
                for (int depth = 0; depth < 4; depth++) {
                        p = find_in(s->cur, s->ncur, up->ppid);
                        if (!p || p == up || !p->classified || p->u.kind != PROCUNIT_COMPILE ||
                            strcmp(p->u.name, e->u.name) != 0)
                                break;
                        up = p;
                }
                if (up == e)
                        continue;
                e->u.key = up->u.key;
                memcpy(e->u.std, up->u.std, sizeof(e->u.std));
                memcpy(e->u.dir, up->u.dir, sizeof(e->u.dir));
        }
}

void procscan_end(struct procscan *s, struct procfs *p)
{
        uint64_t top_rss[PROCSCAN_UNITS_MAX] = {0};
        struct pentry *t;

        s->nunits = 0;
        for (size_t i = 0; i < s->ncur; i++) {
                struct pentry *e = &s->cur[i];
                ssize_t n;

                if (e->classified)
                        continue;
                n = procfs_cmdline(p, e->pid, s->cmdline, PROCSCAN_CMDLINE_MAX);
                if (n <= 0)
                        continue; /* gone meanwhile: tried again next time */
                procunit_classify(e->comm, s->cmdline, (size_t)n, &e->u);
                e->classified = true;
                /* A relative source's base, read once; "" when unreadable
                 * (its name is then read as given). */
                if (e->u.kind == PROCUNIT_COMPILE && e->u.src[0] && e->u.src[0] != '/' &&
                    procfs_cwd(p, e->pid, e->u.cwd, sizeof(e->u.cwd)) < 0)
                        e->u.cwd[0] = '\0';
        }
        qsort(s->cur, s->ncur, sizeof(s->cur[0]), procfs_cmp_pid);
        join_drivers(s);
        for (size_t i = 0; i < s->ncur; i++)
                if (s->cur[i].classified && s->cur[i].u.kind != PROCUNIT_NONE)
                        add_unit(s, &s->cur[i], top_rss);
        qsort(s->units, s->nunits, sizeof(s->units[0]), cmp_unit_rss);
        collect_ended(s);
        t = s->prev;
        s->prev = s->cur;
        s->cur = t;
        s->nprev = s->ncur;
        s->ncur = 0;
}

const struct procscan_unit *procscan_units(const struct procscan *s, size_t *ret_n)
{
        *ret_n = s->nunits;
        return s->units;
}

const struct procscan_unit *procscan_ended(const struct procscan *s, size_t *ret_n)
{
        *ret_n = s->nended;
        return s->ended;
}

/* A unit's word in the running column; its length, or -1 when it does not fit. */
static int running_word(const struct procscan_unit *u, char *word, size_t cap)
{
        const char *name = u->u.name, *slash = strrchr(name, '/');
        int w;

        if (u->u.kind == PROCUNIT_COMPILE)
                w = snprintf(word, cap, "%s", slash ? slash + 1 : name);
        else
                w = snprintf(word, cap, "%s:%s", u->u.tool, name);
        return w <= 0 || (size_t)w >= cap ? -1 : w;
}

int procscan_running_text(const struct procscan_unit *u, size_t n, char *out, size_t cap)
{
        char word[PROCUNIT_TOOL_MAX + PROCUNIT_NAME_MAX + 16], other[sizeof(word)];
        size_t len = 0;

        if (cap == 0 || !out)
                return -EINVAL;
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                int w = running_word(&u[i], word, sizeof(word)), times = 1;
                bool seen = false;

                if (w < 0)
                        continue;
                for (size_t k = 0; k < n && !seen; k++) {
                        if (k == i || running_word(&u[k], other, sizeof(other)) != w ||
                            memcmp(word, other, (size_t)w) != 0)
                                continue;
                        seen = k < i; /* said at the first one */
                        times++;
                }
                if (seen)
                        continue;
                if (times > 1) {
                        int x = snprintf(word + w, sizeof(word) - (size_t)w, " x%d", times);

                        if (x <= 0 || (size_t)x >= sizeof(word) - (size_t)w)
                                continue;
                        w += x;
                }
                if (len + (len > 0) + (size_t)w + 1 > cap)
                        break;
                if (len > 0)
                        out[len++] = ' ';
                memcpy(out + len, word, (size_t)w + 1);
                len += (size_t)w;
        }
        return (int)len;
}
