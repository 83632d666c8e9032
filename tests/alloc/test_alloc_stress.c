/* test_alloc_stress.c - the allocator under many threads at once: random
 * sizes and random lifetimes (a tight pool makes NULLs and reuse frequent),
 * the soak of at least 10^6 allocations (with KDA_SOAK=1), and the
 * survey's protocol (bench/survey.cu), where every block stays live until
 * all threads have allocated, written and checked theirs.
 *
 * Oracles: a pattern unique to each block's owner over every byte, checked
 * before its free and at each thread's end (two live blocks that overlap
 * break one of the patterns); alignment and bounds of every pointer; NULL
 * counts against pools that hold, or cannot hold, the live set; and the
 * allocator's state whole again at the end (expect_all_free). */
#include <pthread.h>
#include <sched.h>

#include "test_alloc.h"

#if KDA_ALLOC_HOST

static char err[256];

/* ---- random sizes and lifetimes ---- */

/* Operations a thread makes, and the allocations expected of them, are
 * 1 in KDA_TEST_SHARE (tests/CMakeLists.txt) in the sanitized build. */

typedef struct stress_args {
    kda_pool *pool;
    int id;
    int iterations;
    uint64_t nulls, allocations;
    char failure[160];
} stress_args;

static void *stress_thread(void *p)
{
    stress_args *a = p;
    kda_host_set_sm((uint32_t)a->id % 4);
    kda_host_set_warp((uint32_t)a->id);
    uint64_t rng = mix((uint64_t)a->id + 1);
    void *block[LIVE] = {0};
    uint64_t size[LIVE] = {0}, key[LIVE] = {0};
    for (int it = 0; it < a->iterations && !a->failure[0]; it++) {
        if (it % 256 == 255) { /* now and then everything: FDGMalloc's tidy-up frees */
            for (int s = 0; s < LIVE; s++)
                if (block[s]) {
                    if (!intact(block[s], size[s], key[s]))
                        snprintf(a->failure, sizeof a->failure, "thread %d: block overwritten", a->id);
                    kda_free(&a->pool->heap, block[s]);
                    block[s] = NULL;
                }
            kda_warp_done(&a->pool->heap);
        }
        int slot = (int)(mix(rng + (uint64_t)it) % LIVE);
        if (block[slot]) {
            if (!intact(block[slot], size[slot], key[slot])) {
                snprintf(a->failure, sizeof a->failure, "thread %d: block of %llu B overwritten", a->id,
                         (unsigned long long)size[slot]);
                break;
            }
            kda_free(&a->pool->heap, block[slot]);
            block[slot] = NULL;
            continue;
        }
        size[slot] = random_size(&rng);
        key[slot] = mix(((uint64_t)a->id << 40) ^ (uint64_t)it);
        block[slot] = kda_malloc(&a->pool->heap, size[slot]);
        a->allocations++;
        if (!block[slot]) {
            a->nulls++;
            continue;
        }
        unsigned char *c = block[slot];
        if ((uintptr_t)c % KDA_UNIT ||
            (KDA_ALLOC_IN_POOL && (c < a->pool->heap.base || c + size[slot] > a->pool->heap.base + a->pool->heap.bytes))) {
            snprintf(a->failure, sizeof a->failure, "thread %d: bad pointer %p", a->id, block[slot]);
            break;
        }
        fill(c, size[slot], key[slot]);
        if (it % 64 == 0) sched_yield(); /* let the others run while we hold blocks */
    }
    free_live_blocks(&a->pool->heap, block, size, key, a->id, a->failure, sizeof a->failure);
    return NULL;
}

static void run_stress(uint64_t pool_bytes, int iterations, uint64_t *nulls, uint64_t *allocations)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, pool_bytes, 4, err, sizeof err), 0, "%s", err);
    pthread_t th[THREADS];
    stress_args args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (stress_args){&pool, i, iterations, 0, 0, {0}};
        cr_assert_eq(pthread_create(&th[i], NULL, stress_thread, &args[i]), 0);
    }
    *nulls = *allocations = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].failure[0], 0, "%s", args[i].failure);
        *nulls += args[i].nulls;
        *allocations += args[i].allocations;
    }
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
/* Random sizes, random lifetimes: no two live blocks overlap, and the list
 * is whole afterwards.  A tight pool makes NULLs and reuse frequent. */
