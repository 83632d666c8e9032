/* stdout_status.h - how a program ends once it has printed what it prints
 * (kdalloc and the benchmark programs): what it printed must have reached
 * standard output (a full disk, a file size limit, a closed descriptor
 * lose it), else one error line and exit status 1.  Header-only, standard
 * C alone, so that programs without the cli library use it too. */
#ifndef KDA_STDOUT_STATUS_H
#define KDA_STDOUT_STATUS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* rc where standard output took everything, else rc or 1 after
 * "PROGRAM: cannot write to standard output: WHY" on stderr. */
static inline int stdout_status(const char *program, int rc)
{
    errno = 0;
    int flushed = fflush(stdout) != EOF;
    if (flushed && !ferror(stdout)) return rc;
    if (flushed) /* an earlier line's write failed, its errno since lost */
        fprintf(stderr, "%s: cannot write to standard output: some of what was printed was lost\n", program);
    else
        fprintf(stderr, "%s: cannot write to standard output: %s\n", program, strerror(errno ? errno : EIO));
    return rc ? rc : 1;
}

#endif
