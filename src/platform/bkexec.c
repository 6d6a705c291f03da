/* SPDX-License-Identifier: MIT */
#include "platform/bkexec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/cgroup-top.h"
#include "platform/kmsg.h"
#include "platform/cgroup.h"
#include "platform/procfs.h"
#include "util/macro.h"
#include "util/util.h"

#define RAW_MAX 1024    /* bytes of a first process's cmdline kept to match */
#define SCAN_MAX 32768  /* processes of one walk */
#define SCAN_EVERY 10   /* discovering ticks between walks once a directory is known */
#define VICTIM_TRIES 20 /* polls to find which process an OOM kill took */
#define KEPT_MAX 16     /* files of one exec kept open for pread */
#define WALK_POLL_S 0.5 /* between walks from bkexec_poll while no directory is known */
#define OOM_KEPT_MAX 8  /* the kernel's OOM records kept for an exec not decided yet */
#define OOM_KEPT_S 60.0 /* ... and for how long */

enum ex_state { EX_PENDING, EX_OURS, EX_OTHER };

struct ex {
        int dfd[_CG_H_MAX]; /* the exec cgroup in each hierarchy, -1 none */
        struct kept {
                const char *name; /* a literal: compared by address */
                int h, fd;        /* fd -1: absent there */
        } kept[KEPT_MAX];
        size_t nkept;
        int parent; /* index in parents[] */
        char id[EXEC_ID_MAX + 1];
        enum ex_state state;
        bool alive, seen_now;
        uint64_t start_ticks; /* its first process's start, ticks after boot; 0 unknown */
        long first_pid;
        char raw[RAW_MAX];
        size_t rawlen;
        struct proctop top, last_top;
        uint64_t oom; /* the kernel's count as last read */
        int victim_tries;
        size_t fact; /* index in facts[] when ours */
};

struct scanproc {
        long pid, ppid;
        char comm[16];
};

struct bkexec {
        struct bkexec_config cfg;
        int root_fd;
        struct cgroup_mounts mounts;
        bool mounts_read;
        char (*parents)[_CG_H_MAX][CG_PATH_MAX]; /* per hierarchy, relative to root_fd */
        size_t nparents;
        struct ex ex[BKEXEC_ALIVE_MAX];
        size_t nex;
        struct exec_fact *facts;
        size_t nfacts, others, dropped;
        long pids[BKEXEC_ALIVE_MAX * 4];
        unsigned char owner[BKEXEC_ALIVE_MAX * 4];
        size_t npids;
        uint64_t self_start;
        uid_t uid; /* geteuid(): its processes and files are trusted, as root's are */
        double page_bytes, hz;
        unsigned ticks_since_walk;
        double last_walk;
        bool hunt; /* bkexec_hunt() */
        bool walked;
        int kmsg_fd;          /* the kernel's log, for OOM kills of execs already gone */
        uint32_t *kmsg_kills; /* per fact: kills the log named */
        struct oom_kept {
                struct kmsg_oom o;
                double at;        /* when read */
        } oom_kept[OOM_KEPT_MAX]; /* records of no exec of ours yet, oldest first */
        size_t noom_kept;
        struct kmsg_oom last_oom; /* the newest applied; pid 0: none */
        struct scanproc *scan;
        size_t nscan;
        char buf[65536];
};

static void ex_close(struct ex *e)
{
        for (size_t i = 0; i < e->nkept; i++)
                if (e->kept[i].fd >= 0)
                        close(e->kept[i].fd);
        e->nkept = 0;
        for (int h = 0; h < _CG_H_MAX; h++)
                if (e->dfd[h] >= 0) {
                        close(e->dfd[h]);
                        e->dfd[h] = -1;
                }
}

