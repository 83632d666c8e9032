/* progress.c - the progress line on a terminal's stderr (progress.h). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define PROGRESS_FIRST_S 1.0 /* quiet this long: short work shows nothing */
#define PROGRESS_EVERY_NS 500000000L

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void *progress_thread(void *arg)
{
    progress *p = arg;
    struct timespec t0, next;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    next = t0;
    int width = 0; /* of the line on screen, to erase it */
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        next.tv_nsec += PROGRESS_EVERY_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &next) == 0) {
        }
        double s = seconds_since(&t0);
        if (p->stop || s < PROGRESS_FIRST_S) continue;
        uint64_t done = atomic_load(&p->done);
        int n;
        if (p->total)
            n = fprintf(stderr, "\r%s: %llu of %llu (%.0f%%), %.0f s", p->what, (unsigned long long)done,
                        (unsigned long long)p->total, 100.0 * (double)done / (double)p->total, s);
        else
            n = fprintf(stderr, "\r%s: %.0f s", p->what, s);
        if (n - 1 > width) width = n - 1;
    }
    pthread_mutex_unlock(&p->lock);
    if (width) fprintf(stderr, "\r%*s\r", width, "");
    return NULL;
}

void progress_begin(progress *p, const char *what, uint64_t total)
{
    p->what = what;
    p->total = total;
    atomic_store(&p->done, 0);
    p->stop = 0;
    p->running = 0;
    if (!isatty(STDERR_FILENO)) return;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&p->lock, NULL);
    p->running = pthread_create(&p->thread, NULL, progress_thread, p) == 0;
    if (!p->running) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
    }
}

void progress_set(progress *p, uint64_t done) { atomic_store(&p->done, done); }

void progress_end(progress *p)
{
    if (!p->running) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    p->running = 0;
}
