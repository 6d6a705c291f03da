/* SPDX-License-Identifier: MIT */
/* buildtel layers: layer-cache reuse per target (image), from the most
 * recent build of each, flagging a target whose node changed since its
 * previous build (a new node cannot use the old node's local cache). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>

#include "cmd/cmd-common.h"
#include "cmd/cmd-history.h"
#include "cmd/cmd.h"
#include "render/jsonw.h"
#include "store/history.h"

#define ROW_FORMAT "%-24s %-26s %6s %6s %6s %-16s %s\n"

/* The layers, as JSON or as table lines into out. */
struct listing {
        json_t *json;
        struct dbuf *out;
};

static json_t *layer_json(const struct store_layer *l)
{
        const struct target_fact *t = &l->target;

        return json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o}", "target",
            jsonw_text(t->name), "run", jsonw_text(l->run), "start_epoch",
            jsonw_real(l->start_epoch), "steps", history_json_count(store_fact_steps(t, false)),
            "cached", history_json_count(store_fact_steps(t, true)), "ratio",
            jsonw_real(t->cache_ratio), "node", jsonw_text(t->node[0] ? t->node : NULL),
            "previous_node", jsonw_text(l->previous_node), "previous_run",
            jsonw_text(l->previous_run), "node_changed", l->node_changed, "duration_s",
            jsonw_real(t->duration_s), "success", history_json_count(t->success));
}

static int layer_text(struct dbuf *out, const struct store_layer *l)
{
        const struct target_fact *t = &l->target;
        _cleanup_dbuf_ struct dbuf n = DBUF_INIT, nd = DBUF_INIT, run = DBUF_INIT, note = DBUF_INIT;
        int r;

        r = history_put_clean(&n, t->name, 24);
        if (r >= 0)
                r = history_put_clean(&run, l->run, 26);
        if (r >= 0)
                r = history_put_clean(&nd, t->node[0] ? t->node : "-", 16);
        if (r >= 0 && l->node_changed) {
                r = dbuf_puts(&note, "node changed (was ");
                if (r >= 0)
                        r = history_put_clean(&note, l->previous_node, 64);
                if (r >= 0)
                        r = dbuf_puts(&note, "): no local layer cache there");
        }
        if (r >= 0)
                r = dbuf_printf(out, ROW_FORMAT, n.p ? n.p : "", run.p ? run.p : "",
                                COUNT_STR(store_fact_steps(t, false)),
                                COUNT_STR(store_fact_steps(t, true)), RATIO_STR(t->cache_ratio),
                                nd.p ? nd.p : "", note.p ? note.p : "");
        return r;
}

static int add_layer(void *userdata, const struct store_layer *l)
{
        struct listing *ls = userdata;

        if (ls->json)
                return json_array_append_new(ls->json, layer_json(l)) < 0 ? -ENOMEM : 0;
        return layer_text(ls->out, l);
}

int cmd_layers(int argc, char **argv)
{
        struct common_opts o;
        struct store *st = NULL;
        struct dbuf out = DBUF_INIT;
        struct listing l = {.out = &out};
        int ret, n;

        ret = history_list_begin("layers", argc, argv, &o, false, &st);
        if (ret >= 0)
                return ret;
        if (o.json)
                n = (l.json = json_array()) ? 0 : -ENOMEM;
        else
                n = dbuf_printf(&out, ROW_FORMAT, "TARGET", "RUN", "STEPS", "CACHED", "RATIO",
                                "NODE", "NOTE");
        if (n >= 0)
                n = store_layers_each(st, o.since, o.limit, add_layer, &l);
        return history_list_end("layers", n, l.json, &out,
                                "no targets recorded (layer figures come from BuildKit builds)",
                                st);
}