int bkexec_new(const struct bkexec_config *cfg, struct bkexec **ret)
{
        struct procfs_identity id;
        struct bkexec *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        b->cfg = *cfg;
        b->parents = calloc(BKEXEC_PARENTS_MAX, sizeof(*b->parents));
        b->facts = calloc(BKEXEC_OURS_MAX, sizeof(*b->facts));
        b->scan = calloc(SCAN_MAX, sizeof(*b->scan));
        b->kmsg_kills = calloc(BKEXEC_OURS_MAX, sizeof(*b->kmsg_kills));
        b->root_fd = open(cfg->root ? cfg->root : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        b->kmsg_fd = -1;
        b->last_walk = -1e9;
        if (!b->parents || !b->facts || !b->scan || !b->kmsg_kills || b->root_fd < 0) {
                int e = b->root_fd < 0 ? -errno : -ENOMEM;
                bkexec_free(b);
                return e;
        }
        /* from now on only: root reads it; without it, the cgroups' own counts */
        b->kmsg_fd = openat(b->root_fd, "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (b->kmsg_fd >= 0)
                (void)lseek(b->kmsg_fd, 0, SEEK_END);
        if (procfs_self_identity(b->root_fd, &id) >= 0)
                b->self_start = id.starttime;
        b->uid = geteuid();
        b->page_bytes = (double)sysconf(_SC_PAGESIZE);
        b->hz = (double)sysconf(_SC_CLK_TCK);
        *ret = b;
        return 0;
}

void bkexec_free(struct bkexec *b)
{
        if (!b)
                return;
        for (size_t i = 0; i < b->nex; i++)
                ex_close(&b->ex[i]);
        if (b->root_fd >= 0)
                close(b->root_fd);
        if (b->kmsg_fd >= 0)
                close(b->kmsg_fd);
        free(b->kmsg_kills);
        free(b->parents);
        free(b->facts);
        free(b->scan);
        free(b);
}

/* name in e's cgroup of hierarchy h (h < 0: net/dev of its first
 * process), on an fd kept open from the first read (a cgroup file is
 * regenerated on each pread at 0; an fd opened once costs a fifth). */
static ssize_t kread(struct bkexec *b, struct ex *e, int h, const char *name)
{
        struct kept *k = NULL;
        ssize_t n;

        for (size_t i = 0; i < e->nkept; i++)
                if (e->kept[i].name == name && e->kept[i].h == h) {
                        k = &e->kept[i];
                        break;
                }
        if (!k) {
                if (e->nkept >= KEPT_MAX)
                        return -ENOSPC;
                k = &e->kept[e->nkept++];
                k->name = name;
                k->h = h;
                if (h >= 0) {
                        k->fd = e->dfd[h] >= 0 ? openat(e->dfd[h], name, O_RDONLY | O_CLOEXEC) : -1;
                } else {
                        char path[64];
                        int m = snprintf(path, sizeof(path), "proc/%ld/net/dev", e->first_pid);
                        k->fd = m > 0 && (size_t)m < sizeof(path) && e->first_pid > 0
                                    ? openat(b->root_fd, path, O_RDONLY | O_CLOEXEC)
                                    : -1;
                }
        }
        if (k->fd < 0)
                return -ENOENT;
        n = pread(k->fd, b->buf, sizeof(b->buf) - 1, 0);
        if (n < 0)
                return -errno;
        b->buf[n] = '\0';
        return n;
}

static double kread_u64(struct bkexec *b, struct ex *e, int h, const char *name)
{
        ssize_t n = kread(b, e, h, name);
        uint64_t v;

        return n > 0 && cgroup_u64_parse(b->buf, (size_t)n, &v) >= 0 && v != UINT64_MAX ? (double)v
                                                                                        : NAN;
}

static double kread_key(struct bkexec *b, struct ex *e, int h, const char *name, const char *key)
{
        ssize_t n = kread(b, e, h, name);
        uint64_t v;

        return n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, key, &v) >= 0 ? (double)v : NAN;
}

/* Two keys of one file read once; false when either is missing. */
static bool kread_2keys(struct bkexec *b, struct ex *e, int h, const char *name, const char *k1,
                        const char *k2, double *v1, double *v2)
{
        ssize_t n = kread(b, e, h, name);
        uint64_t a, c;

        if (n <= 0 || cgroup_keyed_parse(b->buf, (size_t)n, k1, &a) < 0 ||
            cgroup_keyed_parse(b->buf, (size_t)n, k2, &c) < 0)
                return false;
        *v1 = (double)a;
        *v2 = (double)c;
        return true;
}

/* "/sys/fs/cgroup/memory" + path inside the hierarchy, relative to root_fd. */
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

static int read_mounts(struct bkexec *b)
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

static int cmp_scan(const void *a, const void *b)
{
        const struct scanproc *x = a, *y = b;

        return (x->pid > y->pid) - (x->pid < y->pid);
}

static const struct scanproc *scan_find(const struct bkexec *b, long pid)
{
        struct scanproc key = {.pid = pid};

        return bsearch(&key, b->scan, b->nscan, sizeof(*b->scan), cmp_scan);
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

/* pid is a process of kind (by its comm), all of whose uids are trusted,
 * running a trusted executable: its comm alone proves nothing (prctl,
 * argv[0]). Read through one proc/PID directory fd, so that a pid reused
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

/* A directory holding exec cgroups, from an exec's own cgroup per
 * hierarchy: what is above its leaf. */
static void add_parent(struct bkexec *b, const struct cgroup_self *cs)
{
        char par[_CG_H_MAX][CG_PATH_MAX];

        memset(par, 0, sizeof(par));
        for (int h = 0; h < _CG_H_MAX; h++) {
                const char *slash = strrchr(cs->path[h], '/');
                size_t l = slash ? (size_t)(slash - cs->path[h]) : 0;

                if (!slash || l == 0 || hier_path(b, h, cs->path[h], par[h], sizeof(par[h])) < 0) {
                        par[h][0] = '\0';
                        continue;
                }
                *strrchr(par[h], '/') = '\0';
        }
        if (!par[CG_H_MEMORY][0] && !par[CG_H_V2][0])
                return;
        /* one per listed directory: a process caught while runc moves it
         * shows other paths in the other hierarchies */
        {
                int h = par[CG_H_MEMORY][0] ? CG_H_MEMORY : CG_H_V2;
                for (size_t i = 0; i < b->nparents; i++)
                        if (strcmp(b->parents[i][h], par[h]) == 0)
                                return;
        }
        if (b->nparents < BKEXEC_PARENTS_MAX)
                memcpy(b->parents[b->nparents++], par, sizeof(par));
}

/* Walk every process for the first processes of execs. */
static void walk(struct bkexec *b, struct procfs *p)
{
        b->nscan = 0;
        if (procfs_foreach_pid(p, walk_cb, b) < 0)
                return;
        qsort(b->scan, b->nscan, sizeof(*b->scan), cmp_scan);
        for (size_t i = 0; i < b->nscan; i++) {
                const struct scanproc *par = scan_find(b, b->scan[i].ppid), *gp;
                char path[64];
                _cleanup_free_ char *buf = NULL;
                struct cgroup_self cs;
                size_t len;
                int n;

                if (!par || !is_runtime(par->comm))
                        continue;
                gp = scan_find(b, par->ppid);
                if (!gp || !is_daemon(gp->comm) || !runtime_trusted(b, par->pid))
                        continue;
                n = snprintf(path, sizeof(path), "proc/%ld/cgroup", b->scan[i].pid);
                if (n < 0 || (size_t)n >= sizeof(path) ||
                    read_file_at(b->root_fd, path, 1 << 16, &buf, &len) < 0 ||
                    cgroup_self_parse(buf, len, &cs) < 0)
                        continue;
                add_parent(b, &cs);
        }
}

static struct ex *ex_find(struct bkexec *b, size_t parent, const char *name)
{
        (void)parent; /* BuildKit's exec ids are unique: one exec under two listings is one */
        for (size_t i = 0; i < b->nex; i++)
                if (strcmp(b->ex[i].id, name) == 0)
                        return &b->ex[i];
        return NULL;
}

/* A new exec cgroup parent/name: its directory in each hierarchy. */
static struct ex *ex_add(struct bkexec *b, size_t parent, const char *name)
{
        struct ex *e;

        if (b->nex >= BKEXEC_ALIVE_MAX || strlen(name) > EXEC_ID_MAX)
                return NULL;
        e = &b->ex[b->nex];
        memset(e, 0, sizeof(*e));
        for (int h = 0; h < _CG_H_MAX; h++) {
                char path[CG_PATH_MAX + 80];
                int n;

                e->dfd[h] = -1;
                if (!b->parents[parent][h][0])
                        continue;
                n = snprintf(path, sizeof(path), "%s/%s", b->parents[parent][h], name);
                if (n > 0 && (size_t)n < sizeof(path))
                        e->dfd[h] = openat(b->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (e->dfd[primary(b, parent)] < 0) {
                ex_close(e);
                return NULL;
        }
        e->parent = (int)parent;
        memcpy(e->id, name, strlen(name) + 1);
        e->alive = true;
        b->nex++;
        return e;
}

/* List every known directory: new execs are added, those whose cgroup is
 * gone are marked (ours keep their figures, others are dropped). */
static void list_parents(struct bkexec *b)
{
        for (size_t i = 0; i < b->nex; i++)
                b->ex[i].seen_now = false;
        for (size_t pi = 0; pi < b->nparents; pi++) {
                int h = primary(b, pi), fd;
                DIR *d;
                struct dirent *de;

                fd = openat(b->root_fd, b->parents[pi][h], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                d = fdopendir(fd);
                if (!d) {
                        close(fd);
                        continue;
                }
                while ((de = readdir(d))) {
                        struct ex *e;

                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        e = ex_find(b, pi, de->d_name);
                        if (!e)
                                e = ex_add(b, pi, de->d_name);
                        if (e)
                                e->seen_now = true;
                }
                closedir(d);
        }
}

/* Pids of e's cgroup.procs into pids (at most cap). Count, or -errno. */
static int ex_procs(struct bkexec *b, struct ex *e, long *pids, size_t cap)
{
        size_t np = 0;
        ssize_t n;

        if (e->dfd[CG_H_V2] >= 0) {
                n = kread(b, e, CG_H_V2, "cgroup.procs");
        } else {
                /* v1's list is cached per open file while it is read at
                 * least once a second: a kept fd would never see a new
                 * process, so open it each time */
                int fd = e->dfd[CG_H_MEMORY] >= 0
                             ? openat(e->dfd[CG_H_MEMORY], "cgroup.procs", O_RDONLY | O_CLOEXEC)
                             : -1;
                n = fd >= 0 ? read(fd, b->buf, sizeof(b->buf) - 1) : -ENOENT;
                if (fd >= 0 && n < 0)
                        n = -errno;
                if (fd >= 0)
                        close(fd);
        }
        if (n < 0)
                return (int)n;
        if (cgroup_procs_parse(b->buf, (size_t)n, pids, cap, &np) < 0)
                return -EINVAL;
        return (int)MIN(np, cap);
}

/* The command runc was given for the exec: its bundle's config.json
 * ("runc run --bundle DIR"), which holds it whole even after a shell
 * exec'd its last command. Only a runc of the real daemon's is asked, and
 * only a directory and file of root's are read, at most sizeof(b->buf).
 * Length of the NUL-separated argv, or -errno. */
static int bundle_args(struct bkexec *b, struct procfs *p, long runc_pid, char *out, size_t cap)
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
                return bkexec_bundle_args_parse(b->buf, (size_t)n, out, cap);
        }
        return -ENOENT;
}

/* The first process of an undecided exec: its start and raw cmdline. */
static void ex_identify(struct bkexec *b, struct ex *e, struct procfs *p)
{
        long pids[16];
        int n = ex_procs(b, e, pids, ARRAY_SIZE(pids));
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
                l = bundle_args(b, p, ps[i].ppid, e->raw, sizeof(e->raw));
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

static void ex_fact_new(struct bkexec *b, struct ex *e, double now, const char *cmd)
{
        struct exec_fact *f;

        for (size_t k = 0; k < b->nfacts; k++)
                if (strcmp(b->facts[k].id, e->id) == 0) { /* seen before: the same exec */
                        e->fact = k;
                        e->state = EX_OURS;
                        b->facts[k].alive = true;
                        return;
                }
        if (b->nfacts >= BKEXEC_OURS_MAX) {
                b->dropped++;
                e->state = EX_OTHER;
                return;
        }
        e->fact = b->nfacts++;
        f = &b->facts[e->fact];
        memset(f, 0, sizeof(*f));
        snprintf(f->id, sizeof(f->id), "%s", e->id);
        snprintf(f->cmd, sizeof(f->cmd), "%s", cmd);
        f->first_s = f->last_s = now;
        f->alive = true;
        step_exec_clear(&f->u);
        f->u.set = true;
        f->u.execs = 1;
        f->u.oom_kills = 0;
        f->cpu_user_s = f->cpu_sys_s = f->mem_bytes = f->anon_bytes = f->file_bytes = NAN;
        f->pids = f->psi_cpu_some_s = f->psi_cpu_full_s = f->psi_mem_some_s = NAN;
        f->psi_mem_full_s = f->psi_io_some_s = f->psi_io_full_s = NAN;
        e->state = EX_OURS;
}

/* Ours or not: an exec older than buildtel never is; else the caller
 * decides from its command, again on each tick while it says no. */
static void ex_decide(struct bkexec *b, struct ex *e, struct procfs *p, double now)
{
        char cmd[EXEC_CMD_MAX + 1];

        if (!e->rawlen)
                ex_identify(b, e, p);
        if (!e->rawlen)
                return;
        if (b->self_start && e->start_ticks && e->start_ticks < b->self_start) {
                e->state = EX_OTHER;
                b->others++;
                return;
        }
        cmd[0] = '\0';
        if (b->cfg.match && b->cfg.match(b->cfg.userdata, e->raw, e->rawlen, now, cmd, sizeof(cmd)))
                ex_fact_new(b, e, now, cmd);
        else if (e->rawlen >= 5 && memcmp(e->raw, "runc", 4) == 0)
                e->rawlen = 0; /* "runc init", before it became the step: read again */
}

/* Memory, OOM count: the part bkexec_poll reads too. */
static void ex_read_mem(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        double oom, peak;

        if (e->dfd[CG_H_MEMORY] >= 0) {
                f->mem_bytes = kread_u64(b, e, CG_H_MEMORY, "memory.usage_in_bytes");
                peak = kread_u64(b, e, CG_H_MEMORY, "memory.max_usage_in_bytes");
                oom = kread_key(b, e, CG_H_MEMORY, "memory.oom_control", "oom_kill");
        } else {
                f->mem_bytes = kread_u64(b, e, CG_H_V2, "memory.current");
                peak = kread_u64(b, e, CG_H_V2, "memory.peak");
                oom = kread_key(b, e, CG_H_V2, "memory.events", "oom_kill");
        }
        /* a cgroup removed under an open fd reads as nothing: keep the last */
        if (isnan(peak))
                peak = f->mem_bytes; /* no kernel peak (v2 before 5.19): sampled */
        f->u.mem_peak_bytes = execs_max(f->u.mem_peak_bytes, peak);
        if (!isnan(oom) && oom > (double)e->oom) {
                if (isnan(f->u.oom_at_s))
                        f->u.oom_at_s = f->last_s;
                e->victim_tries = VICTIM_TRIES;
                e->oom = (uint64_t)oom;
                f->u.oom_kills = oom;
        }
}

static void ex_read_pressure(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        static const char *const names[3] = {"cpu.pressure", "memory.pressure", "io.pressure"};
        double *dst[3][2] = {{&f->psi_cpu_some_s, &f->psi_cpu_full_s},
                             {&f->psi_mem_some_s, &f->psi_mem_full_s},
                             {&f->psi_io_some_s, &f->psi_io_full_s}};

        for (int i = 0; i < 3; i++) {
                struct cgroup_pressure pr;
                ssize_t n = kread(b, e, CG_H_V2, names[i]);

                if (n <= 0 || cgroup_pressure_parse(b->buf, (size_t)n, &pr) < 0)
                        continue;
                *dst[i][0] = (double)pr.some_us / 1e6;
                *dst[i][1] = pr.full_us == UINT64_MAX ? NAN : (double)pr.full_us / 1e6;
        }
}

static void ex_read_net(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        ssize_t len = kread(b, e, -1, "net/dev");
        uint64_t rx, tx;

        if (len > 0 && bkexec_netdev_parse(b->buf, (size_t)len, &rx, &tx) >= 0) {
                f->u.net_rx_bytes = execs_max(f->u.net_rx_bytes, (double)rx);
                f->u.net_tx_bytes = execs_max(f->u.net_tx_bytes, (double)tx);
        }
}

/* Every counter of one exec of ours. */
static void ex_read(struct bkexec *b, struct ex *e, struct exec_fact *f)
{
        double anon, file, u, s;
        uint64_t r, w;
        ssize_t n;

        ex_read_mem(b, e, f);
        if (e->dfd[CG_H_MEMORY] >= 0) {
                n = kread(b, e, CG_H_MEMORY, "memory.stat");
                anon = file = NAN;
                if (n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, "total_rss", &r) >= 0)
                        anon = (double)r;
                if (n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, "total_cache", &w) >= 0)
                        file = (double)w;
        } else {
                n = kread(b, e, CG_H_V2, "memory.stat");
                anon = file = NAN;
                if (n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, "anon", &r) >= 0)
                        anon = (double)r;
                if (n > 0 && cgroup_keyed_parse(b->buf, (size_t)n, "file", &w) >= 0)
                        file = (double)w;
        }
        f->anon_bytes = anon;
        f->file_bytes = file;
        f->u.anon_peak_bytes = execs_max(f->u.anon_peak_bytes, anon);
        /* CPU: v2 cpu.stat (microseconds; the unified hierarchy of a
         * hybrid host has it too), else v1 cpuacct.stat (USER_HZ) */
        if (kread_2keys(b, e, CG_H_V2, "cpu.stat", "user_usec", "system_usec", &u, &s)) {
                f->cpu_user_s = u / 1e6;
                f->cpu_sys_s = s / 1e6;
        } else if (kread_2keys(b, e, CG_H_CPUACCT, "cpuacct.stat", "user", "system", &u, &s)) {
                f->cpu_user_s = u / b->hz;
                f->cpu_sys_s = s / b->hz;
        }
        f->u.cpu_s = execs_sum(f->cpu_user_s, f->cpu_sys_s);
        if (e->dfd[CG_H_BLKIO] >= 0) {
                n = kread(b, e, CG_H_BLKIO, "blkio.throttle.io_service_bytes_recursive");
                if (n > 0 && cgroup_blkio_parse(b->buf, (size_t)n, &r, &w) >= 0) {
                        f->u.io_read_bytes = (double)r;
                        f->u.io_write_bytes = (double)w;
                }
        } else {
                n = kread(b, e, CG_H_V2, "io.stat");
                if (n >= 0 && cgroup_iostat_parse(b->buf, (size_t)n, &r, &w) >= 0) {
                        f->u.io_read_bytes = (double)r;
                        f->u.io_write_bytes = (double)w;
                }
        }
        f->pids = kread_u64(b, e, e->dfd[CG_H_PIDS] >= 0 ? CG_H_PIDS : CG_H_V2, "pids.current");
        ex_read_pressure(b, e, f);
        ex_read_net(b, e, f);
}

static int cmp_pid(const void *a, const void *b)
{
        const long *x = a, *y = b;

        return (*x > *y) - (*x < *y);
}

/* Drop the execs whose cgroup is gone: ours keep their fact, marked. */
static void ex_prune(struct bkexec *b)
{
        size_t k = 0;

        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];

                if (e->seen_now) {
                        b->ex[k++] = *e;
                        continue;
                }
                if (e->state == EX_OURS)
                        b->facts[e->fact].alive = false;
                else if (e->state == EX_PENDING && e->rawlen)
                        b->others++;
                ex_close(e);
        }
        b->nex = k;
}

