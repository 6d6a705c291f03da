/* SPDX-License-Identifier: MIT */
#include "util/libcurl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#define LIBCURL_DEFINE(ret, name, args) ret(*sym_##name) args;
LIBCURL_SYMS(LIBCURL_DEFINE)
#undef LIBCURL_DEFINE

static int loaded; /* 0 not tried, 1 loaded, -errno failed */
static char error[256];

/* The sonames of Debian's two builds of the same API (OpenSSL, GnuTLS). */
static const char *const sonames[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};

static int resolve(void *h)
{
        void *p;

#define LIBCURL_RESOLVE(ret, name, args)                                                           \
        p = dlsym(h, #name);                                                                       \
        if (!p) {                                                                                  \
                snprintf(error, sizeof(error), "libcurl lacks %s", #name);                         \
                return -ELIBACC;                                                                   \
        }                                                                                          \
        *(void **)&sym_##name = p;
        LIBCURL_SYMS(LIBCURL_RESOLVE)
#undef LIBCURL_RESOLVE
        return 0;
}

int libcurl_load(void)
{
        void *h = NULL;

        if (loaded)
                return loaded > 0 ? 0 : loaded;
        for (size_t i = 0; !h && i < sizeof(sonames) / sizeof(sonames[0]); i++)
                h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                snprintf(error, sizeof(error), "cannot load libcurl (%s)", dlerror());
                return loaded = -ELIBACC;
        }
        loaded = resolve(h) < 0 ? -ELIBACC : 1; /* resolve() said what it lacks */
        if (loaded < 0)
                dlclose(h);
        return loaded < 0 ? loaded : 0;
}

const char *libcurl_error(void)
{
        return error;
}
