/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "util/csv.h"
#include "util/macro.h"

#include "helpers/test.h"

#define S(lit) lit, sizeof(lit) - 1

struct parse_case {
        const char *in;
        size_t len;
        int ret;
        size_t consumed;
        size_t nfields;
        const char *fields[4];
        size_t flen[4];
};

static const struct parse_case parse_cases[] = {
    {S("a,b,c\r\n"), 3, 7, 3, {"a", "b", "c"}, {1, 1, 1}},
    {S("a,b,c\n"), 3, 6, 3, {"a", "b", "c"}, {1, 1, 1}},
    {S("a,b\nc,d\n"), 2, 4, 2, {"a", "b"}, {1, 1}},
    {S(""), 0, 0, 0, {NULL}, {0}},
    /* torn: no line end yet */
    {S("a,b"), 0, 0, 0, {NULL}, {0}},
    {S("a,b\r"), 0, 0, 0, {NULL}, {0}},
    {S("\"abc"), 0, 0, 0, {NULL}, {0}},
    {S("\"abc\""), 0, 0, 0, {NULL}, {0}},
    {S("\"abc\"\""), 0, 0, 0, {NULL}, {0}},
    {S("x,\"multi\r\nline"), 0, 0, 0, {NULL}, {0}},
    /* quoting */
    {S("\"x,y\",\"q\"\"q\"\r\n"), 2, 14, 2, {"x,y", "q\"q"}, {3, 3}},
    {S("\"line1\r\nline2\",z\n"), 2, 17, 2, {"line1\r\nline2", "z"}, {12, 1}},
    {S("\"\"\"\"\n"), 1, 5, 1, {"\""}, {1}},
    {S("\"\"\n"), 1, 3, 1, {""}, {0}},
    {S(",\n"), 2, 2, 2, {"", ""}, {0, 0}},
    {S("\n"), 1, 1, 1, {""}, {0}},
    {S("\r\n"), 1, 2, 1, {""}, {0}},
    {S("\"a\",\"\"\r\n"), 2, 8, 2, {"a", ""}, {1, 0}},
    {S("\xff\xfe,\x80\n"), 2, 5, 2, {"\xff\xfe", "\x80"}, {2, 1}},
    {S("a\0b,c\n"), 2, 6, 2, {"a\0b", "c"}, {3, 1}},
    /* malformed: consumed goes past the bad line */
    {S("a\"b,c\nnext\n"), -EINVAL, 6, 0, {NULL}, {0}},
    {S("\"ab\"x,c\nnext\n"), -EINVAL, 8, 0, {NULL}, {0}},
    {S("a\rb\nnext\n"), -EINVAL, 4, 0, {NULL}, {0}},
    {S("\"ab\" \n"), -EINVAL, 6, 0, {NULL}, {0}},
    {S("ab\"\r\n"), -EINVAL, 5, 0, {NULL}, {0}},
    {S("a\"b"), -EINVAL, 3, 0, {NULL}, {0}},
};

TEST(parse_table)
{
        FOREACH_ROW(i, parse_cases) {
                const struct parse_case *c = &parse_cases[i];
                struct csv_record rec = CSV_RECORD_INIT;
                size_t consumed = 12345;
                int r;

                test_row("%zu bytes: %.*s", c->len, (int)c->len, c->in);
                r = csv_parse_record(c->in, c->len, &rec, &consumed);
                assert_int_equal(r, c->ret);
                assert_int_equal(consumed, c->consumed);
                if (r > 0) {
                        assert_int_equal(rec.nfields, c->nfields);
                        for (size_t f = 0; f < c->nfields; f++) {
                                assert_int_equal(rec.len[f], c->flen[f]);
                                assert_memory_equal(csv_field(&rec, f), c->fields[f], c->flen[f]);
                                assert_int_equal(csv_field(&rec, f)[c->flen[f]], '\0');
                        }
                }
                csv_record_release(&rec);
        }
}