/* Ours: read, and their processes into pids[] (sorted, owner beside). */
static void read_ours(struct bkexec *b, double now)
{
        long tmp[BKEXEC_PROCS_MAX];
        struct {
                long pid;
                unsigned char owner;
        } all[ARRAY_SIZE(b->pids)];
        size_t n = 0;

        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];
                struct exec_fact *f;
                int np;

                if (e->state != EX_OURS)
                        continue;
                f = &b->facts[e->fact];
                f->last_s = now;
                ex_read(b, e, f);
                np = ex_procs(b, e, tmp, ARRAY_SIZE(tmp));
                e->last_top = e->top;
                proctop_reset(&e->top);
                for (int k = 0; k < np && n < ARRAY_SIZE(all); k++) {
                        all[n].pid = tmp[k];
                        all[n++].owner = (unsigned char)i;
                }
        }
        qsort(all, n, sizeof(all[0]), cmp_pid);
        for (size_t i = 0; i < n; i++) {
                b->pids[i] = all[i].pid;
                b->owner[i] = all[i].owner;
        }
        b->npids = n;
}

/* One OOM record of the kernel's, read at `at`, on the exec of ours it
 * names. False when none (yet). */
static bool oom_apply(struct bkexec *b, const struct kmsg_oom *o, double at)
{
        const char *leaf = strrchr(o->memcg, '/');

        leaf = leaf ? leaf + 1 : o->memcg;
        for (size_t k = 0; k < b->nfacts; k++) {
                struct exec_fact *f = &b->facts[k];

                if (strcmp(f->id, leaf) != 0)
                        continue;
                b->kmsg_kills[k]++;
                f->u.oom_kills = execs_max(f->u.oom_kills, (double)b->kmsg_kills[k]);
                if (isnan(f->u.oom_at_s) || at < f->u.oom_at_s)
                        f->u.oom_at_s = at;
                /* the kernel's own word on the victim wins */
                snprintf(f->u.oom_victim, sizeof(f->u.oom_victim), "%s (pid %ld)", o->task, o->pid);
                b->last_oom = *o;
                return true;
        }
        return false;
}

