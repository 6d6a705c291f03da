/* SPDX-License-Identifier: MIT */
/* cgload: known loads for the cgroup tests. Real processes, not mocks.
 *   cgload alloc MIB          touch MIB MiB, then exit at once
 *   cgload burn SECS          burn SECS of CPU time, then exit
 *   cgload write MIB FILE     write MIB MiB to FILE (O_DIRECT where it can)
 *                             with fsync, then exit
 *   cgload grow MIB           grow by 16 MiB every 10 ms up to MIB, hold 1 s
 *   cgload dfork SECS MIB     a double-forked grandchild burns SECS and
 *                             touches MIB; we exit once it is gone
 *   cgload idle N             fork N children that sleep until killed;
 *                             prints "ready" once all of them run */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn(double secs)
{
        volatile unsigned long x = 0;
        double t0 = cpu_s();

        while (cpu_s() - t0 < secs)
                for (int i = 0; i < 100000; i++)
                        x += (unsigned long)i;
        (void)x;
}

/* volatile: the compiler may not drop stores to memory nobody reads. */
static volatile char *touch(size_t mib)
{
        size_t len = mib << 20;
        volatile char *p = malloc(len ? len : 1);

        if (!p)
                exit(1);
        for (size_t i = 0; i < len; i += 4096)
                p[i] = (char)(i | 1);
        return p;
}

static void msleep(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "alloc") == 0) {
                touch(strtoul(argv[2], NULL, 10));
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "burn") == 0) {
                burn(strtod(argv[2], NULL));
                return 0;
        }
        if (argc == 4 && strcmp(argv[1], "write") == 0) {
                size_t mib = strtoul(argv[2], NULL, 10);
                void *buf = NULL;
                /* O_DIRECT where the file system has it: the writes are then
                 * this process's own I/O. Buffered, the kernel's flusher can
                 * write the pages back first (other writers on the machine
                 * past the dirty threshold), and cgroup v1's blkio counts
                 * that I/O to the root cgroup, not to ours. */
                int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);

                if (fd < 0)
                        fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (posix_memalign(&buf, 4096, 1 << 20) != 0 || fd < 0)
                        return 1;
                memset(buf, 'x', 1 << 20);
                for (size_t i = 0; i < mib; i++)
                        if (write(fd, buf, 1 << 20) != 1 << 20)
                                return 1;
                if (fsync(fd) < 0 || close(fd) < 0)
                        return 1;
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "grow") == 0) {
                size_t mib = strtoul(argv[2], NULL, 10);

                for (size_t have = 0; have < mib; have += 16) {
                        touch(16);
                        msleep(10);
                }
                msleep(1000);
                return 0;
        }
        if (argc == 4 && strcmp(argv[1], "dfork") == 0) {
                int fds[2];
                char c;
                pid_t pid;

                if (pipe(fds) < 0)
                        return 1;
                pid = fork();
                if (pid == 0) {
                        if (fork() == 0) {
                                /* the grandchild, orphaned at once */
                                close(fds[0]);
                                touch(strtoul(argv[3], NULL, 10));
                                burn(strtod(argv[2], NULL));
                                _exit(0);
                        }
                        _exit(0);
                }
                close(fds[1]);
                waitpid(pid, NULL, 0);
                /* EOF once the grandchild has exited */
                while (read(fds[0], &c, 1) > 0)
                        ;
                return 0;
        }
        if (argc == 3 && strcmp(argv[1], "idle") == 0) {
                long n = strtol(argv[2], NULL, 10);

                for (long i = 0; i < n; i++) {
                        pid_t pid = fork();

                        if (pid == 0) {
                                /* gone with us; never holding our stdout */
                                prctl(PR_SET_PDEATHSIG, SIGKILL);
                                if (getppid() == 1)
                                        _exit(0);
                                close(STDOUT_FILENO);
                                for (;;)
                                        pause();
                        }
                        if (pid < 0)
                                return 1;
                }
                printf("ready\n");
                fflush(stdout);
                for (;;)
                        pause();
        }
        fprintf(stderr, "usage: cgload alloc MIB | burn SECS | write MIB FILE | grow MIB | "
                        "dfork SECS MIB | idle N\n");
        return 2;
}
