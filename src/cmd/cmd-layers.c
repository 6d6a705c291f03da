/* SPDX-License-Identifier: MIT */
/* buildtel layers: layer-cache reuse per target (image), from the most
 * recent build of each, flagging a target whose node changed since its
 * previous build (a new node cannot use the old node's local cache). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "store/history.h"
#include "util/util.h"

static int render(const json_t *rows, struct dbuf *out)
{
        int r = dbuf_printf(out, "%-24s %-26s %6s %6s %6s %-16s %s\n", "TARGET", "RUN", "STEPS",
                            "CACHED", "RATIO", "NODE", "NOTE");

        for (size_t i = 0; r >= 0 && i < json_array_size(rows); i++) {
                const json_t *o = json_array_get(rows, i);
                struct dbuf n = DBUF_INIT, nd = DBUF_INIT, run = DBUF_INIT, note = DBUF_INIT;
                char steps[24], cached[24], ratio[16];

                snprintf(steps, sizeof(steps), isfinite(history_num(o, "steps")) ? "%.0f" : "-",
                         history_num(o, "steps"));
                snprintf(cached, sizeof(cached), isfinite(history_num(o, "cached")) ? "%.0f" : "-",
                         history_num(o, "cached"));
                snprintf(ratio, sizeof(ratio), isfinite(history_num(o, "ratio")) ? "%.0f%%" : "-",
                         history_num(o, "ratio") * 100);
                r = history_put_clean(&n, history_str(o, "target"), 24);
                if (r >= 0)
                        r = history_put_clean(&run, history_str(o, "run"), 26);
                if (r >= 0)
                        r = history_put_clean(
                            &nd, *history_str(o, "node") ? history_str(o, "node") : "-", 16);
                if (r >= 0 && json_is_true(json_object_get(o, "node_changed"))) {
                        r = dbuf_puts(&note, "node changed (was ");
                        if (r >= 0)
                                r = history_put_clean(&note, history_str(o, "previous_node"), 64);
                        if (r >= 0)
                                r = dbuf_puts(&note, "): no local layer cache there");
                }
                if (r >= 0)
                        r = dbuf_printf(out, "%-24s %-26s %6s %6s %6s %-16s %s\n", n.p ? n.p : "",
                                        run.p ? run.p : "", steps, cached, ratio, nd.p ? nd.p : "",
                                        note.p ? note.p : "");
                dbuf_release(&n);
                dbuf_release(&nd);
                dbuf_release(&run);
                dbuf_release(&note);
        }
        return r;
}

int cmd_layers(int argc, char **argv)
{
        struct history_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        json_t *rows = NULL;
        int oi, ret, e;

        ret = history_opts_parse("layers", "jls", argc, argv, &o, &oi);
        if (ret)
                return ret;
        if (o.help) {
                cmd_print_usage("layers");
                return 0;
        }
        if (oi != argc) {
                fprintf(stderr,
                        "buildtel layers: no operands expected; see 'buildtel help layers'\n");
                return EXIT_BT_USAGE;
        }
        if (history_open("layers", &o, false, &st))
                return 1;
        ret = 1;
        e = history_layers(st, o.since, o.limit, &rows);
        if (e < 0) {
                fprintf(stderr, "buildtel layers: cannot read the history: %s\n",
                        store_strerror(e));
                goto out;
        }
        if (o.json) {
                ret = history_print_json(rows);
        } else if (json_array_size(rows) == 0) {
                printf("no targets recorded (layer figures come from BuildKit builds)\n");
                ret = 0;
        } else if (render(rows, &out) >= 0 && write_all(STDOUT_FILENO, out.p, out.len) >= 0) {
                ret = 0;
        }
out:
        json_decref(rows);
        dbuf_release(&out);
        store_close(st);
        return ret;
}