/* The kernel's OOM records since the last read: a kill in an exec of
 * ours counts even when its cgroup went before its count was read. A
 * record of no exec of ours is kept a while: the kill may come while its
 * exec is still undecided (its step's line not read yet), and that exec
 * is ours a tick later. */
static void read_kmsg(struct bkexec *b, double now)
{
        char rec[2048];
        size_t kept = 0;

        for (size_t i = 0; i < b->noom_kept; i++) {
                struct oom_kept *k = &b->oom_kept[i];

                if (now - k->at > OOM_KEPT_S || oom_apply(b, &k->o, k->at))
                        continue;
                b->oom_kept[kept++] = *k;
        }
        b->noom_kept = kept;
        for (int i = 0; b->kmsg_fd >= 0 && i < 4096; i++) {
                struct kmsg_oom o;
                ssize_t n = read(b->kmsg_fd, rec, sizeof(rec) - 1);

                if (n < 0 && errno == EPIPE)
                        continue; /* overwritten meanwhile: go on from the next */
                if (n <= 0)
                        break;
                if (kmsg_oom_parse(rec, (size_t)n, &o) != KMSG_OOM_KILL || oom_apply(b, &o, now))
                        continue;
                if (b->noom_kept == OOM_KEPT_MAX) /* the oldest goes */
                        memmove(b->oom_kept, b->oom_kept + 1,
                                (OOM_KEPT_MAX - 1) * sizeof(b->oom_kept[0]));
                else
                        b->noom_kept++;
                b->oom_kept[b->noom_kept - 1] = (struct oom_kept){.o = o, .at = now};
        }
}

