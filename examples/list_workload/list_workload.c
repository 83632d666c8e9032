/* list_workload.c - one of kdalloc's allocators under the workload of
 * workload.h on host threads: the allocator's own algorithm on a host
 * pool (list_workload_gpu.cu runs it on a GPU).
 *
 * Usage: list_workload [THREADS [ROUNDS [POOL_MIB]]]   (default 4 8 256)
 * Prints the allocations made, the failed ones (NULL: the pool ran out;
 * 0 with a pool large enough), the blocks found overwritten and the time;
 * exits 1 on any failure. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <kdalloc/kdalloc.h> /* the allocator that kdalloc::<name> selects */

#if !KDA_ALLOC_HOST
/* CUDA's device malloc (kdalloc::cudamalloc) has no host side: there is
 * nothing to run on host threads. */
int main(void)
{
    fprintf(stderr, "list_workload: %s runs on the GPU only: no host pool (see list_workload_gpu)\n",
            kda_allocator_name());
    return 1;
}
#else
#include "workload.h"

#define MAX_LENGTH 4096 /* elements of the longest list (32 KiB) */
#define N_SMS 4         /* "multiprocessors" the pool is laid out for */

typedef struct worker {
    kda_pool *pool;
    uint32_t id, rounds;
    lw_counts counts;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    /* The multi-heap allocators spread threads by "multiprocessor" and
     * FDGMalloc keeps per-warp state: on the host each thread says which
     * it plays (a thread is a warp of one). */
    kda_host_set_sm(w->id % N_SMS);
    kda_host_set_warp(w->id);
    lw_run(&w->pool->heap, w->id, w->rounds, MAX_LENGTH, &w->counts);
    /* FDGMalloc frees a warp's blocks all at once here; the others do
     * nothing.  Only after the last block: it would free live ones too. */
    kda_warp_done(&w->pool->heap);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 4) {
        fprintf(stderr, "usage: list_workload [THREADS [ROUNDS [POOL_MIB]]]\n");
        return 2;
    }
    uint32_t threads = argc > 1 ? (uint32_t)lw_parse("list_workload", argv[1], "THREADS", 1, 256) : 4;
    uint32_t rounds = argc > 2 ? (uint32_t)lw_parse("list_workload", argv[2], "ROUNDS", 1, 100000) : 8;
    uint64_t pool_bytes = (uint64_t)(argc > 3 ? lw_parse("list_workload", argv[3], "POOL_MIB", 1, 1 << 20) : 256) << 20;
    if (pool_bytes < kda_allocator_min_pool()) pool_bytes = kda_allocator_min_pool(); /* Halloc's 256 MiB */

    /* A host pool: the allocator's own algorithm on memory of this
     * process, laid out for N_SMS heaps where the variant has one per SM. */
    kda_pool pool;
    char err[256];
    if (kda_host_pool_create(&pool, pool_bytes, N_SMS, err, sizeof err)) {
        fprintf(stderr, "list_workload: %s\n", err);
        return 1;
    }

    worker *w = calloc(threads, sizeof *w);
    pthread_t *tid = calloc(threads, sizeof *tid);
    if (!w || !tid) {
        fprintf(stderr, "list_workload: out of memory\n");
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint32_t started = 0;
    for (; started < threads; started++) {
        w[started] = (worker){.pool = &pool, .id = started, .rounds = rounds};
        if (pthread_create(&tid[started], NULL, work, &w[started])) {
            fprintf(stderr, "list_workload: cannot start thread %u\n", started);
            break;
        }
    }
    for (uint32_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    uint64_t allocations = 0, failures = 0, bad = 0;
    for (uint32_t t = 0; t < started; t++)
        allocations += w[t].counts.allocations, failures += w[t].counts.failures, bad += w[t].counts.bad_blocks;
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("allocator %s (%s): %u threads x %u rounds, pool %.0f MiB\n", kda_allocator_name(),
           kda_allocator_id(), started, rounds, (double)pool.heap.bytes / (1 << 20));
    printf("allocations %llu, failures %llu, blocks overwritten %llu, time %.3f ms\n",
           (unsigned long long)allocations, (unsigned long long)failures, (unsigned long long)bad, ms);
    kda_space space; /* every list is freed: what the allocator can serve again */
    if (kda_host_pool_space(&pool, &space) == 0 && space.known)
        printf("free after the run: %.1f MiB, largest block %.1f KiB\n", (double)space.free_bytes / (1 << 20),
               (double)space.largest_block / 1024);
    kda_host_pool_destroy(&pool);
    free(w);
    free(tid);
    return started == threads && failures == 0 && bad == 0 ? 0 : 1;
}
#endif
