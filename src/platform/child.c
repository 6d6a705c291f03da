/* SPDX-License-Identifier: MIT */
#include "platform/child.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/util.h"

/* On the error pipe, a failed cgroup join (the build goes on) is its errno
 * with this bit; an exec failure is the bare errno. */
#define JOIN_TAG 0x40000000

struct child {
        pid_t pid;
        int join_error; /* -errno of the first failed cgroup join, or 0 */
        int out_fd, err_fd;
        int pidfd;
        bool foreground; /* we gave it the terminal */
        bool had_tty;    /* its group was the terminal's when we last took it back */
        bool reaped;
        char exit_comm[16]; /* its comm when it ended (after any exec), or "" */
        bool pty;           /* out_fd is a pty's master */
        struct winsize ws;  /* the size last given to it */
};

int child_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (fd >= 0) {
                (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
                return fd;
        }
#endif
        return -1;
}

/* Between fork and exec (async-signal-safe calls only): every fd above 2
 * close-on-exec but the given ones, and 0-2 closed that were closed. */
static void child_fds_apply(const struct child_fds *fds)
{
        if (!fds->overflow) {
                if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) { /* before 5.11 */
                        struct rlimit rl;
                        int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536
                                      ? (int)rl.rlim_cur
                                      : 65536;
                        for (int fd = 3; fd < max; fd++)
                                (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
                }
                for (size_t i = 0; i < fds->nkeep; i++)
                        (void)fcntl(fds->keep[i], F_SETFD, 0);
        }
        child_fds_unreserve(fds);
}

void child_reset_signals(void)
{
        struct sigaction sa = {.sa_handler = SIG_DFL};
        sigset_t none;

        for (int sig = 1; sig < NSIG; sig++)
                (void)sigaction(sig, &sa, NULL); /* SIGKILL, SIGSTOP: EINVAL, fine */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Close every fd above 2 but keep, until exec, the error pipe (it is
 * CLOEXEC). */
static void close_other_fds(int keep)
{
        int max = (int)sysconf(_SC_OPEN_MAX);

        if ((keep == 3 || close_range(3, (unsigned)keep - 1, 0) == 0) &&
            close_range((unsigned)keep + 1, ~0u, 0) == 0)
                return;
        /* kernels before 5.9 */
        for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
                if (fd != keep)
                        (void)close(fd);
}

/* tcsetpgrp from whichever group we are in: SIGTTOU blocked. */
static void set_tty_group(pid_t pgrp)
{
        sigset_t ttou, old;

        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        sigprocmask(SIG_BLOCK, &ttou, &old);
        (void)tcsetpgrp(STDIN_FILENO, pgrp);
        sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Only async-signal-safe calls between fork and exec. */
_Noreturn static void child_exec(const struct child_config *cfg, int out_w, int err_w, int null_fd,
                                 int errpipe)
{
        struct sigaction sa = {.sa_handler = SIG_DFL};
        int e;

        (void)setpgid(0, 0);
        /* Into the build's cgroup before anything else runs. A failure
         * leaves the build outside it; the parent sees that in the
         * cgroup's empty process list, and the build still runs. */
        for (size_t i = 0; i < cfg->n_cgroup_procs_fds; i++)
                if (write(cfg->cgroup_procs_fds[i], "0", 1) != 1) {
                        int je = JOIN_TAG | errno;

                        (void)!write(errpipe, &je, sizeof(je));
                }
        if (cfg->foreground)
                set_tty_group(getpid());
        /* buildtel ignores SIGPIPE and blocks signals for its signalfd; the
         * build gets what buildtel itself was started with. */
        if (cfg->clean) {
                child_reset_signals();
        } else {
                sigaction(SIGPIPE, cfg->sigpipe ? cfg->sigpipe : &sa, NULL);
                sigaction(SIGCHLD, cfg->sigchld ? cfg->sigchld : &sa, NULL);
                sigprocmask(SIG_SETMASK, cfg->sigmask, NULL);
        }
        if (cfg->stdin_null && dup2(null_fd, STDIN_FILENO) < 0)
                goto fail;
        if (cfg->stderr_null || err_w < 0)
                err_w = cfg->stderr_null ? null_fd : out_w;
        if (cfg->pipes && (dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0))
                goto fail;
        if (cfg->clean)
                close_other_fds(errpipe);
        else if (cfg->fds)
                child_fds_apply(cfg->fds);
        if (cfg->envp)
                execvpe(cfg->argv[0], cfg->argv, cfg->envp);
        else
                execvp(cfg->argv[0], cfg->argv);
fail:
        e = errno;
        (void)!write(errpipe, &e, sizeof(e));
        _exit(e == ENOENT ? 127 : 126);
}

/* Move *fd (CLOEXEC) to 3 or above. 0, or -1 with errno. */
static int above_stdio(int *fd)
{
        int moved;

        if (*fd < 0 || *fd > 2)
                return 0;
        moved = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
        if (moved < 0)
                return -1;
        close(*fd);
        *fd = moved;
        return 0;
}

/* A pseudo-terminal for the build's output, set as our stdout's terminal
 * is, output processing off (our terminal does its own, once). Not the
 * build's controlling terminal: it keeps ours (O_NOCTTY). */
static int open_pty(int *ret_master, int *ret_slave, struct winsize *ret_ws)
{
        _cleanup_close_ int m = -1, sl = -1;
        struct termios t;
        char name[128];

        m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0)
                return -errno;
        if (grantpt(m) < 0 || unlockpt(m) < 0)
                return -errno;
        if (ptsname_r(m, name, sizeof(name)) != 0)
                return -ENAMETOOLONG;
        sl = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (sl < 0)
                return -errno;
        if (tcgetattr(STDOUT_FILENO, &t) < 0 && tcgetattr(sl, &t) < 0)
                return -errno;
        t.c_oflag &= ~(tcflag_t)OPOST;
        (void)tcsetattr(sl, TCSANOW, &t);
        memset(ret_ws, 0, sizeof(*ret_ws));
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, ret_ws) == 0)
                (void)ioctl(sl, TIOCSWINSZ, ret_ws);
        *ret_master = TAKE_FD(m);
        *ret_slave = TAKE_FD(sl);
        return 0;
}

