/* SPDX-License-Identifier: MIT */
/* Finding BuildKit's exec cgroups (bkexec.h): the processes walked, the
 * directories above their cgroups listed, each exec's first process and
 * its bundle's args; and the parsers of what it reads. */
#include "platform/bkexec.h"
#include "platform/bkexec-int.h"

#include <dirent.h>
#include <jansson.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

static int hier_path(const struct bkexec *b, int h, const char *path, char *out, size_t cap)
{
        const char *mnt = b->mounts.mnt[h], *root = b->mounts.root[h];
        size_t rl = strlen(root);
        int n;

        if (!mnt[0] || !path[0])
                return -ENOENT;
        if (rl > 1 && strncmp(path, root, rl) == 0 && (path[rl] == '/' || !path[rl]))
                path += rl;
        else if (rl > 1)
                return -ENOENT; /* outside what this mount shows */
        n = snprintf(out, cap, "%s%s", mnt[0] == '/' ? mnt + 1 : mnt, path);
        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int bkexec_read_mounts(struct bkexec *b)
{
        _cleanup_free_ char *mi = NULL;
        size_t len;
        int r;

        if (b->mounts_read)
                return 0;
        r = read_file_at(b->root_fd, "proc/self/mountinfo", 1 << 20, &mi, &len);
        if (r >= 0)
                r = cgroup_mounts_parse(mi, len, &b->mounts);
        if (r >= 0)
                b->mounts_read = true;
        return r;
}

/* The hierarchy whose directory is listed: v1 memory when mounted, else v2. */
static int primary(const struct bkexec *b, size_t parent)
{
        return b->parents[parent][CG_H_MEMORY][0] ? CG_H_MEMORY : CG_H_V2;
}

static int walk_cb(const struct pidstat *ps, void *userdata)
{
        struct bkexec *b = userdata;
        struct scanproc *s;

        if (b->nscan >= SCAN_MAX)
                return 0;
        s = &b->scan[b->nscan++];
        s->pid = ps->pid;
        s->ppid = ps->ppid;
        memcpy(s->comm, ps->comm, sizeof(s->comm) - 1);
        s->comm[sizeof(s->comm) - 1] = '\0';
        return 0;
}

static const struct scanproc *scan_find(const struct bkexec *b, long pid)
{
        return bsearch(&pid, b->scan, b->nscan, sizeof(*b->scan), procfs_cmp_pid);
}

static bool is_runtime(const char *comm)
{
        return strcmp(comm, "runc") == 0 || strcmp(comm, "crun") == 0 ||
               strcmp(comm, "buildkit-runc") == 0;
}

static bool is_daemon(const char *comm)
{
        return strcmp(comm, "dockerd") == 0 || strcmp(comm, "buildkitd") == 0 ||
               strcmp(comm, "containerd") == 0;
}

/* Root's, or the user's buildtel runs as (a rootless daemon: that user can
 * fool only their own buildtel). */
static bool uid_trusted(const struct bkexec *b, uint64_t uid)
{
        return uid == 0 || uid == (uint64_t)b->uid;
}

/* A file of type of a trusted user's that no one else may write. */
static bool stat_trusted(const struct bkexec *b, const struct stat *st, mode_t type)
{
        return (st->st_mode & S_IFMT) == type && uid_trusted(b, st->st_uid) &&
               !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static ssize_t read_at(int dfd, const char *name, char *buf, size_t cap)
{
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);

        return fd < 0 ? -errno : read_full(fd, buf, cap);
}

int bkexec_status_uids_parse(const char *buf, size_t len, uint64_t ret[4])
{
        const char *p = memmem(buf, len, "\nUid:", 5), *end = buf + len;
        uint64_t u[4];

        if (!p)
                return -EINVAL;
        p += 5;
        for (int k = 0; k < 4; k++) {
                skip_spaces(&p, end);
                if (parse_u64(&p, end, &u[k]) < 0)
                        return -EINVAL;
        }
        memcpy(ret, u, sizeof(u));
        return 0;
}

/* pid is of kind (its comm, which proves nothing alone), all its uids and
 * its executable trusted; read through one proc/PID fd, so a pid reused
 * meanwhile reads as gone. Its parent into *ret_ppid. */
static bool proc_trusted(struct bkexec *b, long pid, bool (*kind)(const char *), long *ret_ppid)
{
        char path[32], buf[1024];
        _cleanup_close_ int dfd = -1;
        struct pidstat ps;
        struct stat st;
        uint64_t uid[4];
        ssize_t n;
        int m = snprintf(path, sizeof(path), "proc/%ld", pid);

        if (pid <= 0 || m < 0 || (size_t)m >= sizeof(path))
                return false;
        dfd = openat(b->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        n = dfd < 0 ? -1 : read_at(dfd, "stat", buf, sizeof(buf));
        if (n <= 0 || pidstat_parse(buf, (size_t)n, &ps) < 0 || !kind(ps.comm))
                return false;
        n = read_at(dfd, "status", buf, sizeof(buf));
        if (n <= 0 || bkexec_status_uids_parse(buf, (size_t)n, uid) < 0)
                return false;
        for (int k = 0; k < 4; k++)
                if (!uid_trusted(b, uid[k]))
                        return false;
        /* only root sees a root process's exe: another user's buildtel has
         * the uids alone */
        if (fstatat(dfd, "exe", &st, 0) < 0 ? !(errno == EACCES && b->uid != 0)
                                            : !stat_trusted(b, &st, S_IFREG))
                return false;
        *ret_ppid = ps.ppid;
        return true;
}

/* A runtime started by the real daemon: trusted, and its parent a trusted
 * daemon. Any user can run processes named dockerd and runc. */
static bool runtime_trusted(struct bkexec *b, long pid)
{
        long ppid, gp;

        return proc_trusted(b, pid, is_runtime, &ppid) && proc_trusted(b, ppid, is_daemon, &gp);
}

/* name under dfd, a trusted file of type (S_IFDIR, S_IFREG), opened so
 * that a FIFO or a device never blocks and a symlink is not followed.
 * The fd, or -errno (-EPERM: not trusted). */
static int open_trusted(const struct bkexec *b, int dfd, const char *name, int flags, mode_t type)
{
        struct stat st;
        int fd =
            openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | flags);

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !stat_trusted(b, &st, type)) {
                close(fd);
                return -EPERM;
        }
        return fd;
}