TEST(field_cap)
{
        struct csv_record rec = CSV_RECORD_INIT;
        struct dbuf b = DBUF_INIT;
        size_t consumed;

        /* exactly CSV_MAX_FIELDS fields parse */
        for (size_t i = 0; i < CSV_MAX_FIELDS; i++)
                assert_int_equal(dbuf_puts(&b, i ? ",x" : "x"), 0);
        assert_int_equal(dbuf_puts(&b, "\r\n"), 0);
        assert_int_equal(csv_parse_record(b.p, b.len, &rec, &consumed), CSV_MAX_FIELDS);
        assert_int_equal(consumed, b.len);

        /* one more is malformed, and the next line is still reachable */
        dbuf_reset(&b);
        for (size_t i = 0; i < CSV_MAX_FIELDS + 1; i++)
                assert_int_equal(dbuf_puts(&b, i ? ",x" : "x"), 0);
        assert_int_equal(dbuf_puts(&b, "\r\nok\r\n"), 0);
        assert_int_equal(csv_parse_record(b.p, b.len, &rec, &consumed), -EINVAL);
        assert_int_equal(consumed, b.len - 4);
        assert_int_equal(csv_parse_record(b.p + consumed, b.len - consumed, &rec, &consumed), 1);
        assert_string_equal(csv_field(&rec, 0), "ok");

        csv_record_release(&rec);
        dbuf_release(&b);
}

struct append_case {
        const char *in;
        size_t len;
        const char *out;
};

static const struct append_case append_cases[] = {
    {S("plain"), "plain"},       {S(""), ""},
    {S("a,b"), "\"a,b\""},       {S("say \"hi\""), "\"say \"\"hi\"\"\""},
    {S("\""), "\"\"\"\""},       {S("cr\r"), "\"cr\r\""},
    {S("lf\nx"), "\"lf\nx\""},   {S("semi;colon tab\t"), "semi;colon tab\t"},
    {S("\xff\xfe"), "\xff\xfe"},
};

TEST(append_table)
{
        FOREACH_ROW(i, append_cases) {
                const struct append_case *c = &append_cases[i];
                struct dbuf b = DBUF_INIT;
                struct csv_record rec = CSV_RECORD_INIT;
                size_t consumed;

                test_row("%zu bytes: %.*s", c->len, (int)c->len, c->in);
                assert_int_equal(csv_append_field(&b, c->in, c->len), 0);
                assert_non_null(b.p);
                assert_string_equal(b.p, c->out);
                /* and it reads back as it was */
                assert_int_equal(dbuf_puts(&b, ",end\r\n"), 0);
                assert_int_equal(csv_parse_record(b.p, b.len, &rec, &consumed), 2);
                assert_int_equal(consumed, b.len);
                assert_int_equal(rec.len[0], c->len);
                assert_memory_equal(csv_field(&rec, 0), c->in, c->len);
                assert_string_equal(csv_field(&rec, 1), "end");
                csv_record_release(&rec);
                dbuf_release(&b);
        }
}

/* Walk a whole buffer the way runfiles/samplecsv reads one: every byte is accounted for. */
TEST(walk)
{
        static const char in[] = "h1,h2\r\n1,2\n\"bad\"x\r\n3,\"4\r\n4\"\r\n5,6";
        struct csv_record rec = CSV_RECORD_INIT;
        size_t pos = 0, consumed;
        int got[8], n = 0;

        while (pos < sizeof(in) - 1 && n < 8) {
                int r = csv_parse_record(in + pos, sizeof(in) - 1 - pos, &rec, &consumed);
                got[n++] = r;
                if (r == 0)
                        break;
                pos += consumed;
        }
        assert_int_equal(n, 5);
        assert_int_equal(got[0], 2);
        assert_int_equal(got[1], 2);
        assert_int_equal(got[2], -EINVAL);
        assert_int_equal(got[3], 2);
        assert_int_equal(got[4], 0); /* "5,6" is torn */
        csv_record_release(&rec);
}

RUN_TESTS()