int bkexec_tick(struct bkexec *b, struct procfs *p, double now, bool discover)
{
        int alive = 0;

        b->npids = 0;
        if (discover && read_mounts(b) >= 0 &&
            ((b->nparents == 0 || b->hunt) ? now - b->last_walk >= WALK_POLL_S
                                           : ++b->ticks_since_walk >= SCAN_EVERY)) {
                b->ticks_since_walk = 0;
                b->last_walk = now;
                walk(b, p);
        }
        if (b->nparents == 0)
                return 0;
        list_parents(b);
        ex_prune(b);
        for (size_t i = 0; i < b->nex; i++)
                if (b->ex[i].state == EX_PENDING)
                        ex_decide(b, &b->ex[i], p, now);
        read_ours(b, now);
        read_kmsg(b, now);
        for (size_t i = 0; i < b->nex; i++)
                alive += b->ex[i].state == EX_OURS;
        return alive;
}

void bkexec_pids(const struct bkexec *b, const long **ret_pids, size_t *ret_n)
{
        *ret_pids = b->pids;
        *ret_n = b->npids;
}

void bkexec_consider(struct bkexec *b, const struct pidstat *ps)
{
        const long *hit = bsearch(&ps->pid, b->pids, b->npids, sizeof(long), cmp_pid);

        if (hit)
                proctop_consider(&b->ex[b->owner[hit - b->pids]].top, ps);
}

