/* SPDX-License-Identifier: MIT */
#include "parse/otelenv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/macro.h"
#include "util/util.h"

void otel_pairs_release(struct otel_pairs *ps)
{
        for (size_t i = 0; i < ps->n; i++) {
                free(ps->p[i].key);
                free(ps->p[i].value);
        }
        ps->n = 0;
}

int otelenv_percent_decode(const char *s, size_t len, char **ret)
{
        char *out = malloc(len + 1);
        size_t n = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (c == '%') {
                        int hi, lo;

                        if (len - i < 3)
                                goto bad;
                        hi = hex_value(s[i + 1]);
                        lo = hex_value(s[i + 2]);
                        if (hi < 0 || lo < 0)
                                goto bad;
                        c = (char)(hi << 4 | lo);
                        i += 2;
                }
                if (c == '\0')
                        goto bad;
                out[n++] = c;
        }
        out[n] = '\0';
        *ret = out;
        return 0;
bad:
        free(out);
        return -EINVAL;
}

static void trim(const char **b, const char **e)
{
        while (*b < *e && is_blank(**b))
                (*b)++;
        while (*e > *b && is_blank((*e)[-1]))
                (*e)--;
}

/* RFC 9110 token characters. */
static bool is_tchar(unsigned char c)
{
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                return true;
        return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool valid_header(const char *k, const char *v)
{
        if (!*k)
                return false;
        for (const unsigned char *p = (const unsigned char *)k; *p; p++)
                if (!is_tchar(*p))
                        return false;
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
                if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
                        return false;
        return true;
}

int otelenv_parse_pairs(const char *s, size_t len, bool http_header, struct otel_pairs *ret,
                        size_t *ret_bad_entry)
{
        struct otel_pairs t = {0};
        const char *p = s, *end = s + len;
        size_t entry = 0;
        int e = 0;

        if (len > OTELENV_MAX_LIST)
                return -E2BIG;
        while (p < end) {
                const char *comma = memchr(p, ',', (size_t)(end - p));
                const char *ie = comma ? comma : end, *eq, *kb = p, *ke, *vb, *ve;
                char *k = NULL, *v = NULL;

                entry++;
                p = comma ? comma + 1 : end;
                trim(&kb, &ie);
                if (kb == ie)
                        continue; /* an empty entry ("a=1,,b=2", a trailing comma) */
                eq = memchr(kb, '=', (size_t)(ie - kb));
                ke = eq ? eq : kb; /* no '=': an empty key */
                vb = eq ? eq + 1 : ie;
                ve = ie;
                trim(&kb, &ke);
                trim(&vb, &ve);
                if (kb == ke || t.n >= OTELENV_MAX_PAIRS) {
                        e = kb == ke ? -EINVAL : -E2BIG;
                        break;
                }
                e = otelenv_percent_decode(kb, (size_t)(ke - kb), &k);
                if (e >= 0)
                        e = otelenv_percent_decode(vb, (size_t)(ve - vb), &v);
                if (e >= 0 && http_header && !valid_header(k, v))
                        e = -EINVAL;
                if (e < 0) {
                        free(k);
                        free(v);
                        break;
                }
                t.p[t.n].key = k;
                t.p[t.n].value = v;
                t.n++;
        }
        if (e < 0) {
                otel_pairs_release(&t);
                if (ret_bad_entry)
                        *ret_bad_entry = entry;
                return e;
        }
        *ret = t;
        return 0;
}

static int parse_hex(const char *s, size_t n, uint8_t *out)
{
        for (size_t i = 0; i < n; i += 2) {
                int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);

                /* W3C trace context: lowercase only */
                if (hi < 0 || lo < 0 || (s[i] >= 'A' && s[i] <= 'F') ||
                    (s[i + 1] >= 'A' && s[i + 1] <= 'F'))
                        return -EINVAL;
                out[i / 2] = (uint8_t)(hi << 4 | lo);
        }
        return 0;
}

/* All-zero ids are invalid (W3C). */
static const uint8_t zero[16];

