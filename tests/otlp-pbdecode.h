/* SPDX-License-Identifier: MIT */
/* A minimal protobuf reader for OTLP metrics, for tests and the fuzz
 * target only: it decodes what otlp_encode() writes back into
 * flat values so they can be compared with what was encoded. Independent
 * of the encoder's code on purpose. Strict: an unknown wire type, false, a length
 * past the end, or a non-minimal varint is an error. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PBD_MAX_METRICS 64
#define PBD_MAX_POINTS 256
#define PBD_MAX_ATTRS 8
#define PBD_MAX_STR 128

struct pbd_attr {
        char key[PBD_MAX_STR];
        int type; /* 1 string, 2 bool, 3 int, 4 double */
        char s[PBD_MAX_STR];
        uint64_t u; /* bool, int, double bits */
};

struct pbd_point {
        uint64_t start_ns, time_ns;
        bool is_int, has_value;
        uint64_t bits; /* as_int or as_double bits */
        size_t nattrs;
        struct pbd_attr attrs[PBD_MAX_ATTRS];
        int nexemplars;
        uint64_t ex_time, ex_bits;
        bool ex_is_int;
        uint8_t trace[16], span[8];
};

struct pbd_metric {
        char name[PBD_MAX_STR], desc[PBD_MAX_STR], unit[PBD_MAX_STR];
        int kind; /* 5 gauge, 7 sum */
        uint64_t temporality, monotonic;
        size_t first, npoints; /* into points[] */
};

struct pbd_request {
        size_t nresource;
        struct pbd_attr resource[PBD_MAX_ATTRS * 4];
        char scope_name[PBD_MAX_STR], scope_version[PBD_MAX_STR];
        size_t nmetrics, npoints;
        struct pbd_metric metrics[PBD_MAX_METRICS];
        struct pbd_point points[PBD_MAX_POINTS];
};

struct pbd_field {
        uint32_t num;
        int wt;
        uint64_t v;       /* varint, fixed64 */
        const uint8_t *p; /* length-delimited */
        size_t len;
};

static inline int pbd_varint(const uint8_t **cur, const uint8_t *end, uint64_t *ret)
{
        uint64_t v = 0;

        for (int shift = 0; shift < 70; shift += 7) {
                uint8_t b;
                if (*cur >= end)
                        return -1;
                b = *(*cur)++;
                if (shift == 63 && b > 1)
                        return -1;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        if (b == 0 && shift > 0)
                                return -1; /* not minimal */
                        *ret = v;
                        return 0;
                }
        }
        return -1;
}

static inline int pbd_next(const uint8_t **cur, const uint8_t *end, struct pbd_field *f)
{
        uint64_t tag;

        memset(f, 0, sizeof(*f));
        if (pbd_varint(cur, end, &tag) < 0 || (tag >> 3) == 0 || (tag >> 3) > 0xffffffffu)
                return -1;
        f->num = (uint32_t)(tag >> 3);
        f->wt = (int)(tag & 7);
        switch (f->wt) {
        case 0:
                return pbd_varint(cur, end, &f->v);
        case 1:
                if (end - *cur < 8)
                        return -1;
                f->v = 0;
                for (int i = 0; i < 8; i++)
                        f->v |= (uint64_t)(*cur)[i] << (8 * i);
                *cur += 8;
                return 0;
        case 2:
                if (pbd_varint(cur, end, &f->v) < 0 || f->v > (uint64_t)(end - *cur))
                        return -1;
                f->p = *cur;
                f->len = (size_t)f->v;
                *cur += f->len;
                return 0;
        default:
                return -1;
        }
}

static inline void pbd_str(char *dst, const struct pbd_field *f)
{
        size_t n = f->len < PBD_MAX_STR - 1 ? f->len : PBD_MAX_STR - 1;

        memcpy(dst, f->p, n);
        dst[n] = '\0';
}