/* The largest process of e's last complete list that is gone now. */
static const struct proctop_entry *gone_top(const struct ex *e, struct procfs *p)
{
        const struct proctop *t[2] = {&e->top, &e->last_top};

        for (int k = 0; k < 2; k++)
                for (size_t i = 0; i < t[k]->n; i++) {
                        struct pidstat ps;

                        if (procfs_pidstat(p, t[k]->e[i].pid, &ps) < 0 ||
                            strcmp(ps.comm, t[k]->e[i].comm) != 0 || ps.state == 'Z')
                                return &t[k]->e[i];
                }
        return NULL;
}

/* A guess at the victim, from the largest process gone since the count
 * rose: only while the kernel's own record has not named it (that record
 * may be read a tick before the count is: the guess then named the step's
 * shell, gone with its step, over the kernel's tail). */
static void find_victim(const struct bkexec *b, struct ex *e, struct exec_fact *f,
                        struct procfs *p)
{
        const struct proctop_entry *v;

        if (b->kmsg_kills[e->fact] > 0)
                e->victim_tries = 0;
        if (e->victim_tries <= 0)
                return;
        e->victim_tries--;
        v = gone_top(e, p);
        if (v) {
                snprintf(f->u.oom_victim, sizeof(f->u.oom_victim), "%s (pid %ld)", v->label,
                         v->pid);
                e->victim_tries = 0;
        }
}

