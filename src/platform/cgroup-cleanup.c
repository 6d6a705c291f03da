/* SPDX-License-Identifier: MIT */
/* Giving the build's cgroup back: the cgroups of buildtels that are gone,
 * the build's detached daemons moved out, the rest killed, the cgroups
 * removed, our own v2 cgroup as it was. */
#include "platform/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform/cgroup-int.h"
#include "platform/procfs.h"
#include "util/util.h"

/* Is the run that made the cgroup `name` (run-ID-PID) alive? By pid and
 * start time, not comm: the owner started before it made the cgroup. When
 * in doubt, alive: a leaked cgroup is better than a killed build. */
static bool run_owner_alive(struct cgroup *cg, int parent_fd, const char *name, long pid)
{
        struct pidstat ps;
        struct stat st;
        struct timespec real, boot;
        long hz = sysconf(_SC_CLK_TCK);
        double start;
        int r = procfs_pidstat_at(cg->root_fd, pid, &ps);

        if (r == -ENOENT || r == -ESRCH)
                return false;
        if (r < 0 || hz <= 0 || fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
                return true;
        if (ps.state == 'Z' || ps.state == 'X')
                return false;
        start = (double)(real.tv_sec - boot.tv_sec) + (double)(real.tv_nsec - boot.tv_nsec) / 1e9 +
                (double)ps.starttime / (double)hz;
        return start <= (double)st.st_mtim.tv_sec + 1.0;
}

#define TREE_DEPTH_MAX 16

/* dirfd's cgroup and those below it: with killing, SIGKILL every process
 * and return how many were found; else remove the empty cgroups below,
 * deepest first (a nested buildtel killed, a systemd-run --scope inside
 * the build), and return 0, or -EBUSY when some still hold processes. */
static ssize_t walk_tree(struct cgroup *cg, int dirfd, int depth, bool killing)
{
        struct dirent *de;
        ssize_t ret = 0;
        DIR *d;

        if (killing && cg_pids_from_buf(cg, cg_read_at(cg, dirfd, "cgroup.procs")) >= 0)
                for (size_t k = 0; k < cg->npids; k++)
                        if (cg->pids[k] != getpid()) {
                                (void)kill((pid_t)cg->pids[k], SIGKILL);
                                ret++;
                        }
        if (depth >= TREE_DEPTH_MAX)
                return killing ? ret : -EBUSY;
        d = opendir_at(dirfd, ".");
        if (!d)
                return killing ? ret : -errno;
        while ((de = readdir(d))) {
                ssize_t r;
                int sub;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub < 0)
                        continue;
                r = walk_tree(cg, sub, depth + 1, killing);
                close(sub);
                if (killing)
                        ret += r;
                else if ((unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT) ||
                         r < 0)
                        ret = -EBUSY;
        }
        closedir(d);
        return ret;
}

/* The pid in a "run-ID-PID" or "self-PID" name, or 0. */
static long stale_pid(const char *name)
{
        const char *dash = strrchr(name, '-');
        uint64_t pid;

        if ((strncmp(name, "run-", 4) != 0 && strncmp(name, "self-", 5) != 0) || !dash ||
            parse_u64_str(dash + 1, &pid) < 0 || pid == 0 || pid > INT_MAX)
                return 0;
        return (long)pid;
}

/* Remove the cgroups of buildtels that are gone, and what is below them,
 * when they are empty. One that still holds processes is an orphaned build
 * running on (its buildtel was SIGKILLed): it is left alone, with a note. */
void cg_clean_stale(struct cgroup *cg, int parent_fd, bool say)
{
        DIR *d = opendir_at(parent_fd, ".");
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                long pid = de->d_type == DT_DIR ? stale_pid(de->d_name) : 0;
                int sub;

                if (pid == 0 || strcmp(de->d_name, cg->v2.leaf_name) == 0 ||
                    (pid != (long)getpid() && run_owner_alive(cg, parent_fd, de->d_name, pid)))
                        continue;
                sub = openat(parent_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub >= 0) {
                        (void)walk_tree(cg, sub, 0, false);
                        close(sub);
                }
                if (unlinkat(parent_fd, de->d_name, AT_REMOVEDIR) < 0 && errno == EBUSY && say)
                        note_to(cg->note, cg->userdata,
                                "the cgroup %s of a buildtel that is gone still holds processes "
                                "(its build runs on): left as it is",
                                de->d_name);
        }
        closedir(d);
}

/* Once the run's cgroup is gone, undo what v2_prepare and the parent's
 * enabling did: controllers off, back into our own cgroup, the leaf gone. */