#define PBD_EACH(f, p, len)                                                                        \
        for (const uint8_t *f##_c = (p), *f##_e = (p) + (len); f##_c < f##_e;)                     \
                if (pbd_next(&f##_c, f##_e, &(f)) < 0)                                             \
                        return -1;                                                                 \
                else

static inline int pbd_anyvalue(const uint8_t *p, size_t len, struct pbd_attr *a)
{
        struct pbd_field f;

        PBD_EACH(f, p, len)
        {
                a->type = (int)f.num;
                if (f.num == 1 && f.wt == 2)
                        pbd_str(a->s, &f);
                else if ((f.num == 2 || f.num == 3) && f.wt == 0)
                        a->u = f.v;
                else if (f.num == 4 && f.wt == 1)
                        a->u = f.v;
                else
                        return -1;
        }
        return 0;
}

static inline int pbd_keyvalue(const uint8_t *p, size_t len, struct pbd_attr *a)
{
        struct pbd_field f;

        memset(a, 0, sizeof(*a));
        PBD_EACH(f, p, len)
        {
                if (f.num == 1 && f.wt == 2)
                        pbd_str(a->key, &f);
                else if (f.num == 2 && f.wt == 2) {
                        if (pbd_anyvalue(f.p, f.len, a) < 0)
                                return -1;
                } else
                        return -1;
        }
        return 0;
}

static inline int pbd_exemplar(const uint8_t *p, size_t len, struct pbd_point *pt)
{
        struct pbd_field f;

        pt->nexemplars++;
        PBD_EACH(f, p, len)
        {
                if (f.num == 2 && f.wt == 1)
                        pt->ex_time = f.v;
                else if ((f.num == 3 || f.num == 6) && f.wt == 1) {
                        pt->ex_bits = f.v;
                        pt->ex_is_int = f.num == 6;
                } else if (f.num == 4 && f.wt == 2 && f.len == 8)
                        memcpy(pt->span, f.p, 8);
                else if (f.num == 5 && f.wt == 2 && f.len == 16)
                        memcpy(pt->trace, f.p, 16);
                else
                        return -1;
        }
        return 0;
}

static inline int pbd_point(const uint8_t *p, size_t len, struct pbd_point *pt)
{
        struct pbd_field f;

        memset(pt, 0, sizeof(*pt));
        PBD_EACH(f, p, len)
        {
                if (f.num == 2 && f.wt == 1)
                        pt->start_ns = f.v;
                else if (f.num == 3 && f.wt == 1)
                        pt->time_ns = f.v;
                else if ((f.num == 4 || f.num == 6) && f.wt == 1) {
                        pt->bits = f.v;
                        pt->is_int = f.num == 6;
                        pt->has_value = true;
                } else if (f.num == 5 && f.wt == 2) {
                        if (pbd_exemplar(f.p, f.len, pt) < 0)
                                return -1;
                } else if (f.num == 7 && f.wt == 2) {
                        if (pt->nattrs >= PBD_MAX_ATTRS ||
                            pbd_keyvalue(f.p, f.len, &pt->attrs[pt->nattrs++]) < 0)
                                return -1;
                } else
                        return -1;
        }
        return 0;
}

static inline int pbd_data(const uint8_t *p, size_t len, struct pbd_request *rq,
                           struct pbd_metric *m)
{
        struct pbd_field f;

        m->first = rq->npoints;
        PBD_EACH(f, p, len)
        {
                if (f.num == 1 && f.wt == 2) {
                        if (rq->npoints >= PBD_MAX_POINTS ||
                            pbd_point(f.p, f.len, &rq->points[rq->npoints++]) < 0)
                                return -1;
                        m->npoints++;
                } else if (f.num == 2 && f.wt == 0 && m->kind == 7)
                        m->temporality = f.v;
                else if (f.num == 3 && f.wt == 0 && m->kind == 7)
                        m->monotonic = f.v;
                else
                        return -1;
        }
        return 0;
}

static inline int pbd_metric(const uint8_t *p, size_t len, struct pbd_request *rq)
{
        struct pbd_metric *m;
        struct pbd_field f;

        if (rq->nmetrics >= PBD_MAX_METRICS)
                return -1;
        m = &rq->metrics[rq->nmetrics++];
        memset(m, 0, sizeof(*m));
        PBD_EACH(f, p, len)
        {
                if (f.num == 1 && f.wt == 2)
                        pbd_str(m->name, &f);
                else if (f.num == 2 && f.wt == 2)
                        pbd_str(m->desc, &f);
                else if (f.num == 3 && f.wt == 2)
                        pbd_str(m->unit, &f);
                else if ((f.num == 5 || f.num == 7) && f.wt == 2 && !m->kind) {
                        m->kind = (int)f.num;
                        if (pbd_data(f.p, f.len, rq, m) < 0)
                                return -1;
                } else
                        return -1;
        }
        return m->kind ? 0 : -1;
}

/* Returns 0, or -1 for anything that is not a well-formed request. */
static inline int pbd_request(const uint8_t *p, size_t len, struct pbd_request *rq)
{
        struct pbd_field f, g, h, k;

        /* Not points[] (half a megabyte, last): each point is cleared as it
         * is decoded. Clearing it all made this the fuzz target's main cost. */
        memset(rq, 0, offsetof(struct pbd_request, points));
        PBD_EACH(f, p, len)
        {
                if (f.num != 1 || f.wt != 2)
                        return -1;
                PBD_EACH(g, f.p, f.len)
                {
                        if (g.num == 1 && g.wt == 2) {
                                PBD_EACH(h, g.p, g.len)
                                {
                                        if (h.num != 1 || h.wt != 2 ||
                                            rq->nresource >=
                                                sizeof(rq->resource) / sizeof(rq->resource[0]) ||
                                            pbd_keyvalue(h.p, h.len,
                                                         &rq->resource[rq->nresource++]) < 0)
                                                return -1;
                                }
                        } else if (g.num == 2 && g.wt == 2) {
                                PBD_EACH(h, g.p, g.len)
                                {
                                        if (h.num == 1 && h.wt == 2) {
                                                PBD_EACH(k, h.p, h.len)
                                                {
                                                        if (k.num == 1 && k.wt == 2)
                                                                pbd_str(rq->scope_name, &k);
                                                        else if (k.num == 2 && k.wt == 2)
                                                                pbd_str(rq->scope_version, &k);
                                                        else
                                                                return -1;
                                                }
                                        } else if (h.num == 2 && h.wt == 2) {
                                                if (pbd_metric(h.p, h.len, rq) < 0)
                                                        return -1;
                                        } else
                                                return -1;
                                }
                        } else
                                return -1;
                }
        }
        return 0;
}