Test(alloc, stress_random_malloc_free, .timeout = 240)
{
    uint64_t nulls, allocations;
    run_stress(48u << 20, 40000 / KDA_TEST_SHARE, &nulls, &allocations);
    cr_assert_gt(allocations, 100000 / KDA_TEST_SHARE);
    cr_assert_lt(nulls, allocations / 10, "%llu of %llu failed in a pool 3x the live set",
                 (unsigned long long)nulls, (unsigned long long)allocations);
    run_stress(3u << 20, 20000 / KDA_TEST_SHARE, &nulls, &allocations);
    cr_assert_gt(nulls, 0, "a 3 MiB pool must run out under 8 threads holding up to 16 x 128 KiB");
}
#elif KDA_ALLOC_CONSECUTIVE
/* Bump allocators never reuse within one lap of the pool: with a pool
 * larger than everything allocated, no two blocks may overlap. */
Test(alloc, stress_random_malloc_free, .timeout = 240)
{
    uint64_t nulls, allocations;
    run_stress(1200u << 20, 10000 / KDA_TEST_SHARE, &nulls, &allocations);
    cr_assert_eq(nulls, 0, "%llu of %llu failed", (unsigned long long)nulls, (unsigned long long)allocations);
}
#else
/* The others: random sizes and lifetimes in a pool 3x the live set. */
Test(alloc, stress_random_malloc_free, .timeout = 240)
{
    uint64_t nulls, allocations;
    run_stress(pool_of(48u << 20), 40000 / KDA_TEST_SHARE, &nulls, &allocations);
    cr_assert_gt(allocations, 100000 / KDA_TEST_SHARE);
    cr_assert_lt(nulls, allocations / 10, "%llu of %llu failed in a pool 3x the live set",
                 (unsigned long long)nulls, (unsigned long long)allocations);
}
#endif

#if !KDA_ALLOC_CONSECUTIVE
/* The soak (not a CI test: it skips unless KDA_SOAK is set): at least
 * 10^6 allocations of random sizes and lifetimes on 8 threads, every block
 * checked for alignment, bounds and its owner's pattern, and the
 * allocator's state whole again at the end (expect_all_free). */
Test(alloc, soak, .timeout = 3600)
{
    if (!getenv("KDA_SOAK")) cr_skip_test("the CPU soak runs with KDA_SOAK=1");
    uint64_t nulls, allocations;
    run_stress(pool_of(48u << 20), 300000, &nulls, &allocations);
    cr_assert_geq(allocations, 1000000, "%llu allocations", (unsigned long long)allocations);
    printf("soak %s: %llu allocations, %llu NULL (pool full), 0 overwritten, 0 misaligned, state whole again\n",
           kda_allocator_name(), (unsigned long long)allocations, (unsigned long long)nulls);
}
#endif

/* ---- the survey's protocol (bench/survey.cu) on CPU threads ----
 * Every requester's block stays live until all threads have allocated,
 * written and checked theirs; then all are freed.  Oracles: owner patterns
 * over every byte, and NULL counts against a pool that holds everything. */

#define SURVEY_THREADS 8

typedef struct survey_args {
    kda_pool *pool;
    uint32_t id, n, size; /* size 0: seeded random sizes of 16 B .. 4 KiB */
    pthread_barrier_t *all;
    uint64_t nulls, bad;
} survey_args;

static uint64_t survey_size(const survey_args *a, uint32_t i)
{
    return a->size ? a->size : 16 + mix((uint64_t)a->id << 32 | i) % (4096 - 15);
}

static void *survey_thread(void *p)
{
    survey_args *a = p;
    kda_host_set_sm(a->id % 4);
    kda_host_set_warp(a->id);
    void **block = calloc(a->n, sizeof *block);
    if (!block) abort();
    for (uint32_t i = 0; i < a->n; i++) a->nulls += !(block[i] = kda_malloc(&a->pool->heap, survey_size(a, i)));
    pthread_barrier_wait(a->all); /* every block of every thread is live */
    for (uint32_t i = 0; i < a->n; i++)
        if (block[i]) fill(block[i], survey_size(a, i), (uint64_t)a->id << 32 | i);
    pthread_barrier_wait(a->all);
    for (uint32_t i = 0; i < a->n; i++)
        if (block[i]) a->bad += !intact(block[i], survey_size(a, i), (uint64_t)a->id << 32 | i);
    pthread_barrier_wait(a->all);
    for (uint32_t i = 0; i < a->n; i++) kda_free(&a->pool->heap, block[i]);
    kda_warp_done(&a->pool->heap);
    free(block);
    return NULL;
}