int otelenv_parse_traceparent(const char *s, size_t len, struct traceparent *ret)
{
        struct traceparent t;
        const char *b = s, *e = s + len;

        trim(&b, &e);
        len = (size_t)(e - b);
        /* 2 + 1 + 32 + 1 + 16 + 1 + 2 */
        if (len < 55 || b[2] != '-' || b[35] != '-' || b[52] != '-')
                return -EINVAL;
        if (parse_hex(b, 2, &t.version) < 0 || t.version == 0xff)
                return -EINVAL;
        if (len > 55 && (t.version == 0 || b[55] != '-'))
                return -EINVAL;
        if (parse_hex(b + 3, 32, t.trace_id) < 0 || parse_hex(b + 36, 16, t.span_id) < 0 ||
            parse_hex(b + 53, 2, &t.flags) < 0)
                return -EINVAL;
        if (!memcmp(t.trace_id, zero, 16) || !memcmp(t.span_id, zero, 8))
                return -EINVAL;
        *ret = t;
        return 0;
}

/* Whether [b, e), blanks around it aside, is lit (lower case) in any case. */
static bool eq_nocase(const char *b, const char *e, const char *lit)
{
        trim(&b, &e);
        return (size_t)(e - b) == strlen(lit) && strncasecmp(b, lit, (size_t)(e - b)) == 0;
}

int otelenv_parse_bool(const char *s, size_t len, bool *ret)
{
        bool t = eq_nocase(s, s + len, "true");

        if (!t && !eq_nocase(s, s + len, "false"))
                return -EINVAL;
        *ret = t;
        return 0;
}

int otelenv_parse_ms(const char *s, size_t len, uint64_t max_ms, uint64_t *ret)
{
        const char *b = s, *e = s + len;
        uint64_t v;
        int r;

        trim(&b, &e);
        r = parse_u64(&b, e, &v);
        if (r == 0 && b != e)
                r = -EINVAL;
        if (r == 0 && v > max_ms)
                r = -ERANGE;
        if (r == 0)
                *ret = v;
        return r;
}

static size_t scheme_len(const char *s, size_t len)
{
        if (len >= 7 && strncasecmp(s, "http://", 7) == 0)
                return 7;
        if (len >= 8 && strncasecmp(s, "https://", 8) == 0)
                return 8;
        return 0;
}

int otelenv_metrics_url(const char *s, size_t len, bool generic, char **ret)
{
        const char *b = s, *e = s + len;
        size_t sl, n;
        char *url;

        trim(&b, &e);
        len = (size_t)(e - b);
        if (len > OTELENV_MAX_URL)
                return -E2BIG;
        sl = scheme_len(b, len);
        if (!sl || len == sl || b[sl] == '/')
                return -EINVAL;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)b[i] <= 0x20 || b[i] == 0x7f)
                        return -EINVAL;
        n = len;
        if (generic) {
                /* Exactly one slash before v1/metrics; but not in a query. */
                if (memchr(b, '?', len) || memchr(b, '#', len))
                        return -EINVAL;
                while (n > sl && b[n - 1] == '/')
                        n--;
        }
        if (asprintf(&url, "%.*s%s", (int)n, b, generic ? "/v1/metrics" : "") < 0)
                return -ENOMEM;
        *ret = url;
        return 0;
}

void otelenv_url_for_display(const char *url, char *buf, size_t cap)
{
        size_t len = strlen(url), sl = scheme_len(url, len), hb, he, o = 0;
        const char *at;

        if (!cap)
                return;
        hb = sl;
        he = hb + strcspn(url + hb, "/?#");
        /* the last '@': a password with a raw '@' must not show its tail */
        at = memrchr(url + hb, '@', he - hb);
        if (at)
                hb = (size_t)(at - url) + 1;
        /* scheme, host[:port], path; no user info, query or fragment */
        for (size_t i = 0; i < len && o + 1 < cap; i++) {
                if (i >= sl && i < hb)
                        continue;
                if (i >= he && (url[i] == '?' || url[i] == '#'))
                        break;
                buf[o++] = url[i];
        }
        buf[o] = '\0';
}

void otel_config_release(struct otel_config *c)
{
        free(c->url);
        free(c->traces_url);
        free(c->tracestate);
        free(c->ci_pipeline_name);
        free(c->ci_pipeline_run_id);
        free(c->vcs_rev);
        free(c->service_name);
        otel_pairs_release(&c->headers);
        otel_pairs_release(&c->resource);
        memset(c, 0, sizeof(*c));
}

struct loader {
        otelenv_lookup_fn lookup;
        void *lookup_data;
        note_fn note;
        void *note_data;
};

/* The metrics-specific variable wins over the generic one. */
static const char *get2(struct loader *L, const char *metrics, const char *generic,
                        const char **ret_name)
{
        const char *v = L->lookup(L->lookup_data, metrics);

        *ret_name = metrics;
        if (v && *v)
                return v;
        *ret_name = generic;
        v = L->lookup(L->lookup_data, generic);
        return v && *v ? v : NULL;
}

