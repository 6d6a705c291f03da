/* SPDX-License-Identifier: MIT */
#include "platform/sdscope.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

#if __has_include(<systemd/sd-bus.h>)
#include <systemd/sd-bus.h>

#define SD_SYMS(X)                                                                                 \
        X(sd_bus_open_system)                                                                      \
        X(sd_bus_new)                                                                              \
        X(sd_bus_set_address)                                                                      \
        X(sd_bus_set_bus_client)                                                                   \
        X(sd_bus_start)                                                                            \
        X(sd_bus_flush_close_unref)                                                                \
        X(sd_bus_message_new_method_call)                                                          \
        X(sd_bus_message_append)                                                                   \
        X(sd_bus_message_read)                                                                     \
        X(sd_bus_message_unref)                                                                    \
        X(sd_bus_call)                                                                             \
        X(sd_bus_match_signal)                                                                     \
        X(sd_bus_slot_unref)                                                                       \
        X(sd_bus_process)                                                                          \
        X(sd_bus_wait)                                                                             \
        X(sd_bus_error_free)

#define SD_DEFINE(name) static typeof(name) *sym_##name;
SD_SYMS(SD_DEFINE)
#undef SD_DEFINE

static int loaded; /* 0 not tried, 1 loaded, -errno failed */

static int sd_load(void)
{
        void *h, *p;

        if (loaded)
                return loaded > 0 ? 0 : loaded;
        h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        loaded = -ELIBACC;
        if (!h)
                return loaded;
#define SD_RESOLVE(name)                                                                           \
        p = dlsym(h, #name);                                                                       \
        if (!p) {                                                                                  \
                dlclose(h);                                                                        \
                return loaded;                                                                     \
        }                                                                                          \
        *(void **)&sym_##name = p;
        SD_SYMS(SD_RESOLVE)
#undef SD_RESOLVE
        loaded = 1;
        return 0;
}

struct job_wait {
        const char *path; /* our job's object path */
        bool done;
        char result[32];
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
        struct job_wait *w = userdata;
        const char *path = NULL, *unit = NULL, *result = NULL;
        uint32_t id;

        (void)e;
        if (sym_sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0 || !w->path ||
            strcmp(path, w->path) != 0)
                return 0;
        w->done = true;
        snprintf(w->result, sizeof(w->result), "%s", result);
        return 0;
}

/* The user's bus: $DBUS_SESSION_BUS_ADDRESS, else /run/user/UID/bus (a
 * runuser or a User= service has no XDG_RUNTIME_DIR). */
static int open_user_bus(sd_bus **ret)
{
        const char *env = getenv("DBUS_SESSION_BUS_ADDRESS");
        char addr[128];
        sd_bus *b = NULL;
        int r = env && *env ? snprintf(addr, sizeof(addr), "%s", env)
                            : snprintf(addr, sizeof(addr), "unix:path=/run/user/%u/bus",
                                       (unsigned)getuid());

        if (r >= (int)sizeof(addr))
                return -ENAMETOOLONG;
        r = sym_sd_bus_new(&b);
        if (r >= 0)
                r = sym_sd_bus_set_address(b, addr);
        if (r >= 0)
                r = sym_sd_bus_set_bus_client(b, 1);
        if (r >= 0)
                r = sym_sd_bus_start(b);
        if (r < 0) {
                sym_sd_bus_flush_close_unref(b);
                return r;
        }
        *ret = b;
        return 0;
}

/* StartTransientUnit(name, "fail", [PIDs, Delegate], []). */
static int start_call(sd_bus *b, const char *unit, pid_t pid, sd_bus_message **ret_reply,
                      sd_bus_error *err)
{
        sd_bus_message *m = NULL;
        int r = sym_sd_bus_message_new_method_call(
            b, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager", "StartTransientUnit");

        /* an array's count first, then its items (sd_bus_message_append(3)) */
        if (r >= 0)
                r = sym_sd_bus_message_append(m, "ssa(sv)a(sa(sv))", unit, "fail", 3, "PIDs", "au",
                                              1, (uint32_t)pid, "Delegate", "b", 1, "Description",
                                              "s", "buildtel run: the build's delegated cgroup", 0);
        if (r >= 0)
                r = sym_sd_bus_call(b, m, 20 * 1000 * 1000, err, ret_reply);
        sym_sd_bus_message_unref(m);
        return r;
}

static int wait_job(sd_bus *b, struct job_wait *w)
{
        double deadline = now_monotonic() + 20.0; /* systemd under load, or a slow guest */

        while (!w->done) {
                int r = sym_sd_bus_process(b, NULL);

                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (now_monotonic() > deadline)
                        return -ETIMEDOUT;
                r = sym_sd_bus_wait(b, 200 * 1000);
                if (r < 0 && r != -EINTR)
                        return r;
        }
        return strcmp(w->result, "done") == 0 ? 0 : -EIO;
}

static void say(char *why, size_t cap, const char *what, const sd_bus_error *e, int r)
{
        if (cap == 0)
                return;
        if (snprintf(why, cap, "%s: %s", what, e && e->message ? e->message : strerror(-r)) < 0)
                why[0] = '\0';
}

int sdscope_start(bool user, const char *unit, pid_t pid, char *why, size_t cap)
{
        sd_bus *b = NULL;
        sd_bus_slot *slot = NULL;
        sd_bus_message *reply = NULL;
        sd_bus_error err = SD_BUS_ERROR_NULL;
        struct job_wait w = {0};
        int r;

        if (cap)
                why[0] = '\0';
        r = sd_load();
        if (r < 0) {
                say(why, cap, "libsystemd.so.0 is not installed", NULL, r);
                return r;
        }
        r = user ? open_user_bus(&b) : sym_sd_bus_open_system(&b);
        if (r < 0) {
                say(why, cap, user ? "no user manager bus" : "no system bus", NULL, r);
                return r;
        }
        /* Subscribed before the call: the job may finish before it returns. */
        r = sym_sd_bus_match_signal(b, &slot, "org.freedesktop.systemd1",
                                    "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                    "JobRemoved", on_job_removed, &w);
        if (r >= 0) {
                r = start_call(b, unit, pid, &reply, &err);
                if (r < 0)
                        say(why, cap, "StartTransientUnit", &err, r);
        } else {
                say(why, cap, "cannot subscribe to JobRemoved", NULL, r);
        }
        if (r >= 0)
                r = sym_sd_bus_message_read(reply, "o", &w.path);
        if (r >= 0) {
                r = wait_job(b, &w);
                if (r == -EIO)
                        snprintf(why, cap, "the scope's job ended '%s'", w.result);
                else if (r < 0)
                        say(why, cap, "waiting for the scope's job", NULL, r);
        }
        sym_sd_bus_error_free(&err);
        sym_sd_bus_message_unref(reply);
        sym_sd_bus_slot_unref(slot);
        sym_sd_bus_flush_close_unref(b);
        return r < 0 ? r : 0;
}

#else /* built without <systemd/sd-bus.h> */

int sdscope_start(bool user, const char *unit, pid_t pid, char *why, size_t cap)
{
        (void)user;
        (void)unit;
        (void)pid;
        if (cap && snprintf(why, cap, "buildtel was built without sd-bus (libsystemd-dev)") < 0)
                why[0] = '\0';
        return -EOPNOTSUPP;
}
#endif
