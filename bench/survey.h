/* survey.h - the later literature's allocator tests (survey.cu). */
#ifndef KDA_SURVEY_H
#define KDA_SURVEY_H

#include <stdint.h>

#include "kdalloc/kdalloc.h"

/* Runs test live-warp, live-thread, mixed, exhaustion or soak on `pool`:
 * `requesters` and `size` pick one point of the sweep (0: all of it; size 0
 * in exhaustion: 1 KiB, then mixed sizes); `seconds` bounds the soak.  CSV
 * rows on stdout; -1 for an unknown test. */
int survey_run(kda_pool *pool, const char *test, uint32_t requesters, uint32_t size, unsigned seconds);

/* The reuse test (reuse.cu): fill, keep one block in every K, refill;
 * `size` picks one block size (0: 16 B .. 4 KiB).  CSV rows on stdout. */
int reuse_run(kda_pool *pool, uint32_t size);

/* The list workload (list.cu): examples/list_workload's GPU threads, at
 * `threads` (0: 16,384, then 100,000).  CSV rows on stdout. */
int list_run(kda_pool *pool, uint32_t threads);

#endif