/* The directory above an exec's own cgroup, per hierarchy. One the process
 * did not name usably (caught mid-move: CI saw every step's memory read
 * nothing) is looked up by its other path, which runc makes the same in
 * each; a parent known already gets what it lacked. */
static void add_parent(struct bkexec *b, const struct cgroup_self *cs)
{
        char par[_CG_H_MAX][CG_PATH_MAX] = {{0}}, leaf[CG_PATH_MAX];
        const char *ref = NULL;
        size_t i;

        for (int h = 0; h < _CG_H_MAX; h++) {
                const char *slash = strrchr(cs->path[h], '/');
                size_t l = slash ? (size_t)(slash - cs->path[h]) : 0;

                if (!slash || l == 0 || hier_path(b, h, cs->path[h], par[h], sizeof(par[h])) < 0) {
                        par[h][0] = '\0';
                        continue;
                }
                *strrchr(par[h], '/') = '\0';
                if (!ref && (h == CG_H_MEMORY || h == CG_H_V2))
                        ref = cs->path[h];
        }
        if (!ref)
                return;
        for (int h = 0; h < _CG_H_MAX; h++)
                if (!par[h][0] && hier_path(b, h, ref, leaf, sizeof(leaf)) >= 0 &&
                    faccessat(b->root_fd, leaf, F_OK, 0) >= 0) {
                        memcpy(par[h], leaf, sizeof(leaf));
                        *strrchr(par[h], '/') = '\0';
                }
        for (i = 0; i < b->nparents; i++)
                if ((par[CG_H_MEMORY][0] &&
                     strcmp(b->parents[i][CG_H_MEMORY], par[CG_H_MEMORY]) == 0) ||
                    (par[CG_H_V2][0] && strcmp(b->parents[i][CG_H_V2], par[CG_H_V2]) == 0))
                        break;
        if (i == b->nparents) {
                if (b->nparents == BKEXEC_PARENTS_MAX)
                        return;
                memset(b->parents[b->nparents++], 0, sizeof(par));
        }
        for (int h = 0; h < _CG_H_MAX; h++)
                if (!b->parents[i][h][0])
                        memcpy(b->parents[i][h], par[h], sizeof(par[h]));
}