/* n requesters per thread, all live, checked, freed; the pool ends free. */
static void survey_live(uint32_t n, uint32_t size)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, pool_of(256u << 20), 4, err, sizeof err), 0, "%s", err);
    pthread_barrier_t all;
    pthread_barrier_init(&all, NULL, SURVEY_THREADS);
    pthread_t th[SURVEY_THREADS];
    survey_args args[SURVEY_THREADS];
    for (uint32_t t = 0; t < SURVEY_THREADS; t++) {
        args[t] = (survey_args){&pool, t, n, size, &all, 0, 0};
        cr_assert_eq(pthread_create(&th[t], NULL, survey_thread, &args[t]), 0);
    }
    uint64_t nulls = 0, bad = 0;
    for (uint32_t t = 0; t < SURVEY_THREADS; t++) {
        pthread_join(th[t], NULL);
        nulls += args[t].nulls;
        bad += args[t].bad;
    }
    pthread_barrier_destroy(&all);
    cr_assert_eq(bad, 0, "size %u: %llu blocks overwritten while all were live", size, (unsigned long long)bad);
    cr_assert_eq(nulls, 0, "size %u: %llu NULLs from a pool that holds every block", size, (unsigned long long)nulls);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

Test(survey, live_blocks_of_each_size, .timeout = 240)
{
    static const uint32_t sizes[] = {16, 64, 256, 1024, 4096, 8192};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) survey_live(1000, sizes[k]);
}

Test(survey, live_blocks_of_mixed_sizes, .timeout = 240) { survey_live(2000, 0); }

#if KDA_ALLOC_WRAPS || KDA_ALLOC_SYS_HEAP == KDA_SYS_HEAP_ALL
Test(survey, exhaustion_then_the_same_again)
{
    cr_skip_test("%s never returns NULL here (it overwrites, or the host's allocator has no bound)",
                 kda_allocator_name());
}
#else
/* 1 KiB requests until the first NULL, all checked and freed; then the same
 * number must succeed again wherever memory is reused. */
static uint32_t exhaust(kda_pool *pool, void **blocks, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && (blocks[n] = kda_malloc(&pool->heap, 1024)) != NULL) {
        fill(blocks[n], 1024, n);
        n++;
    }
    for (uint32_t i = 0; i < n; i++) cr_assert(intact(blocks[i], 1024, i), "block %u overwritten", i);
    for (uint32_t i = 0; i < n; i++) kda_free(&pool->heap, blocks[i]);
    kda_warp_done(&pool->heap);
    return n;
}

Test(survey, exhaustion_then_the_same_again, .timeout = 240)
{
    uint64_t bytes = pool_of(8u << 20);
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, bytes, 4, err, sizeof err), 0, "%s", err);
    uint32_t max = (uint32_t)(bytes / 1024 + 1);
    void **blocks = malloc(max * sizeof *blocks);
    cr_assert_not_null(blocks);
    uint32_t first = exhaust(&pool, blocks, max);
    cr_assert_lt(first, max, "the pool ran out");
    double share = (double)first * 1024 / (double)bytes;
    cr_log_info("%s: %u requests of 1 KiB, %.1f%% of the pool", kda_allocator_name(), first, 100 * share);
    uint32_t second = exhaust(&pool, blocks, max);
#if !KDA_ALLOC_FREES
    cr_assert_eq(first, bytes / 1024, "%s hands out the whole pool", kda_allocator_name());
    cr_assert_eq(second, 0, "and never reuses it");
#else
    cr_assert_gt(share, 0.5, "%.1f%% of the pool handed out", 100 * share);
    cr_assert_geq(second, first, "after freeing everything, %u requests succeed, first %u", second, first);
    expect_all_free(&pool);
#endif
    free(blocks);
    kda_host_pool_destroy(&pool);
}
#endif

#endif /* KDA_ALLOC_HOST */
