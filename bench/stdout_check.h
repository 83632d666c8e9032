/* stdout_check.h - how the benchmark programs end after printing their help
 * or version: 0, or 1 with one line on stderr where standard output lost
 * some of it (a full disk, a file size limit), so that nothing a program
 * printed disappears with exit status 0. */
#ifndef KDA_BENCH_STDOUT_CHECK_H
#define KDA_BENCH_STDOUT_CHECK_H

#include <stdio.h>

static inline int bench_printed(const char *program)
{
    if (fflush(stdout) != EOF && !ferror(stdout)) return 0;
    fprintf(stderr, "%s: cannot write to standard output\n", program);
    return 1;
}

#endif
