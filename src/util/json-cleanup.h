/* SPDX-License-Identifier: MIT */
#pragma once
/* The typed cleanup helper of a jansson value (util/macro.h has the
 * others): json_decref when the variable goes out of scope; hand it out
 * with TAKE_PTR. */

#include <jansson.h>

#include "util/macro.h"

/* jansson >= 2.11 has json_decrefp (behind json_auto_t) */
#ifndef json_auto_t
static inline void json_decrefp(json_t **j)
{
        json_decref(*j);
}
#endif

#define _cleanup_json_ _cleanup_(json_decrefp)

/* v appended to array a, both stolen: a, or NULL (a released) when it
 * could not be (a or v NULL, or no memory). */
static inline json_t *json_push(json_t *a, json_t *v)
{
        if (json_array_append_new(a, v) == 0)
                return a;
        json_decref(a);
        return NULL;
}