#define NOTE(L, ...)                                                                               \
        do {                                                                                       \
                if ((L)->note)                                                                     \
                        (L)->note((L)->note_data, __VA_ARGS__);                                    \
        } while (0)

/* The endpoint: --otlp-endpoint as is, else the variables; then
 * OTEL_SDK_DISABLED. Returns 0, -EINVAL (a bad --otlp-endpoint) or
 * -ENOMEM. */
static int load_endpoint(struct loader *L, const struct otel_options *opt, struct otel_config *c)
{
        const char *v, *name;
        bool b;
        int e;

        if (opt && opt->endpoint) {
                e = otelenv_metrics_url(opt->endpoint, strlen(opt->endpoint), false, &c->url);
                if (e < 0)
                        return e == -ENOMEM ? e : -EINVAL;
        } else {
                v = get2(L, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT",
                         &name);
                if (v) {
                        e = otelenv_metrics_url(v, strlen(v),
                                                strcmp(name, "OTEL_EXPORTER_OTLP_ENDPOINT") == 0,
                                                &c->url);
                        if (e == -ENOMEM)
                                return e;
                        if (e < 0)
                                NOTE(L, "%s is not an http:// or https:// URL; OTLP export is off",
                                     name);
                }
        }
        v = L->lookup(L->lookup_data, "OTEL_SDK_DISABLED");
        if (v && *v) {
                if (otelenv_parse_bool(v, strlen(v), &b) < 0)
                        NOTE(L, "OTEL_SDK_DISABLED is neither true nor false; ignored");
                else if (b) {
                        free(c->url);
                        c->url = NULL;
                }
        }
        c->enabled = c->url != NULL;
        return 0;
}

/* The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else the
 * metrics URL with its "/v1/metrics" tail made "/v1/traces" (the generic
 * endpoint and --otlp-endpoint alike); else none. 0 or -ENOMEM. */