void bkexec_end(struct bkexec *b, struct procfs *p)
{
        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];
                struct exec_fact *f;
                double bytes;

                if (e->state != EX_OURS)
                        continue;
                f = &b->facts[e->fact];
                proctop_label_all(&e->top, p);
                if (e->top.n) {
                        bytes = (double)e->top.e[0].rss_pages * b->page_bytes;
                        if (isnan(f->u.peak_proc_bytes) || bytes > f->u.peak_proc_bytes) {
                                f->u.peak_proc_bytes = bytes;
                                snprintf(f->u.peak_proc, sizeof(f->u.peak_proc), "%s",
                                         e->top.e[0].label);
                        }
                }
                find_victim(b, e, f, p);
        }
}

int bkexec_poll(struct bkexec *b, struct procfs *p, double now)
{
        int kills = 0;

        if ((b->nparents == 0 || b->hunt) && read_mounts(b) >= 0 &&
            now - b->last_walk >= WALK_POLL_S) {
                b->last_walk = now; /* a RUN step without its exec yet: look for its directory */
                walk(b, p);
        }
        if (b->nparents == 0)
                return 0;
        /* new execs too: a step shorter than a tick is then still seen */
        list_parents(b);
        ex_prune(b);
        for (size_t i = 0; i < b->nex; i++)
                if (b->ex[i].state == EX_PENDING)
                        ex_decide(b, &b->ex[i], p, now);

        for (size_t i = 0; i < b->nex; i++) {
                struct ex *e = &b->ex[i];
                struct exec_fact *f;
                uint64_t before;

                if (e->state != EX_OURS)
                        continue;
                f = &b->facts[e->fact];
                before = e->oom;
                f->last_s = now;
                ex_read_mem(b, e, f);
                kills += (int)(e->oom - before);
                find_victim(b, e, f, p);
        }
        read_kmsg(b, now);
        return kills;
}

void bkexec_finish(struct bkexec *b, double now)
{
        read_kmsg(b, now);
}

void bkexec_hunt(struct bkexec *b, bool on)
{
        b->hunt = on;
}

bool bkexec_busy(const struct bkexec *b)
{
        for (size_t i = 0; i < b->nex; i++)
                if (b->ex[i].state == EX_OURS)
                        return true;
        return false;
}

void bkexec_totals(const struct bkexec *b, struct bkexec_totals *ret)
{
        struct bkexec_totals t;

        memset(&t, 0, sizeof(t));
        t.cpu_user_s = t.cpu_sys_s = t.io_read_bytes = t.io_write_bytes = t.oom_kills = NAN;
        t.mem_bytes = t.anon_bytes = t.file_bytes = t.pids = t.max_peak_bytes = NAN;
        t.psi_cpu_some_s = t.psi_cpu_full_s = t.psi_mem_some_s = t.psi_mem_full_s = NAN;
        t.psi_io_some_s = t.psi_io_full_s = NAN;
        snprintf(t.oom_victim, sizeof(t.oom_victim), "%s", b->last_oom.task);
        t.oom_victim_pid = b->last_oom.pid;
        for (size_t i = 0; i < b->nfacts; i++) {
                const struct exec_fact *f = &b->facts[i];

                t.ours++;
                t.cpu_user_s = execs_sum(t.cpu_user_s, f->cpu_user_s);
                t.cpu_sys_s = execs_sum(t.cpu_sys_s, f->cpu_sys_s);
                t.io_read_bytes = execs_sum(t.io_read_bytes, f->u.io_read_bytes);
                t.io_write_bytes = execs_sum(t.io_write_bytes, f->u.io_write_bytes);
                t.oom_kills = execs_sum(t.oom_kills, f->u.oom_kills);
                t.max_peak_bytes = execs_max(t.max_peak_bytes, f->u.mem_peak_bytes);
                t.psi_cpu_some_s = execs_sum(t.psi_cpu_some_s, f->psi_cpu_some_s);
                t.psi_cpu_full_s = execs_sum(t.psi_cpu_full_s, f->psi_cpu_full_s);
                t.psi_mem_some_s = execs_sum(t.psi_mem_some_s, f->psi_mem_some_s);
                t.psi_mem_full_s = execs_sum(t.psi_mem_full_s, f->psi_mem_full_s);
                t.psi_io_some_s = execs_sum(t.psi_io_some_s, f->psi_io_some_s);
                t.psi_io_full_s = execs_sum(t.psi_io_full_s, f->psi_io_full_s);
                if (!f->alive)
                        continue;
                t.alive++;
                t.mem_bytes = execs_sum(t.mem_bytes, f->mem_bytes);
                t.anon_bytes = execs_sum(t.anon_bytes, f->anon_bytes);
                t.file_bytes = execs_sum(t.file_bytes, f->file_bytes);
                t.pids = execs_sum(t.pids, f->pids);
        }
        *ret = t;
}