int bkexec_exec_of(struct bkexec *b, long pid, char id[EXEC_ID_MAX + 1])
{
        struct cgroup_self cs;
        char dir[CG_PATH_MAX];
        struct stat it, me;
        const char *leaf;
        bool under = false;
        int h;

        if (pid > 0) {
                if (cgroup_self_read(b->root_fd, pid, &cs) < 0 ||
                    snprintf(dir, sizeof(dir), "proc/%ld/ns/pid", pid) >= (int)sizeof(dir))
                        return -1;
                h = cs.path[CG_H_MEMORY][0] ? CG_H_MEMORY : CG_H_V2;
                leaf = strrchr(cs.path[h], '/');
                if (!leaf || !leaf[1] || strlen(leaf + 1) > EXEC_ID_MAX)
                        return -1;
                memcpy(id, leaf + 1, strlen(leaf));
                /* a step runs in a pid namespace of its own */
                if (fstatat(b->root_fd, dir, &it, 0) < 0 ||
                    fstatat(b->root_fd, "proc/self/ns/pid", &me, 0) < 0)
                        return -1;
                if (hier_path(b, h, cs.path[h], dir, sizeof(dir)) < 0)
                        dir[0] = '\0';
                else
                        *strrchr(dir, '/') = '\0';
                for (size_t i = 0; i < b->nparents && dir[0]; i++)
                        under |= strcmp(dir, b->parents[i][h]) == 0;
                /* outside every exec directory: none, unless one may be new */
                if (!under && ((b->nparents && !b->hunt) || it.st_ino == me.st_ino))
                        return -1;
        }
        for (size_t k = 0; k < b->nfacts; k++)
                if (strcmp(b->facts[k].id, id) == 0)
                        return 1;
        return 0;
}

/* Still in its runtime's cgroup where directories are listed (v1 memory,
 * v2): not moved yet, and what is above is the daemon's slice, no
 * directory of execs. */
static bool half_moved(const struct cgroup_self *cs, const struct cgroup_self *runtime)
{
        static const int listed[] = {CG_H_MEMORY, CG_H_V2};

        for (size_t i = 0; i < ARRAY_SIZE(listed); i++)
                if (cs->path[listed[i]][0] &&
                    strcmp(cs->path[listed[i]], runtime->path[listed[i]]) == 0)
                        return true;
        return false;
}

/* Walk every process for the first processes of execs. One caught while
 * runc moves it is left for the next tick's walk. */
void bkexec_walk(struct bkexec *b, struct procfs *p)
{
        b->nscan = 0;
        b->walk_soon = false;
        if (procfs_foreach_pid(p, walk_cb, b) < 0)
                return;
        qsort(b->scan, b->nscan, sizeof(*b->scan), procfs_cmp_pid);
        for (size_t i = 0; i < b->nscan; i++) {
                const struct scanproc *par = scan_find(b, b->scan[i].ppid), *gp;
                struct cgroup_self cs, rt;

                if (!par || !is_runtime(par->comm))
                        continue;
                gp = scan_find(b, par->ppid);
                if (!gp || !is_daemon(gp->comm) || !runtime_trusted(b, par->pid))
                        continue;
                if (cgroup_self_read(b->root_fd, b->scan[i].pid, &cs) < 0 ||
                    cgroup_self_read(b->root_fd, par->pid, &rt) < 0)
                        continue;
                if (half_moved(&cs, &rt))
                        b->walk_soon = true;
                else
                        add_parent(b, &cs);
        }
}

/* By name alone: BuildKit's exec ids are unique, one exec under two listings is one. */
static struct ex *ex_find(struct bkexec *b, const char *name)
{
        for (size_t i = 0; i < b->nex; i++)
                if (strcmp(b->ex[i].id, name) == 0)
                        return &b->ex[i];
        return NULL;
}

/* The exec's directories not open yet: runc makes them one hierarchy after
 * another (CI saw a step's v1 memory directory come after its unified one,
 * and its memory read nothing). A directory found now drops the reads that
 * found no file before, so they are opened anew. */
