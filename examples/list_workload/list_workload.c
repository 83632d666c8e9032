/* list_workload.c - one of kdalloc's allocators under a small, realistic
 * load on host threads: growing arrays, as a program that appends to lists
 * of unknown length does.
 *
 * Each thread, for several rounds, builds lists of random length by
 * appending one element at a time; when a list's block is full it takes a
 * block twice as large, copies the elements over and frees the old one
 * (what realloc does).  Finished lists stay live for a while (a ring of
 * slots per thread), so that blocks of many sizes and lifetimes are live
 * together, and at the end of each round part of them is freed.  Every
 * element holds a value computed from its owner, its list and its index,
 * and a block is checked, every element, before it is freed: a block that
 * another thread's block overlaps, or that the allocator handed out twice,
 * fails the check.
 *
 * Usage: list_workload [THREADS [ROUNDS [POOL_MIB]]]   (default 4 8 256)
 * Prints the allocations made, the failed ones (NULL: the pool ran out;
 * 0 with a pool large enough) and the time; exits 1 on any failure. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h" /* the allocator that kdalloc::<name> selects */

#if !KDA_ALLOC_HOST
/* CUDA's device malloc (kdalloc::cudamalloc) has no host side: there is
 * nothing to run on host threads. */
int main(void)
{
    fprintf(stderr, "list_workload: %s runs on the GPU only: no host pool\n", kda_allocator_name());
    return 1;
}
#else

#define LISTS_PER_ROUND 32 /* lists each thread builds in a round */
#define LIVE_SLOTS 16      /* finished lists a thread keeps live */
#define MAX_LENGTH 4096    /* elements of the longest list (32 KiB) */
#define FIRST_CAPACITY 4   /* elements of a list's first block */
#define N_SMS 4            /* "multiprocessors" the pool is laid out for */

typedef struct list {
    uint64_t *items;
    uint32_t length, capacity;
    uint64_t key; /* names the list: its elements' values derive from it */
} list;

typedef struct worker {
    kda_pool *pool;
    uint32_t id, rounds;
    uint64_t allocations, failures, bad_blocks;
} worker;

/* A small, good-enough mixing function (splitmix64's finaliser): the
 * random lengths, and the values that make each element unique. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t value_of(uint64_t key, uint32_t index) { return mix(key ^ ((uint64_t)index << 40)); }

/* Whether every element of `l` still holds what was written; otherwise
 * something else wrote into the block while it was ours. */
static int intact(const list *l)
{
    for (uint32_t i = 0; i < l->length; i++)
        if (l->items[i] != value_of(l->key, i)) return 0;
    return 1;
}

/* Checks a list's block, counts a bad one, and gives it back. */
static void release(worker *w, list *l)
{
    if (!l->items) return;
    if (!intact(l)) w->bad_blocks++;
    kda_free(&w->pool->heap, l->items);
    l->items = NULL;
    l->length = l->capacity = 0;
}

/* Appends one element, moving the list to a block twice as large when it
 * is full.  0 when the allocator has no block (the list keeps its old one). */
static int append(worker *w, list *l, uint64_t v)
{
    if (l->length == l->capacity) {
        uint32_t capacity = l->capacity ? 2 * l->capacity : FIRST_CAPACITY;
        w->allocations++;
        uint64_t *bigger = kda_malloc(&w->pool->heap, (uint64_t)capacity * sizeof *bigger);
        if (!bigger) {
            w->failures++;
            return 0;
        }
        if (l->length) memcpy(bigger, l->items, l->length * sizeof *bigger);
        uint32_t length = l->length;
        release(w, l); /* checks the old block before it goes */
        l->items = bigger, l->length = length, l->capacity = capacity;
    }
    l->items[l->length++] = v;
    return 1;
}

static void *work(void *arg)
{
    worker *w = arg;
    /* The multi-heap allocators spread threads by "multiprocessor" and
     * FDGMalloc keeps per-warp state: on the host each thread says which
     * it plays (a thread is a warp of one). */
    kda_host_set_sm(w->id % N_SMS);
    kda_host_set_warp(w->id);
    list live[LIVE_SLOTS] = {0};
    uint64_t rng = mix(w->id + 1);
    for (uint32_t round = 0; round < w->rounds; round++) {
        for (uint32_t n = 0; n < LISTS_PER_ROUND; n++) {
            rng = mix(rng);
            list l = {.key = rng};
            uint32_t length = 1 + (uint32_t)(mix(rng ^ 1) % MAX_LENGTH);
            for (uint32_t i = 0; i < length; i++)
                if (!append(w, &l, value_of(l.key, i))) break; /* counted; the list stays shorter */
            /* Keep it in a random slot; the list there before is done. */
            list *slot = &live[mix(rng ^ 2) % LIVE_SLOTS];
            release(w, slot);
            *slot = l;
        }
        /* The end of a round: about half the live lists are dropped. */
        for (uint32_t s = 0; s < LIVE_SLOTS; s++)
            if (mix(rng ^ (s + 3)) & 1) release(w, &live[s]);
    }
    for (uint32_t s = 0; s < LIVE_SLOTS; s++) release(w, &live[s]);
    /* FDGMalloc frees a warp's blocks all at once here; the others do
     * nothing.  Only after the last block: it would free live ones too. */
    kda_warp_done(&w->pool->heap);
    return NULL;
}

static unsigned long parse(const char *s, const char *what, unsigned long lo, unsigned long hi)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "list_workload: %s must be %lu to %lu, not '%s'\n", what, lo, hi, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 4) {
        fprintf(stderr, "usage: list_workload [THREADS [ROUNDS [POOL_MIB]]]\n");
        return 2;
    }
    uint32_t threads = argc > 1 ? (uint32_t)parse(argv[1], "THREADS", 1, 256) : 4;
    uint32_t rounds = argc > 2 ? (uint32_t)parse(argv[2], "ROUNDS", 1, 100000) : 8;
    uint64_t pool_bytes = (uint64_t)(argc > 3 ? parse(argv[3], "POOL_MIB", 1, 1 << 20) : 256) << 20;
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
        allocations += w[t].allocations, failures += w[t].failures, bad += w[t].bad_blocks;
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("allocator %s (%s): %u threads x %u rounds, pool %.0f MiB\n", kda_allocator_name(),
           kda_allocator_id(), started, rounds, (double)pool.heap.bytes / (1 << 20));
    printf("allocations %llu, failures %llu, blocks overwritten %llu, time %.3f ms\n",
           (unsigned long long)allocations, (unsigned long long)failures, (unsigned long long)bad, ms);
    kda_host_pool_destroy(&pool);
    free(w);
    free(tid);
    return started == threads && failures == 0 && bad == 0 ? 0 : 1;
}
#endif
