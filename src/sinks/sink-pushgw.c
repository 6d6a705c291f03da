/* SPDX-License-Identifier: MIT */
/* The same exposition PUT to a Pushgateway, for CI runners that nothing
 * scrapes. Bounded in time; a failure is one warning and changes nothing
 * else. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render/prom.h"
#include "sinks/sink.h"
#include "parse/otelenv.h"
#include "util/macro.h"
#include "util/util.h"
#include "util/libcurl.h"

#define PUSH_TIMEOUT_DEFAULT 5.0

static bool plain_segment(const char *s)
{
        static const char plain[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-";

        return *s && !s[strspn(s, plain)];
}

/* base64url without padding: 6 bits a character, the last one's filled
 * with zeros. */
static void b64url(struct dwriter *w, const char *s)
{
        static const char tab[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        uint32_t acc = 0;
        int bits = 0;

        if (!*s)
                dw_puts(w, "="); /* the empty value */
        for (; *s; s++) {
                acc = acc << 8 | (unsigned char)*s;
                for (bits += 8; bits >= 6; bits -= 6)
                        dw_append(w, &tab[(acc >> (bits - 6)) & 63], 1);
        }
        if (bits)
                dw_append(w, &tab[(acc << (6 - bits)) & 63], 1);
}

static void segment(struct dwriter *w, const char *label, const char *v)
{
        if (plain_segment(v)) {
                dw_printf(w, "/%s/%s", label, v);
                return;
        }
        dw_printf(w, "/%s@base64/", label);
        b64url(w, v);
}

int prom_push_url(const char *base, const char *job, const char *instance, const char *buildtel_job,
                  struct dbuf *out)
{
        struct dwriter w = DWRITER_INIT(out);
        size_t n = strlen(base);

        while (n > 0 && base[n - 1] == '/')
                n--;
        dw_append(&w, base, n);
        dw_puts(&w, "/metrics");
        segment(&w, "job", job);
        segment(&w, "instance", instance);
        if (buildtel_job)
                segment(&w, "buildtel_job", buildtel_job);
        return dw_ok(&w) ? 0 : -ENOMEM;
}

struct pushgw_state {
        struct prom_config cfg;
        char *host;
        note_fn warn;
        void *warn_userdata;
};

static int pushgw_open(const struct sink_ctx *ctx, void **ret_state)
{
        struct pushgw_state *st;

        *ret_state = NULL;
        if (!ctx->prom || !ctx->prom->pushgateway)
                return 0;
        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->cfg = *ctx->prom;
        st->host = strdup(ctx->run->host ? ctx->run->host : "");
        if (!st->host) {
                free(st);
                return -ENOMEM;
        }
        st->warn = ctx->warn;
        st->warn_userdata = ctx->warn_userdata;
        *ret_state = st;
        return 0;
}

/* A SIGTERM while we push: stop waiting on the network. */
static int stop_on_signal(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                          curl_off_t ulnow)
{
        return stop_signal_pending() ? 1 : 0;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
        return size * n;
}

#define warn(st, ...) note_to((st)->warn, (st)->warn_userdata, __VA_ARGS__)

static int pushgw_finish(void *state, const struct run_model *m)
{
        struct pushgw_state *st = state;
        _cleanup_dbuf_ struct dbuf body = DBUF_INIT, url = DBUF_INIT;
        char shown[1024];
        struct curl_slist *hdr = NULL;
        double timeout =
            st->cfg.push_timeout_s > 0 ? st->cfg.push_timeout_s : PUSH_TIMEOUT_DEFAULT;
        long code = 0;
        CURL *c = NULL;
        CURLcode cr;
        int e;

        e = prom_render(m, st->cfg.metric_prefix, &body);
        if (e >= 0)
                e = prom_push_url(st->cfg.pushgateway,
                                  st->cfg.push_job ? st->cfg.push_job : "buildtel", st->host,
                                  m->run->job, &url);
        if (e < 0)
                goto out;
        if (libcurl_load() < 0) {
                warn(st, "pushgateway: %s", libcurl_error());
                goto out;
        }
        if (sym_curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c = sym_curl_easy_init())) {
                warn(st, "pushgateway: cannot initialise libcurl");
                goto out;
        }
        hdr = sym_curl_slist_append(hdr, "Content-Type: text/plain; version=0.0.4");
        hdr = sym_curl_slist_append(hdr, "Expect:");
        sym_curl_easy_setopt(c, CURLOPT_URL, url.p);
        sym_curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
        sym_curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.p ? body.p : "");
        sym_curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
        sym_curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
        sym_curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        sym_curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(MIN(timeout, 2.0) * 1000));
        sym_curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
        sym_curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        sym_curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stop_on_signal);
        sym_curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        sym_curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        cr = sym_curl_easy_perform(c);
        /* As OTLP: no user info, query or fragment in a message. */
        otelenv_url_for_display(st->cfg.pushgateway, shown, sizeof(shown));
        if (cr != CURLE_OK)
                warn(st, "push to %s failed: %s", shown, sym_curl_easy_strerror(cr));
        else if (sym_curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
                 (code < 200 || code > 299))
                warn(st, "push to %s failed: HTTP %ld", shown, code);
out:
        sym_curl_slist_free_all(hdr);
        if (c)
                sym_curl_easy_cleanup(c);
        /* Reported above; the build's status is not ours to change. */
        return e < 0 ? e : 0;
}

static void pushgw_close(void *state)
{
        struct pushgw_state *st = state;

        free(st->host);
        free(st);
}

const struct sink_ops sink_pushgw = {
    .name = "pushgateway",
    .open = pushgw_open,
    .finish = pushgw_finish,
    .close = pushgw_close,
};