int child_pty_sync_size(struct child *c)
{
        struct winsize ws;

        if (!c->pty || c->out_fd < 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 ||
            (ws.ws_row == c->ws.ws_row && ws.ws_col == c->ws.ws_col))
                return 0;
        if (ioctl(c->out_fd, TIOCSWINSZ, &ws) < 0)
                return 0;
        c->ws = ws;
        if (!c->reaped)
                (void)kill(-c->pid, SIGWINCH);
        return 1;
}

/* 0: an executable regular file; -EACCES: there, but not one; -ENOENT. */
static int exec_candidate(const char *file)
{
        struct stat st;

        if (stat(file, &st) < 0)
                return errno == EACCES ? -EACCES : -ENOENT;
        if (!S_ISREG(st.st_mode) || access(file, X_OK) < 0)
                return -EACCES;
        return 0;
}

int child_exec_check(const char *argv0, const char *path)
{
        size_t n = strlen(argv0);
        int best = -ENOENT;

        if (n == 0)
                return -ENOENT;
        if (strchr(argv0, '/'))
                return exec_candidate(argv0);
        if (!path)
                path = "/bin:/usr/bin";
        for (const char *p = path;; p++) {
                const char *end = strchrnul(p, ':');
                size_t d = (size_t)(end - p);
                char file[PATH_MAX];
                int e;

                if (d + 1 + n < sizeof(file)) {
                        /* an empty entry is the current directory */
                        snprintf(file, sizeof(file), "%.*s%s%s", (int)d, p, d ? "/" : "", argv0);
                        e = exec_candidate(file);
                        if (e == 0)
                                return 0;
                        if (e == -EACCES)
                                best = -EACCES;
                }
                if (!*end)
                        return best;
                p = end;
        }
}

