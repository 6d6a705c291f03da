/* SPDX-License-Identifier: MIT */
/* crash: die of a real SIGSEGV. */
#include <signal.h>
#include <stdio.h>

int main(void)
{
        volatile int *p = NULL;

        fputs("about to crash\n", stderr);
        *p = 1;
        raise(SIGSEGV);
        return 0;
}