const struct exec_fact *bkexec_facts(const struct bkexec *b, size_t *ret_n)
{
        *ret_n = b->nfacts;
        return b->facts;
}

size_t bkexec_others(const struct bkexec *b)
{
        return b->others;
}
size_t bkexec_dropped(const struct bkexec *b)
{
        return b->dropped;
}
size_t bkexec_nparents(const struct bkexec *b)
{
        return b->nparents;
}

int bkexec_netdev_parse(const char *buf, size_t len, uint64_t *ret_rx, uint64_t *ret_tx)
{
        const char *p = buf, *end = buf + len;
        uint64_t rx = 0, tx = 0;
        int lines = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
                const char *colon = memchr(p, ':', (size_t)(le - p)), *name = p;
                uint64_t v[9];

                if (colon) {
                        const char *c = colon + 1;
                        int k;

                        while (name < colon && *name == ' ')
                                name++;
                        for (k = 0; k < 9; k++) {
                                skip_spaces(&c, le);
                                if (parse_u64(&c, le, &v[k]) < 0)
                                        break;
                        }
                        if (k < 9)
                                return -EINVAL;
                        lines++;
                        if (!((size_t)(colon - name) == 2 && memcmp(name, "lo", 2) == 0)) {
                                rx += v[0];
                                tx += v[8];
                        }
                }
                p = le + (nl != NULL);
        }
        if (!lines && len > 0 && !memmem(buf, len, "Inter-", 6))
                return -EINVAL;
        *ret_rx = rx;
        *ret_tx = tx;
        return 0;
}

static int hexval(char h)
{
        return h >= '0' && h <= '9'   ? h - '0'
               : h >= 'a' && h <= 'f' ? h - 'a' + 10
               : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                      : -1;
}

static void put(char *out, size_t cap, size_t *n, char c)
{
        if (*n + 1 < cap)
                out[(*n)++] = c;
}

/* \uXXXX at s (after the u) as UTF-8 (Go escapes <, >, & so); surrogate
 * halves become '?'. Returns the bytes of s used, or -1. */
static int json_u(const char *s, const char *end, char *out, size_t cap, size_t *n)
{
        unsigned v = 0;

        if (end - s < 4)
                return -1;
        for (int k = 0; k < 4; k++) {
                int d = hexval(s[k]);
                if (d < 0)
                        return -1;
                v = v * 16 + (unsigned)d;
        }
        if (v < 0x80) {
                put(out, cap, n, (char)v);
        } else if (v < 0x800) {
                put(out, cap, n, (char)(0xc0 | (v >> 6)));
                put(out, cap, n, (char)(0x80 | (v & 0x3f)));
        } else if (v >= 0xd800 && v <= 0xdfff) {
                put(out, cap, n, '?');
        } else {
                put(out, cap, n, (char)(0xe0 | (v >> 12)));
                put(out, cap, n, (char)(0x80 | ((v >> 6) & 0x3f)));
                put(out, cap, n, (char)(0x80 | (v & 0x3f)));
        }
        return 4;
}

/* A JSON string at s (after its quote) appended to out as one argument. */
static const char *json_arg(const char *s, const char *end, char *out, size_t cap, size_t *n)
{
        for (; s < end && *s != '"'; s++) {
                char c = *s;

                if (c == '\\') {
                        if (++s >= end)
                                return NULL;
                        if (*s == 'u') {
                                int k = json_u(s + 1, end, out, cap, n);
                                if (k < 0)
                                        return NULL;
                                s += k;
                                continue;
                        }
                        c = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : *s;
                }
                put(out, cap, n, c);
        }
        if (s >= end)
                return NULL;
        if (*n < cap)
                out[(*n)++] = '\0';
        return s + 1;
}

int bkexec_bundle_args_parse(const char *buf, size_t len, char *out, size_t cap)
{
        const char *end = buf + len, *p, *q;
        size_t n = 0;

        if (cap == 0)
                return -EINVAL;
        p = memmem(buf, len, "\"process\"", 9);
        if (!p)
                return -EINVAL;
        q = memmem(p, (size_t)(end - p), "\"args\"", 6);
        if (!q)
                return -EINVAL;
        p = q + 6;
        while (p < end && (*p == ' ' || *p == ':' || *p == '\n' || *p == '\t'))
                p++;
        if (p >= end || *p != '[')
                return -EINVAL;
        for (p++;;) {
                while (p < end &&
                       (*p == ' ' || *p == ',' || *p == '\n' || *p == '\t' || *p == '\r'))
                        p++;
                if (p < end && *p == ']')
                        break;
                if (p >= end || *p != '"')
                        return -EINVAL;
                p = json_arg(p + 1, end, out, cap, &n);
                if (!p)
                        return -EINVAL;
        }
        return n ? (int)n : -EINVAL;
}
