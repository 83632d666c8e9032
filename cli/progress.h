/* progress.h - a line on stderr saying that long work is under way, for a
 * person watching a terminal: "<what>: 5 s" or, where the work counts its
 * steps, "<what>: 1200 of 10000 (12%), 5 s".  A thread redraws it twice a
 * second once the work has taken a second, and erases it when the work
 * ends, so short work shows nothing and the lines printed afterwards stay
 * as they were.  When stderr is not a terminal (a pipe, a file, a test)
 * nothing is printed and no thread is started. */
#ifndef KDA_PROGRESS_H
#define KDA_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct progress {
    const char *what;
    uint64_t total;         /* steps of the work; 0: not counted */
    _Atomic uint64_t done;  /* steps finished */
    int running;            /* the thread was started */
    int stop;               /* under lock: the work has ended */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
} progress;

/* Starts the line for work of `total` steps (0: uncounted); `what` must
 * live until progress_end. */
void progress_begin(progress *p, const char *what, uint64_t total);
/* Says that `done` steps are finished. */
void progress_set(progress *p, uint64_t done);
/* Stops the thread and erases the line. */
void progress_end(progress *p);

#endif