static void v2_restore(struct cgroup *cg)
{
        struct v2_state *v = &cg->v2;
        struct hier *hh = &cg->h[CG_H_V2];
        _cleanup_close_ int lfd = -1;

        if (v->own_fd < 0)
                return;
        /* No leaf: buildtel/ is the root's, shared with other runs: left on. */
        if (v->leaf) {
                if (hh->parent_fd >= 0) {
                        cg_disable_ctl(hh->parent_fd, v->parent_added);
                        lfd =
                            openat(hh->parent_fd, v->leaf_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                }
                cg_disable_ctl(v->own_fd, v->own_added);
                /* Us and the daemons moved out of the build. */
                if (lfd >= 0 && cg_pids_from_buf(cg, cg_read_at(cg, lfd, "cgroup.procs")) >= 0)
                        for (size_t k = 0; k < cg->npids; k++)
                                (void)cg_write_pid(v->own_fd, cg->pids[k]);
                (void)cg_write_pid(v->own_fd, (long)getpid());
                if (hh->parent_fd >= 0)
                        (void)unlinkat(hh->parent_fd, v->leaf_name, AT_REMOVEDIR);
                v->leaf = false;
        }
        v->own_added = v->parent_added = 0;
        closep(&v->own_fd);
}

void cg_remove_dirs(struct cgroup *cg)
{
        for (int i = 0; i < _CG_H_MAX; i++) {
                struct hier *hh = &cg->h[i];

                if (hh->dir_fd < 0)
                        continue;
                (void)walk_tree(cg, hh->dir_fd, 0, false);
                closep(&hh->dir_fd);
                (void)unlinkat(hh->parent_fd, hh->name, AT_REMOVEDIR);
        }
        v2_restore(cg);
        for (int i = 0; i < _CG_H_MAX; i++) {
                struct hier *hh = &cg->h[i];

                if (hh->parent_fd < 0)
                        continue;
                closep(&hh->parent_fd);
                /* Busy while another buildtel runs: that one removes it. */
                (void)unlinkat(cg->root_fd, hh->parent + 1, AT_REMOVEDIR);
        }
}

/* SIGKILL all in the cgroup and below until none is left, about 2 s at most
 * per hierarchy; one that will not go stays (its cgroup's removal fails). */
static void kill_all(struct cgroup *cg)
{
        struct timespec ts = {0, 10 * 1000 * 1000};

        if (cg->h[CG_H_V2].used && cg->h[CG_H_V2].dir_fd >= 0)
                (void)cg_write_at(cg->h[CG_H_V2].dir_fd, "cgroup.kill", "1");
        for (int i = 0; i < _CG_H_MAX; i++) {
                if (!cg->h[i].used || cg->h[i].dir_fd < 0)
                        continue;
                for (int k = 0; k < 200 && walk_tree(cg, cg->h[i].dir_fd, 0, true) > 0; k++)
                        nanosleep(&ts, NULL);
        }
}

/* A daemon moved out of the build goes to our own cgroup, or in a v2 leaf
 * set-up to our leaf (v2_restore moves it on). */
static void move_out(struct cgroup *cg, long pid)
{
        for (int i = 0; i < _CG_H_MAX; i++) {
                bool leaf = i == CG_H_V2 && cg->v2.leaf && cg->h[i].parent_fd >= 0;
                _cleanup_close_ int fd = -1;

                if (!cg->h[i].used || cg->h[i].dir_fd < 0)
                        continue;
                fd = openat(leaf ? cg->h[i].parent_fd : cg->root_fd,
                            leaf ? cg->v2.leaf_name : cg->h[i].own + 1,
                            O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0)
                        (void)cg_write_pid(fd, pid);
        }
}

/* The build's processes in a session of their own (a detached daemon:
 * sccache, Gradle) move out to our cgroup and run on, with one note. */
static void keep_daemons(struct cgroup *cg)
{
        int lh = cg->h[CG_H_V2].used ? CG_H_V2 : CG_H_MEMORY;
        long sid = (long)getsid(0);
        char names[512];
        size_t more = 0, o = 0;

        if (cg->kill_leftovers || cg->h[lh].dir_fd < 0 ||
            cg_pids_from_buf(cg, cg_read_at(cg, cg->h[lh].dir_fd, "cgroup.procs")) < 0)
                return;
        names[0] = '\0';
        /* cg->pids stays as read: the reads below use cg->buf only */
        for (size_t k = 0; k < MIN(cg->npids, 16); k++) {
                struct pidstat ps;
                int w;

                if (procfs_pidstat_at(cg->root_fd, cg->pids[k], &ps) < 0 || ps.session == sid ||
                    ps.state == 'Z' || ps.pid == (long)getpid())
                        continue;
                move_out(cg, cg->pids[k]);
                if (o >= sizeof(names) - 80) {
                        more++;
                        continue;
                }
                w = snprintf(names + o, sizeof(names) - o, "%s%s (pid %ld)", o ? ", " : "", ps.comm,
                             ps.pid);
                if (w > 0 && (size_t)w < sizeof(names) - o)
                        o += (size_t)w;
        }
        if (o)
                note_to(cg->note, cg->userdata,
                        "left running: %s%s (detached from the build; --kill-leftovers ends them)",
                        names, more ? ", ..." : "");
}

void cgroup_free(struct cgroup *cg)
{
        if (!cg)
                return;
        if (cg->root_fd >= 0 && cg->buf) {
                if (cg->setup_ok)
                        keep_daemons(cg);
                kill_all(cg);
                cg_remove_dirs(cg);
        }
        for (int i = 0; i < _CG_H_MAX; i++) {
                closep(&cg->h[i].procs_w_fd);
                closep(&cg->h[i].dir_fd);
                closep(&cg->h[i].parent_fd);
        }
        for (int i = 0; i < _HOT_MAX; i++)
                closep(&cg->hot[i]);
        closep(&cg->v2.own_fd);
        closep(&cg->kmsg_fd);
        closep(&cg->root_fd);
        procfs_free(cg->procfs);
        free(cg->root_path);
        free(cg->procs);
        free(cg->pids);
        free(cg->buf);
        free(cg);
}
