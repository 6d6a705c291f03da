/* SPDX-License-Identifier: MIT */
#pragma once

#include <curl/curl.h>

/* libcurl, loaded with dlopen the first time an HTTP sink needs it (the
 * Pushgateway, OTLP). A run that exports nothing over HTTP never maps it,
 * nor its TLS and auth stack (libcrypto, gnutls, krb5, ldap, ...: 7 MiB
 * of pages in every process that links it). Callers use sym_curl_*() with
 * the signatures of <curl/curl.h>, after libcurl_load() returned 0. */

#define LIBCURL_SYMS(X)                                                                            \
        X(CURLcode, curl_global_init, (long flags))                                                \
        X(void, curl_global_cleanup, (void))                                                       \
        X(CURL *, curl_easy_init, (void))                                                          \
        X(CURLcode, curl_easy_setopt, (CURL * c, CURLoption o, ...))                               \
        X(CURLcode, curl_easy_getinfo, (CURL * c, CURLINFO i, ...))                                \
        X(CURLcode, curl_easy_perform, (CURL * c))                                                 \
        X(void, curl_easy_cleanup, (CURL * c))                                                     \
        X(const char *, curl_easy_strerror, (CURLcode e))                                          \
        X(struct curl_slist *, curl_slist_append, (struct curl_slist * l, const char *s))          \
        X(void, curl_slist_free_all, (struct curl_slist * l))                                      \
        X(CURLM *, curl_multi_init, (void))                                                        \
        X(CURLMcode, curl_multi_setopt, (CURLM * m, CURLMoption o, ...))                           \
        X(CURLMcode, curl_multi_add_handle, (CURLM * m, CURL * c))                                 \
        X(CURLMcode, curl_multi_remove_handle, (CURLM * m, CURL * c))                              \
        X(CURLMcode, curl_multi_socket_action, (CURLM * m, curl_socket_t s, int ev, int *running)) \
        X(CURLMsg *, curl_multi_info_read, (CURLM * m, int *left))                                 \
        X(CURLMcode, curl_multi_cleanup, (CURLM * m))

#define LIBCURL_DECLARE(ret, name, args) extern ret(*sym_##name) args;
LIBCURL_SYMS(LIBCURL_DECLARE)
#undef LIBCURL_DECLARE

/* Load libcurl and resolve every symbol above, once; later calls return
 * the first one's result. Returns 0, or -ELIBACC when the library or a
 * symbol is missing (libcurl_error() then says which). */
int libcurl_load(void);
/* Why the last libcurl_load() failed, in words ("" when it did not). */
const char *libcurl_error(void);