static int load_traces_endpoint(struct loader *L, struct otel_config *c)
{
        static const char mt[] = "/v1/metrics";
        const char *v;
        char *url;
        size_t n;
        int e;

        if (!c->enabled)
                return 0;
        v = L->lookup(L->lookup_data, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        if (v && *v) {
                e = otelenv_metrics_url(v, strlen(v), false, &c->traces_url);
                if (e == -ENOMEM)
                        return e;
                if (e < 0)
                        NOTE(L, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not an http:// or https:// "
                                "URL; no spans are sent");
                return 0;
        }
        n = strlen(c->url);
        if (n < sizeof(mt) - 1 || strcmp(c->url + n - (sizeof(mt) - 1), mt) != 0) {
                NOTE(L, "the OTLP endpoint does not end in /v1/metrics; no spans are sent "
                        "(set OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)");
                return 0;
        }
        if (asprintf(&url, "%.*s/v1/traces", (int)(n - (sizeof(mt) - 1)), c->url) < 0)
                return -ENOMEM;
        c->traces_url = url;
        return 0;
}

/* http/protobuf or http/json into *ret; -EINVAL (noted) otherwise. */
static int load_protocol(struct loader *L, const char *v, const char *name,
                         const struct otel_config *c, enum otel_protocol *ret)
{
        const char *ve = v + strlen(v);
        bool json = eq_nocase(v, ve, "http/json");

        if (json || eq_nocase(v, ve, "http/protobuf")) {
                *ret = json ? OTEL_PROTOCOL_JSON : OTEL_PROTOCOL_PROTOBUF;
                return 0;
        }
        if (c->enabled)
                NOTE(L, "%s: only http/protobuf and http/json are supported; OTLP export is off",
                     name);
        return -EINVAL;
}

/* v, variable name's, as milliseconds from min to max into *ret (which
 * holds the default); else noted. */
static void load_ms(struct loader *L, const struct otel_config *c, const char *v, const char *name,
                    uint64_t min, uint64_t max, uint64_t *ret)
{
        uint64_t ms;

        if (otelenv_parse_ms(v, strlen(v), max, &ms) >= 0 && ms >= min)
                *ret = ms;
        else if (c->enabled)
                NOTE(L, "%s takes milliseconds from %" PRIu64 " to %" PRIu64 "; using %" PRIu64,
                     name, min, max, *ret);
}

/* Protocol, compression and timeout. */
static void load_transport(struct loader *L, struct otel_config *c)
{
        const char *v, *name;

        v = get2(L, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL", &name);
        if (v && load_protocol(L, v, name, c, &c->protocol) < 0)
                c->enabled = false;
        c->traces_protocol = c->protocol;
        v = get2(L, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL", &name);
        if (v && load_protocol(L, v, name, c, &c->traces_protocol) < 0)
                c->enabled = false;
        v = get2(L, "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION",
                 &name);
        if (v && eq_nocase(v, v + strlen(v), "gzip"))
                c->gzip = true;
        else if (v && !eq_nocase(v, v + strlen(v), "none") && c->enabled)
                NOTE(L, "%s: only gzip and none are supported; sending uncompressed", name);
        v = get2(L, "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT", &name);
        if (v)
                load_ms(L, c, v, name, 1, 3600000, &c->timeout_ms);
}

/* --otlp-interval, else OTEL_METRIC_EXPORT_INTERVAL. */
static void load_interval(struct loader *L, const struct otel_options *opt, struct otel_config *c)
{
        const char *v;

        if (opt && opt->interval_ms)
                c->interval_ms = opt->interval_ms;
        else if ((v = L->lookup(L->lookup_data, "OTEL_METRIC_EXPORT_INTERVAL")) && *v)
                load_ms(L, c, v, "OTEL_METRIC_EXPORT_INTERVAL", 100, 86400000, &c->interval_ms);
}

/* The first of two variables that is set and short, copied into *ret.
 * 0 or -ENOMEM. */
static int dup_var(struct loader *L, const char *a, const char *b, char **ret)
{
        const char *name, *v = get2(L, a, b, &name);

        if (!v || strlen(v) > 1024)
                return 0;
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

/* Variable name's pairs (v; NULL: none) into *ret; malformed, noted by the
 * entry's number only (the text may be a credential), then. 0 or -ENOMEM. */
static int load_pairs(struct loader *L, const struct otel_config *c, const char *v,
                      const char *name, bool http_header, const char *then, struct otel_pairs *ret)
{
        size_t bad;
        int e = v ? otelenv_parse_pairs(v, strlen(v), http_header, ret, &bad) : 0;

        if (e < 0 && e != -ENOMEM && c->enabled)
                NOTE(L, "%s is malformed (entry %zu); %s", name, bad, then);
        return e == -ENOMEM ? e : 0;
}

/* Headers, resource attributes, service name, TRACEPARENT, the CI's
 * pipeline. Returns 0 or -ENOMEM. */
static int load_labels(struct loader *L, struct otel_config *c)
{
        const char *v, *name;

        v = get2(L, "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS", &name);
        if (load_pairs(L, c, v, name, true, "no headers are sent", &c->headers) < 0)
                return -ENOMEM;
        v = L->lookup(L->lookup_data, "OTEL_RESOURCE_ATTRIBUTES");
        if (load_pairs(L, c, v, "OTEL_RESOURCE_ATTRIBUTES", false, "ignored", &c->resource) < 0)
                return -ENOMEM;
        v = L->lookup(L->lookup_data, "OTEL_SERVICE_NAME");
        if (v && *v && !(c->service_name = strdup(v)))
                return -ENOMEM;
        v = L->lookup(L->lookup_data, "TRACEPARENT");
        c->has_trace = v && *v && otelenv_parse_traceparent(v, strlen(v), &c->trace) >= 0;
        if (v && *v && !c->has_trace && c->enabled)
                NOTE(L, "TRACEPARENT is not a W3C traceparent; not correlated");
        /* the CI pipeline's name and run id */
        if (dup_var(L, "GITHUB_WORKFLOW", "CI_PIPELINE_NAME", &c->ci_pipeline_name) < 0 ||
            dup_var(L, "GITHUB_RUN_ID", "CI_PIPELINE_ID", &c->ci_pipeline_run_id) < 0)
                return -ENOMEM;
        v = L->lookup(L->lookup_data, "TRACESTATE");
        /* passed on when well-formed (W3C: else dropped whole) */
        if (!c->has_trace || !v || !*v || strlen(v) > 8192)
                return 0;
        if (otelenv_check_tracestate(v, strlen(v)) >= 0)
                return (c->tracestate = strdup(v)) ? 0 : -ENOMEM;
        if (c->enabled)
                NOTE(L, "TRACESTATE is not a W3C tracestate; not passed on");
        return 0;
}

int otelenv_load(otelenv_lookup_fn lookup, void *lookup_data, const struct otel_options *opt,
                 note_fn note, void *note_data, struct otel_config *ret)
{
        struct loader L = {lookup, lookup_data, note, note_data};
        struct otel_config c = {0};
        int e;

        c.timeout_ms = OTEL_TIMEOUT_MS_DEFAULT;
        c.interval_ms = OTEL_INTERVAL_MS_DEFAULT;
        c.max_spans = opt && opt->max_spans_set ? opt->max_spans : OTEL_MAX_SPANS_DEFAULT;
        *ret = c;

        e = load_endpoint(&L, opt, &c);
        if (e < 0)
                return e;
        load_transport(&L, &c);
        load_interval(&L, opt, &c);
        e = load_traces_endpoint(&L, &c);
        if (e >= 0)
                e = load_labels(&L, &c);
        if (e < 0) {
                otel_config_release(&c);
                return e;
        }
        *ret = c;
        return 0;
}

void otelenv_set_run_span(struct otel_config *c, const uint8_t rnd[16], const char *run_id)
{
        struct traceparent *s = &c->span;
        const char *rid = run_id ? run_id : "";
        uint64_t h; /* FNV-1a, then a 64-bit finalizer */

        s->version = 0;
        if (c->has_trace) {
                memcpy(s->trace_id, c->trace.trace_id, 16);
                s->flags = c->trace.flags;
        } else {
                memcpy(s->trace_id, rnd, 16);
                s->flags = 1; /* sampled: we do export it */
        }
        if (memcmp(s->trace_id, zero, 16) == 0)
                s->trace_id[15] = 1;
        h = fnv1a(fnv1a(FNV1A_OFFSET, s->trace_id, 16), rid, strlen(rid));
        h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;
        h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        for (size_t i = 0; i < 8; i++)
                s->span_id[i] = (uint8_t)(h >> (56 - 8 * i));
        if (memcmp(s->span_id, zero, 8) == 0)
                s->span_id[7] = 1;
        c->span_set = true;
}

int otelenv_format_traceparent(const struct traceparent *tp, char *buf, size_t cap)
{
        if (cap < 56)
                return -EINVAL;
        /* 00-<32 hex>-<16 hex>-<2 hex> */
        memcpy(buf, "00-", 3);
        hex_encode(buf + 3, tp->trace_id, 16);
        buf[35] = '-';
        hex_encode(buf + 36, tp->span_id, 8);
        buf[52] = '-';
        hex_encode(buf + 53, &tp->flags, 1);
        return 0;
}

/* ---- tracestate (W3C trace context, section 3.3) ---- */

static bool ts_lc(char c)
{
        return c >= 'a' && c <= 'z';
}

static bool ts_keychar(char c)
{
        return ts_lc(c) || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/';
}

/* A key [k, end): simple-key or tenant-id@system-id. */
static bool ts_key_ok(const char *k, const char *end)
{
        const char *at = memchr(k, '@', (size_t)(end - k));
        size_t n = (size_t)(end - k);

        if (!at ? n < 1 || n > 256 || !ts_lc(k[0])
                : at - k < 1 || at - k > 241 || !(ts_lc(k[0]) || (k[0] >= '0' && k[0] <= '9')) ||
                      end - at - 1 < 1 || end - at - 1 > 14 || !ts_lc(at[1]))
                return false;
        for (const char *p = k; p < end; p++)
                if (p != at && !ts_keychar(*p))
                        return false;
        return true;
}

static bool ts_value_ok(const char *v, const char *end)
{
        size_t n = (size_t)(end - v);

        if (n < 1 || n > 256 || end[-1] == ' ')
                return false;
        for (const char *p = v; p < end; p++)
                if (*p < 0x20 || *p > 0x7e || *p == ',' || *p == '=')
                        return false;
        return true;
}

int otelenv_check_tracestate(const char *s, size_t len)
{
        const char *end = s + len, *keys[32], *p = s;
        size_t klen[32], n = 0;

        while (p <= end) {
                const char *m = memchr(p, ',', (size_t)(end - p)), *me = m ? m : end, *eq;

                trim(&p, &me);
                if (p < me) {
                        eq = memchr(p, '=', (size_t)(me - p));
                        if (n == 32 || !eq || !ts_key_ok(p, eq) || !ts_value_ok(eq + 1, me))
                                return -EINVAL;
                        for (size_t i = 0; i < n; i++)
                                if (klen[i] == (size_t)(eq - p) && memcmp(keys[i], p, klen[i]) == 0)
                                        return -EINVAL;
                        keys[n] = p;
                        klen[n++] = (size_t)(eq - p);
                }
                if (!m)
                        break;
                p = m + 1;
        }
        return 0;
}
