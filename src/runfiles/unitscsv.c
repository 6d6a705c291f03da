/* SPDX-License-Identifier: MIT */
/* resources-<id>.units.csv: the units table, written and read back. */
#include "runfiles/unitscsv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/csv.h"
#include "util/macro.h"

static const char csv_header[] =
    "kind,tool,name,first_elapsed_s,last_elapsed_s,peak_mb,peak_elapsed_s,cpu_s,path,source,cache,"
    "wait_cpu_s,wait_io_s,wait_mem_s\r\n";
#define CSV_HEADER_OLD_LEN                                                                         \
        (sizeof(csv_header) - 1 - strlen(",path,source,cache,wait_cpu_s,wait_io_s,wait_mem_s\r\n"))

/* The figures between name and path, in the order of the header. */
static const size_t num_fields[] = {
    offsetof(struct unit, first_s), offsetof(struct unit, last_s), offsetof(struct unit, peak_mb),
    offsetof(struct unit, peak_s),  offsetof(struct unit, cpu_s),
};

static void put_num(struct dwriter *w, double v)
{
        if (isfinite(v))
                dw_printf(w, ",%.17g", v);
        else
                dw_puts(w, ",");
}

int unitscsv_format(const struct units *u, struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        size_t n;
        const struct unit *rows = units_rows(u, &n);

        dw_puts(&w, csv_header);
        for (size_t i = 0; dw_ok(&w) && i < n; i++) {
                const struct unit *row = &rows[i];

                dw_puts(&w, row->kind == UNITS_LINK ? "link," : "compile,");
                dw_check(&w, csv_append_field(out, row->tool, strlen(row->tool)));
                dw_puts(&w, ",");
                dw_check(&w, csv_append_field(out, row->name, strlen(row->name)));
                for (size_t k = 0; k < ARRAY_SIZE(num_fields); k++)
                        put_num(&w, *(const double *)(const void *)((const char *)row +
                                                                    num_fields[k]));
                dw_puts(&w, ",");
                dw_check(&w, csv_append_field(out, row->path, strlen(row->path)));
                dw_printf(&w, ",%s,%s", row->exact ? "taskstats" : "sampled",
                          units_cache_name(row->cache));
                for (size_t k = 0; k < 3; k++)
                        put_num(&w, row->wait_s[k]);
                dw_puts(&w, "\r\n");
        }
        return w.err;
}

/* "" reads as NAN; anything else must be a whole finite number. */
static bool field_num(const struct csv_record *rec, size_t i, double *ret)
{
        const char *s = csv_field(rec, i);
        char *end;

        if (rec->len[i] == 0) {
                *ret = NAN;
                return true;
        }
        errno = 0;
        *ret = strtod(s, &end);
        return errno == 0 && end == s + rec->len[i] && isfinite(*ret);
}

static int parse_row(const struct csv_record *rec, struct unit *row)
{
        const char *kind = csv_field(rec, 0);

        if (rec->nfields < 8 || rec->nfields > 14 || rec->len[1] > UNITS_TOOL_MAX ||
            rec->len[2] > UNITS_NAME_MAX || memchr(csv_field(rec, 1), '\0', rec->len[1]) ||
            memchr(csv_field(rec, 2), '\0', rec->len[2]))
                return -EINVAL;
        if (rec->nfields >= 9 &&
            (rec->len[8] > UNITS_PATH_MAX || memchr(csv_field(rec, 8), '\0', rec->len[8]) ||
             (rec->len[8] && csv_field(rec, 8)[0] != '/')))
                return -EINVAL;
        memset(row, 0, sizeof(*row));
        row->kind = strcmp(kind, "link") == 0      ? UNITS_LINK
                    : strcmp(kind, "compile") == 0 ? UNITS_COMPILE
                                                   : 0;
        memcpy(row->tool, csv_field(rec, 1), rec->len[1]);
        memcpy(row->name, csv_field(rec, 2), rec->len[2]);
        if (rec->nfields >= 9)
                memcpy(row->path, csv_field(rec, 8), rec->len[8]);
        /* "taskstats": the kernel's figures; anything else (older: none) sampled */
        row->exact = rec->nfields >= 10 && rec->len[9] == 9 && memcmp(csv_field(rec, 9), "taskstats", 9) == 0;
        row->cache = rec->nfields >= 11 ? units_cache_of(csv_field(rec, 10)) : 0;
        for (size_t i = 0; i < 3; i++) {
                row->wait_s[i] = NAN;
                if (rec->nfields == 14 && !field_num(rec, 11 + i, &row->wait_s[i]))
                        return -EINVAL;
        }
        for (size_t i = 0; i < ARRAY_SIZE(num_fields); i++)
                if (!field_num(rec, 3 + i, (double *)(void *)((char *)row + num_fields[i])))
                        return -EINVAL;
        return row->kind ? 0 : -EINVAL;
}

int unitscsv_parse(const char *buf, size_t len, struct units *u, size_t *ret_skipped)
{
        struct csv_record rec = CSV_RECORD_INIT;
        size_t off, used, skipped = 0;
        int n = 0, r;

        /* ours, with or without the path column */
        if (len < CSV_HEADER_OLD_LEN || memcmp(buf, csv_header, CSV_HEADER_OLD_LEN) != 0 ||
            (len > CSV_HEADER_OLD_LEN && buf[CSV_HEADER_OLD_LEN] != ',' &&
             buf[CSV_HEADER_OLD_LEN] != '\r' && buf[CSV_HEADER_OLD_LEN] != '\n'))
                return -EINVAL;
        r = csv_parse_record(buf, len, &rec, &used);
        off = r > 0 ? used : len;
        while (off < len) {
                struct unit row;

                r = csv_parse_record(buf + off, len - off, &rec, &used);
                if (r == 0 || r == -ENOMEM)
                        break;
                off += used;
                if (r < 0 || parse_row(&rec, &row) < 0 || units_put(u, &row) < 0)
                        skipped++;
                else
                        n++;
        }
        csv_record_release(&rec);
        *ret_skipped = skipped;
        return r == -ENOMEM ? r : n;
}