static void ex_open_dirs(struct bkexec *b, struct ex *e, size_t parent, const char *name)
{
        bool opened = false;
        size_t k = 0;

        for (int h = 0; h < _CG_H_MAX; h++) {
                char path[CG_PATH_MAX + 80];
                int n;

                /* its own parent first, then any other: exec ids are unique */
                for (size_t j = 0; j <= b->nparents && e->dfd[h] < 0; j++) {
                        size_t pi = j == 0 ? parent : j - 1;

                        if ((j > 0 && pi == parent) || !b->parents[pi][h][0])
                                continue;
                        n = snprintf(path, sizeof(path), "%s/%s", b->parents[pi][h], name);
                        if (n > 0 && (size_t)n < sizeof(path))
                                e->dfd[h] =
                                    openat(b->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                }
                opened |= e->dfd[h] >= 0;
        }
        if (!opened)
                return;
        for (size_t i = 0; i < e->nkept; i++)
                if (e->kept[i].fd >= 0 || e->kept[i].h < 0)
                        e->kept[k++] = e->kept[i];
        e->nkept = k;
}

/* A new exec cgroup parent/name: its directory in each hierarchy. */
static struct ex *ex_add(struct bkexec *b, size_t parent, const char *name)
{
        struct ex *e;

        if (b->nex >= BKEXEC_ALIVE_MAX || strlen(name) > EXEC_ID_MAX)
                return NULL;
        e = &b->ex[b->nex];
        memset(e, 0, sizeof(*e));
        for (int h = 0; h < _CG_H_MAX; h++)
                e->dfd[h] = -1;
        ex_open_dirs(b, e, parent, name);
        if (e->dfd[primary(b, parent)] < 0) {
                bkexec_ex_close(e);
                return NULL;
        }
        e->parent = (int)parent;
        memcpy(e->id, name, strlen(name) + 1);
        b->nex++;
        return e;
}

/* List every known directory: new execs are added, those whose cgroup is
 * gone are marked (ours keep their figures, others are dropped). */
void bkexec_list_parents(struct bkexec *b)
{
        for (size_t i = 0; i < b->nex; i++)
                b->ex[i].seen_now = false;
        for (size_t pi = 0; pi < b->nparents; pi++) {
                DIR *d = opendir_at(b->root_fd, b->parents[pi][primary(b, pi)]);
                struct dirent *de;

                if (!d)
                        continue;
                while ((de = readdir(d))) {
                        struct ex *e;

                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        e = ex_find(b, de->d_name);
                        if (e)
                                ex_open_dirs(b, e, (size_t)e->parent, e->id);
                        if (!e)
                                e = ex_add(b, pi, de->d_name);
                        if (e)
                                e->seen_now = true;
                }
                closedir(d);
        }
}

/* Pids of e's cgroup.procs into pids (at most cap). Count, or -errno. */
int bkexec_ex_procs(struct bkexec *b, struct ex *e, long *pids, size_t cap)
{
        size_t np = 0;
        ssize_t n;

        if (e->dfd[CG_H_V2] >= 0) {
                n = bkexec_kread(b, e, CG_H_V2, "cgroup.procs");
        } else {
                /* v1's list is cached per open file while it is read at
                 * least once a second: a kept fd would never see a new
                 * process, so open it each time */
                _cleanup_close_ int fd =
                    e->dfd[CG_H_MEMORY] >= 0
                        ? openat(e->dfd[CG_H_MEMORY], "cgroup.procs", O_RDONLY | O_CLOEXEC)
                        : -1;
                n = fd >= 0 ? read(fd, b->buf, sizeof(b->buf) - 1) : -ENOENT;
                if (fd >= 0 && n < 0)
                        n = -errno;
        }
        if (n < 0)
                return (int)n;
        if (cgroup_procs_parse(b->buf, (size_t)n, pids, cap, &np) < 0)
                return -EINVAL;
        return (int)MIN(np, cap);
}

/* The command runc was given: its bundle's config.json ("runc run --bundle
 * DIR"), whole even after a shell exec'd its last command; read only from
 * a trusted runc and trusted files. The argv's length, or -errno; e->xraw
 * gets it with its variables replaced. */
static int bundle_args(struct bkexec *b, struct procfs *p, long runc_pid, struct ex *e)
{
        char rc[4096];
        ssize_t n;

        if (!runtime_trusted(b, runc_pid))
                return -EPERM;
        n = procfs_cmdline(p, runc_pid, rc, sizeof(rc) - 1);
        if (n <= 0)
                return -ENOENT;
        rc[n] = '\0';
        for (ssize_t i = 0; i < n;) {
                const char *a = rc + i;
                _cleanup_close_ int dfd = -1, fd = -1;

                i += (ssize_t)strlen(a) + 1;
                if (strcmp(a, "--bundle") != 0 && strcmp(a, "-b") != 0)
                        continue;
                if (i >= n || rc[i] != '/')
                        return -EINVAL;
                dfd = open_trusted(b, b->root_fd, rc + i + 1, O_DIRECTORY, S_IFDIR);
                fd = dfd < 0 ? dfd : open_trusted(b, dfd, "config.json", 0, S_IFREG);
                n = fd < 0 ? fd : read_full(fd, b->buf, sizeof(b->buf) - 1);
                if (n <= 0)
                        return -ENOENT;
                e->xrawlen = (size_t)MAX(
                    bkexec_bundle_args_parse(b->buf, (size_t)n, true, e->xraw, sizeof(e->xraw)), 0);
                return bkexec_bundle_args_parse(b->buf, (size_t)n, false, e->raw, sizeof(e->raw));
        }
        return -ENOENT;
}

/* The first process of an undecided exec: its start and raw cmdline. */
void bkexec_ex_identify(struct bkexec *b, struct ex *e, struct procfs *p)
{
        long pids[16];
        int n = bkexec_ex_procs(b, e, pids, ARRAY_SIZE(pids));
        struct pidstat ps[16];
        bool ok[16] = {false};

        for (int i = 0; i < n; i++)
                ok[i] = procfs_pidstat(p, pids[i], &ps[i]) >= 0;
        for (int i = 0; i < n; i++) {
                bool child = false;
                ssize_t l;

                for (int k = 0; k < n && ok[i]; k++)
                        child |= ok[k] && ps[i].ppid == ps[k].pid;
                if (!ok[i] || child)
                        continue;
                e->xrawlen = 0;
                l = bundle_args(b, p, ps[i].ppid, e);
                if (l <= 0)
                        l = procfs_cmdline(p, pids[i], e->raw, sizeof(e->raw));
                if (l <= 0)
                        continue;
                e->rawlen = (size_t)l;
                e->first_pid = pids[i];
                e->start_ticks = ps[i].starttime;
                return;
        }
}

int bkexec_netdev_parse(const char *buf, size_t len, uint64_t *ret_rx, uint64_t *ret_tx)
{
        const char *p = buf, *end = buf + len;
        uint64_t rx = 0, tx = 0;
        int lines = 0;

        for (const char *eol; p < end; p = next_line(eol, end)) {
                const char *colon, *name = p;
                uint64_t v[9];

                eol = line_end(p, end);
                colon = memchr(p, ':', (size_t)(eol - p));
                if (!colon)
                        continue;
                p = colon + 1;
                for (int k = 0; k < 9; k++) {
                        skip_spaces(&p, eol);
                        if (parse_u64(&p, eol, &v[k]) < 0)
                                return -EINVAL;
                }
                lines++;
                while (name < colon && *name == ' ')
                        name++;
                if ((size_t)(colon - name) != 2 || memcmp(name, "lo", 2) != 0) {
                        rx += v[0];
                        tx += v[8];
                }
        }
        if (!lines && len > 0 && !memmem(buf, len, "Inter-", 6))
                return -EINVAL;
        *ret_rx = rx;
        *ret_tx = tx;
        return 0;
}

int bkexec_bundle_args_parse(const char *buf, size_t len, bool expand, char *out, size_t cap)
{
        json_t *root = json_loadb(buf, len, 0, NULL), *proc = json_object_get(root, "process");
        json_t *env = json_object_get(proc, "env");
        int n = json_argv(json_object_get(proc, "args"), expand ? env : NULL, out, cap);

        json_decref(root);
        return n;
}
