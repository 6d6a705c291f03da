/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "parse/linebuf.h"
#include "util/dbuf.h"
#include "util/macro.h"

#include "helpers/test.h"

/* Lines as "text|T\n" or "text|-\n" (truncated or not), so a whole run
 * compares as one string. */
struct collect {
        struct dbuf out;
        const char *chunk_lo, *chunk_hi; /* the chunk being fed */
        unsigned in_place;               /* lines handed out inside the chunk */
};

static void collect_cb(void *userdata, const char *line, size_t len, bool truncated)
{
        struct collect *c = userdata;

        if (line >= c->chunk_lo && line < c->chunk_hi)
                c->in_place++;
        assert_int_equal(dbuf_append(&c->out, line, len), 0);
        assert_int_equal(dbuf_puts(&c->out, truncated ? "|T\n" : "|-\n"), 0);
}

/* Feed in chunks of `step` bytes (0 = all at once), then flush. */
static void run(const char *in, size_t len, size_t cap, size_t step, struct collect *c)
{
        struct linebuf *lb = NULL;

        assert_int_equal(linebuf_new(cap, &lb), 0);
        if (step == 0)
                step = len ? len : 1;
        for (size_t off = 0; off < len; off += step) {
                size_t n = MIN(step, len - off);

                c->chunk_lo = in + off;
                c->chunk_hi = in + off + n;
                linebuf_feed(lb, in + off, n, collect_cb, c);
        }
        c->chunk_lo = c->chunk_hi = NULL;
        linebuf_flush(lb, collect_cb, c);
        linebuf_free(lb);
}

static const struct {
        const char *name;
        const char *in;
        size_t cap;
        const char *want;
} cases[] = {
    {"two lines", "a\nbc\n", 0, "a|-\nbc|-\n"},
    {"empty lines kept", "\n\nx\n", 0, "|-\n|-\nx|-\n"},
    {"partial line at EOF", "a\nlast", 0, "a|-\nlast|-\n"},
    {"nothing", "", 0, ""},
    {"CR is data", "a\r\nb\rc\n", 0, "a\r|-\nb\rc|-\n"},
    {"exactly cap", "abcd\nx\n", 4, "abcd|-\nx|-\n"},
    {"cap plus one", "abcde\nx\n", 4, "abcd|T\nx|-\n"},
    {"long line cut, next line whole", "abcdefghij\nxy\nlongerline", 4, "abcd|T\nxy|-\nlong|T\n"},
    {"cap 1", "ab\n\nc\n", 1, "a|T\n|-\nc|-\n"},
};

/* Each case fed whole, and in chunks of 1, 2, 3, 5 and 64 bytes. */
TEST(cases)
{
        static const size_t steps[] = {0, 1, 2, 3, 5, 64};

        FOREACH_ROW(i, cases) {
                for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
                        struct collect c = {.out = DBUF_INIT};

                        test_row("%s, step %zu", cases[i].name, steps[s]);
                        run(cases[i].in, strlen(cases[i].in), cases[i].cap, steps[s], &c);
                        assert_string_equal(c.out.p ? c.out.p : "", cases[i].want);
                        dbuf_release(&c.out);
                }
        }
}

TEST(zero_copy)
{
        const char *in = "one\ntwo\nthree\n";
        struct collect c = {.out = DBUF_INIT};

        run(in, strlen(in), 0, 0, &c);
        assert_string_equal(c.out.p, "one|-\ntwo|-\nthree|-\n");
        assert_int_equal(c.in_place, 3);
        dbuf_release(&c.out);

        /* A line split across chunks comes from the owned buffer. */
        c = (struct collect){.out = DBUF_INIT};
        run(in, strlen(in), 0, 5, &c);
        assert_string_equal(c.out.p, "one|-\ntwo|-\nthree|-\n");
        assert_int_equal(c.in_place, 1); /* only "one" fits in "one\nt" */
        dbuf_release(&c.out);
}

TEST(flush_twice)
{
        struct linebuf *lb = NULL;
        struct collect c = {.out = DBUF_INIT};

        assert_int_equal(linebuf_new(0, &lb), 0);
        linebuf_feed(lb, "abc", 3, collect_cb, &c);
        linebuf_flush(lb, collect_cb, &c);
        linebuf_flush(lb, collect_cb, &c);
        linebuf_feed(lb, "d\n", 2, collect_cb, &c);
        assert_string_equal(c.out.p, "abc|-\nd|-\n");
        linebuf_free(lb);
        linebuf_free(NULL);
        dbuf_release(&c.out);
}

RUN_TESTS()
