/* SPDX-License-Identifier: MIT */
#include "cmd/cmd-history.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/ranges.h"
#include "store/history.h"
#include "util/util.h"

enum {
        HOPT_DB = 0x200,
        HOPT_JSON,
        HOPT_LIMIT,
        HOPT_SINCE,
        HOPT_HELP,
};

int history_opts_parse(const char *cmd, const char *allowed, int argc, char **argv,
                       struct history_opts *o, int *ret_optind)
{
        static const struct option longopts[] = {
            {"db", required_argument, NULL, HOPT_DB},
            {"json", no_argument, NULL, HOPT_JSON},
            {"limit", required_argument, NULL, HOPT_LIMIT},
            {"since", required_argument, NULL, HOPT_SINCE},
            {"help", no_argument, NULL, HOPT_HELP},
            {0},
        };
        int c;

        memset(o, 0, sizeof(*o));
        o->since = NAN;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                uint64_t n;

                if ((c == HOPT_JSON && !strchr(allowed, 'j')) ||
                    (c == HOPT_LIMIT && !strchr(allowed, 'l')) ||
                    (c == HOPT_SINCE && !strchr(allowed, 's')))
                        c = '?';
                switch (c) {
                case HOPT_DB:
                        if (!*optarg) {
                                fprintf(stderr, "buildtel %s: --db is empty\n", cmd);
                                return EXIT_BT_USAGE;
                        }
                        o->db = optarg;
                        break;
                case HOPT_JSON:
                        o->json = true;
                        break;
                case HOPT_LIMIT:
                        if (parse_u64_str(optarg, &n) < 0 || n == 0 || n > 1000000) {
                                fprintf(stderr,
                                        "buildtel %s: --limit takes a number from 1 to 1000000, "
                                        "not '%s'\n",
                                        cmd, optarg);
                                return EXIT_BT_USAGE;
                        }
                        o->limit = (int64_t)n;
                        break;
                case HOPT_SINCE:
                        if (history_parse_when(optarg, now_realtime(), &o->since) < 0) {
                                fprintf(stderr,
                                        "buildtel %s: --since takes a date (2026-11-29, "
                                        "2026-11-29T15:40[:20][Z]) or a span (30m, 2h, 3d, 1w), "
                                        "not '%s'\n",
                                        cmd, optarg);
                                return EXIT_BT_USAGE;
                        }
                        break;
                case HOPT_HELP:
                case 'h':
                        o->help = true;
                        break;
                default:
                        fprintf(stderr, "buildtel %s: bad option; see 'buildtel help %s'\n", cmd,
                                cmd);
                        return EXIT_BT_USAGE;
                }
        }
        *ret_optind = optind;
        return 0;
}

int history_open(const char *cmd, const struct history_opts *o, bool create, struct store **ret)
{
        _cleanup_free_ char *def = NULL;
        const char *path = o->db;
        int e;

        if (!path) {
                def = store_default_path();
                if (!def) {
                        fprintf(stderr,
                                "buildtel %s: no history database: set HOME or XDG_STATE_HOME, or "
                                "use --db\n",
                                cmd);
                        return 1;
                }
                path = def;
        }
        e = store_open(path, create, 2000, ret);
        if (e == -ENOENT && !create) {
                fprintf(stderr,
                        "buildtel %s: history database '%s' does not exist (no run recorded yet)\n",
                        cmd, path);
                return 1;
        }
        if (e < 0) {
                fprintf(stderr, "buildtel %s: history database '%s': %s\n", cmd, path,
                        store_strerror(e));
                return 1;
        }
        return 0;
}

int history_print_json(const json_t *v)
{
        char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
        int r;

        if (!s)
                return 1;
        r = write_all(STDOUT_FILENO, s, strlen(s));
        if (r >= 0)
                r = write_all(STDOUT_FILENO, "\n", 1);
        free(s);
        return r < 0 ? 1 : 0;
}

void history_fmt_duration(double s, char *buf, size_t len)
{
        /* (int) of hours is defined only in range */
        if (!range_ok(RANGE_DURATION, s))
                snprintf(buf, len, "-");
        else if (s < 60)
                snprintf(buf, len, "%.1fs", s);
        else if (s < 3600)
                snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
        else
                snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void history_fmt_time(double epoch, bool with_seconds, char *buf, size_t len)
{
        /* (time_t) is defined only in range */
        time_t t = range_ok(RANGE_EPOCH, epoch) ? (time_t)epoch : 0;
        struct tm tm;

        if (!range_ok(RANGE_EPOCH, epoch) || !localtime_r(&t, &tm) ||
            strftime(buf, len, with_seconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M", &tm) == 0)
                snprintf(buf, len, "-");
}

void history_fmt_mib(double mib, char *buf, size_t len)
{
        if (!isfinite(mib))
                snprintf(buf, len, "-");
        else if (mib >= 1024)
                snprintf(buf, len, "%.1f GiB", mib / 1024);
        else
                snprintf(buf, len, "%.0f MiB", mib);
}

void history_fmt_bytes(double b, char *buf, size_t len)
{
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        size_t u = 0;

        if (!isfinite(b) || b < 0) {
                snprintf(buf, len, "-");
                return;
        }
        while (b >= 1024 && u + 1 < ARRAY_SIZE(units)) {
                b /= 1024;
                u++;
        }
        snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

double history_num(const json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *history_str(const json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));

        return s ? s : "";
}

int history_put_clean(struct dbuf *out, const char *s, size_t max)
{
        size_t n = strlen(s);
        int r;

        if (n <= max)
                return run_append_utf8_lossy(out, s, n, true);
        /* cut on a character start */
        while (max > 3 && ((unsigned char)s[max - 3] & 0xc0) == 0x80)
                max--;
        r = run_append_utf8_lossy(out, s, max - 3, true);
        return r < 0 ? r : dbuf_puts(out, "...");
}