int child_spawn(const struct child_config *cfg, struct child **ret)
{
        _cleanup_close_ int out_r = -1, out_w = -1, err_r = -1, err_w = -1, ep_r = -1, ep_w = -1,
                            null_fd = -1;
        int fds[2], e = 0, status;
        struct winsize ws = {0};
        struct child *c;
        ssize_t n;
        pid_t pid;

        if (cfg->stdin_null || (cfg->pipes && cfg->stderr_null)) {
                null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
                if (null_fd < 0)
                        return -errno;
        }
        if (cfg->pipes && cfg->pty) {
                e = open_pty(&out_r, &out_w, &ws);
                if (e < 0)
                        return e;
        }
        /* stdout's pipe, then stderr's; fewer wake-ups for chatty builds
         * (capped by pipe-max-size) */
        for (int k = 0; k < 2 && cfg->pipes && !cfg->pty && (k == 0 || !cfg->stderr_null); k++) {
                if (pipe2(fds, O_CLOEXEC) < 0)
                        return -errno;
                *(k ? &err_r : &out_r) = fds[0];
                *(k ? &err_w : &out_w) = fds[1];
                (void)fcntl(fds[1], F_SETPIPE_SZ, CHILD_PIPE_SIZE);
        }
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        ep_r = fds[0];
        ep_w = fds[1];
        /* With our own stdio closed these may have landed on 0-2, where
         * the child's dup2()s would clobber them. */
        if (above_stdio(&out_w) < 0 || above_stdio(&err_w) < 0 || above_stdio(&null_fd) < 0 ||
            above_stdio(&ep_w) < 0)
                return -errno;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;

        pid = fork();
        if (pid < 0) {
                e = errno;
                free(c);
                return -e;
        }
        if (pid == 0)
                child_exec(cfg, out_w, err_w, null_fd, ep_w);

        /* Both sides set the group, so whoever runs first wins the race. */
        (void)setpgid(pid, pid);
        closep(&ep_w);
        c->pid = pid;
        c->foreground = cfg->foreground;
        for (;;) {
                n = read_full(ep_r, &e, sizeof(e));
                if (n != (ssize_t)sizeof(e) || !(e & JOIN_TAG))
                        break;
                if (!c->join_error)
                        c->join_error = -(e & ~JOIN_TAG);
        }
        if (n == (ssize_t)sizeof(e)) {
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                child_restore_terminal(c); /* when it took the terminal */
                free(c);
                return -e;
        }

        c->out_fd = TAKE_FD(out_r);
        c->err_fd = TAKE_FD(err_r);
        c->pidfd = child_pidfd_open(pid);
        c->pty = cfg->pipes && cfg->pty;
        c->ws = ws;
        *ret = c;
        return 0;
}

void child_free(struct child *c)
{
        if (!c)
                return;
        closep(&c->out_fd);
        closep(&c->err_fd);
        closep(&c->pidfd);
        free(c);
}

pid_t child_pid(const struct child *c)
{
        return c->pid;
}
int child_join_error(const struct child *c)
{
        return c->join_error;
}
int child_stdout_fd(const struct child *c)
{
        return c->out_fd;
}
int child_stderr_fd(const struct child *c)
{
        return c->err_fd;
}
int child_pidfd(const struct child *c)
{
        return c->pidfd;
}

void child_close_fd(struct child *c, int stream)
{
        closep(stream == 1 ? &c->out_fd : &c->err_fd);
}

int child_signal(struct child *c, int sig)
{
        if (c->reaped)
                return -ESRCH;
        /* The group may be gone while a straggler still runs; try the pid. */
        if (kill(-c->pid, sig) < 0 && kill(c->pid, sig) < 0)
                return -errno;
        return 0;
}

int child_exited(struct child *c)
{
        siginfo_t si = {0};

        if (c->reaped)
                return 1;
        while (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
                if (errno != EINTR)
                        return -errno;
        return si.si_pid == c->pid;
}

/* Until it is reaped, the zombie has the name its last exec gave it (argv[0]
 * may be a script that exec'd the real work). */
static void note_exit_comm(struct child *c)
{
        _cleanup_free_ char *buf = NULL;
        char path[64];
        size_t n;

        if (c->exit_comm[0] || child_exited(c) != 1)
                return;
        snprintf(path, sizeof(path), "/proc/%ld/comm", (long)c->pid);
        /* comm is at most 16 bytes and a newline */
        if (read_file_at(AT_FDCWD, path, 64, &buf, &n) < 0 || n == 0)
                return;
        buf[strcspn(buf, "\n")] = '\0';
        copy_utf8_str(c->exit_comm, sizeof(c->exit_comm), buf);
}

const char *child_exit_comm(const struct child *c)
{
        return c->exit_comm;
}

static void reaped(struct child *c, int st, int *ret_status, int *ret_signal)
{
        c->reaped = true;
        *ret_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        *ret_status = WIFSIGNALED(st) ? 128 + *ret_signal : WEXITSTATUS(st);
}

int child_wait(struct child *c, int *ret_status, int *ret_signal)
{
        int st;

        if (c->reaped)
                return -ECHILD;
        note_exit_comm(c);
        while (waitpid(c->pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        reaped(c, st, ret_status, ret_signal);
        return 0;
}

int child_try_wait(struct child *c, int *ret_status, int *ret_signal)
{
        int st;
        pid_t r;

        if (c->reaped)
                return -ECHILD;
        note_exit_comm(c);
        do
                r = waitpid(c->pid, &st, WNOHANG | WUNTRACED);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        if (r == 0)
                return 0;
        if (WIFSTOPPED(st) && c->foreground) {
                /* Ctrl-Z at the terminal stopped the build (or, in the
                 * background, its use of the terminal): stop ourselves
                 * too so the shell sees the job stop, and carry on
                 * together on `fg` or `bg`. Stopped on the terminal while
                 * our job has it (`fg` after `bg`): it gets it, goes on.
                 * A build stopped by someone else stays stopped. */
                int sig = WSTOPSIG(st);

                if ((sig != SIGTTIN && sig != SIGTTOU) || tcgetpgrp(STDIN_FILENO) != getpgrp()) {
                        child_restore_terminal(c);
                        (void)raise(SIGTSTP);
                }
                child_give_terminal(c);
                (void)kill(-c->pid, SIGCONT);
        }
        if (WIFSTOPPED(st))
                return 0;
        reaped(c, st, ret_status, ret_signal);
        return 1;
}

void child_restore_terminal(struct child *c)
{
        /* Only from the build: after `bg` the terminal is the shell's,
         * and a shell whose terminal is taken reads EIO and exits. */
        if (!c || !c->foreground)
                return;
        c->had_tty = tcgetpgrp(STDIN_FILENO) == c->pid;
        if (c->had_tty)
                set_tty_group(getpgrp());
}

void child_give_terminal(struct child *c)
{
        if (c->foreground && !c->reaped && tcgetpgrp(STDIN_FILENO) == getpgrp())
                set_tty_group(c->pid);
}

bool child_had_terminal(const struct child *c)
{
        return c->had_tty;
}

int child_fds_take(struct child_fds *ret)
{
        DIR *d;
        struct dirent *de;

        memset(ret, 0, sizeof(*ret));
        for (int fd = 0; fd < 3; fd++) {
                if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
                        continue;
                /* open() takes the lowest free number: this one. */
                int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
                if (nfd < 0)
                        return -errno;
                if (nfd != fd) {
                        close(nfd);
                        return -EBADF;
                }
                ret->closed[fd] = true;
        }
        d = opendir("/proc/self/fd");
        if (!d) {
                ret->overflow = true; /* cannot tell: pass everything on */
                return 0;
        }
        while ((de = readdir(d))) {
                uint64_t v;
                int flags;

                if (parse_u64_str(de->d_name, &v) < 0 || v < 3 || v > INT_MAX || (int)v == dirfd(d))
                        continue;
                flags = fcntl((int)v, F_GETFD);
                if (flags < 0 || (flags & FD_CLOEXEC))
                        continue;
                if (ret->nkeep == CHILD_KEEP_FDS_MAX) {
                        ret->overflow = true;
                        break;
                }
                ret->keep[ret->nkeep++] = (int)v;
        }
        closedir(d);
        return 0;
}

void child_fds_unreserve(const struct child_fds *fds)
{
        for (int fd = 0; fd < 3; fd++)
                if (fds->closed[fd])
                        (void)close(fd);
}

static bool env_named(const char *entry, const char *set)
{
        size_t n = strcspn(set, "=");

        return strncmp(entry, set, n) == 0 && entry[n] == '=';
}

int child_env_with(char *const *set, size_t n, char ***ret)
{
        size_t have = 0, o = 0;
        char **v;

        while (environ[have])
                have++;
        v = calloc(have + n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < have; i++) {
                bool replaced = false;
                for (size_t k = 0; k < n && !replaced; k++)
                        replaced = env_named(environ[i], set[k]);
                if (!replaced)
                        v[o++] = environ[i];
        }
        for (size_t k = 0; k < n; k++)
                if (strchr(set[k], '='))
                        v[o++] = set[k];
        v[o] = NULL;
        *ret = v;
        return 0;
}
