/* alloc_slabbump.c - SlabBump's own host tests, included by
 * test_alloc_slabbump.  Oracles: the chunk sets and bitmaps read directly
 * (every block of every class chunk accounted for once: freed, avail, or
 * not yet handed out by a slot's first life; no run left; no chunk with
 * nothing live kept out of the free set), addresses computed from the
 * chunk and block size, the set of blocks freed against the set served
 * again, and the pool served whole once everything is freed.  The races
 * are forced through the header's seams (KDA_TEST_SEAMS), which stall a
 * thread between two steps of the algorithm. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>


static int sb_is_taken(const kda_heap *h, uint32_t c) { return h->state.taken[c / 64] >> (c % 64) & 1; }

static uint32_t taken_chunks(const kda_heap *h)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < h->state.chunks; c++) n += sb_is_taken(h, c);
    return n;
}

/* A 4 MiB host pool laid out for one SM, the calling thread on it. */
static kda_heap *one_sm_pool(kda_pool *pool)
{
    cr_assert_eq(kda_host_pool_create(pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_host_set_sm(0);
    return &pool->heap;
}

/* Every request size maps to the smallest class that holds it (against a
 * search of the classes), and the largest class's sizes plus one to a run. */
Test(slabbump, class_of_every_size)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    uint64_t top = sb_block(h->state.classes - 1);
    for (uint64_t need = KDA_UNIT; need <= top + 4 * KDA_UNIT; need += KDA_UNIT) {
        uint32_t want = SB_CLASSES;
        for (uint32_t k = h->state.classes; k-- > 0;)
            if (sb_block(k) >= need) want = k;
        cr_assert_eq(sb_class_of(h, need), want, "%llu bytes: class %u, want %u", (unsigned long long)need,
                     sb_class_of(h, need), want);
    }
    kda_host_pool_destroy(&pool);
}

/* A free's block index, found with shifts: x / sb_block(k) for every class
 * and every offset in a chunk of the largest size. */
Test(slabbump, block_index_without_division)
{
    for (uint32_t k = 0; k < SB_CLASSES; k++)
        for (uint32_t x = 0; x < SB_MAX_CHUNK; x += 16)
            cr_assert_eq(sb_div_block(x, k), x / sb_block(k), "class %u, offset %u", k, x);
}

/* The seams of slabbump.h (KDA_TEST_SEAMS): a test that stalls a thread
 * between two steps sets `seam_hook` before its threads start. */
static void (*seam_hook)(int at, const kda_heap *h, uint32_t c, uint32_t n);
void sb_test_seam(int at, const kda_heap *h, uint32_t c, uint32_t n)
{
    if (seam_hook) seam_hook(at, h, c, n);
}

/* The slot that holds chunk c, or -1. */
static int64_t slot_of(const kda_heap *h, uint32_t c)
{
    for (uint32_t i = 0; i < h->state.sets * h->state.classes; i++)
        if (sb_v_chunk(*sb_slot(h, i)) == c + 1) return i;
    return -1;
}

/* Once every block is freed: each block of every class chunk is counted
 * once (freed, avail, or not yet handed out by a slot's first life), and
 * all of them are; a chunk out of every slot is free, none is queued for
 * reuse (a chunk with nothing live belongs to the free set, for any class);
 * with no slot holding a chunk, a request for the whole pool is served. */
static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    const kda_state *s = &h->state;
    uint64_t *unhanded = calloc(s->chunks, sizeof *unhanded);
    cr_assert_not_null(unhanded);
    uint32_t held = 0;
    for (uint32_t i = 0; i < s->sets * s->classes; i++) {
        uint64_t v = *sb_slot(h, i);
        if (!sb_v_chunk(v)) continue;
        held++;
        uint32_t c = sb_v_chunk(v) - 1, left = sb_v_ticket(v) < sb_v_limit(v) ? sb_v_limit(v) - sb_v_ticket(v) : 0;
        if (sb_v_first(v)) unhanded[c] += left;
    }
    for (uint32_t c = 0; c < s->chunks; c++) {
        uint32_t class1 = sb_class1(*sb_st(h, c));
        cr_assert_neq(class1, SB_RUN_MARK, "chunk %u still starts a run", c);
        if (!sb_is_taken(h, c)) continue;
        cr_assert(class1 >= 1 && class1 <= s->classes, "chunk %u taken without a class", c);
        uint64_t bits = 0;
        for (uint32_t w = 0; w < s->words; w++) {
            cr_assert_eq(sb_freed(h, c)[w] & sb_avail(h, c)[w], 0, "chunk %u: a block both freed and avail", c);
            bits += sb_popc(sb_freed(h, c)[w]) + sb_popc(sb_avail(h, c)[w]);
        }
        cr_assert_eq(bits + unhanded[c], sb_blocks(h, class1 - 1), "chunk %u (class %u): %llu of %u blocks free", c,
                     class1 - 1, (unsigned long long)(bits + unhanded[c]), sb_blocks(h, class1 - 1));
        cr_assert_geq(slot_of(h, c), 0, "chunk %u (class %u, state %u): every block freed, out of every slot, yet taken",
                      c, class1 - 1, sb_state(*sb_st(h, c)));
    }
    cr_assert_eq(*s->free_chunks, s->chunks - taken_chunks(h), "free chunks counted %u, in the free set %u",
                 *s->free_chunks, s->chunks - taken_chunks(h));
    for (uint32_t k = 0; k < SB_CLASSES; k++) {
        cr_assert_eq(s->queued[k], 0, "class %u: %u chunks counted as queued", k, s->queued[k]);
        for (uint32_t w = 0; w < sb_words_max(h); w++)
            cr_assert_eq(sb_reusable(h, k)[w], 0, "class %u: chunks queued in word %u", k, w);
    }
    if (!held) {
        void *all = kda_malloc(h, h->bytes);
        cr_assert_not_null(all, "every block freed, no slot holds a chunk: the whole pool is one run");
        kda_free(h, all);
    }
    free(unhanded);
}

/* A growable pool's state, once created, grown or reset (the grow tests
 * call it: expect_own_grown_state), as slabbump.h states it: its chunks are
 * those of its mapped bytes, up to the room the state has (the limit's
 * chunks); the chunks beyond the pool were never touched (no taken or queue
 * bit, status, run or bitmap word: every search stops at `chunks`); and,
 * no thread being inside the allocator, the free-chunk count is exactly
 * the pool's chunks out of the taken set (growth counted its new ones). */
static void expect_chunks_of_the_mapped_bytes(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    const kda_state *s = &h->state;
    uint64_t mapped = h->bytes / s->chunk_bytes;
    cr_assert_eq(s->chunks, mapped < s->chunks_max ? mapped : s->chunks_max, "%u chunks in %llu bytes", s->chunks,
                 (unsigned long long)h->bytes);
    cr_assert_eq((uint64_t)s->chunks_max * s->chunk_bytes, pool->plan.limit_bytes, "the state has room for the limit");
    for (uint32_t c = s->chunks; c < s->chunks_max; c++) {
        cr_assert_eq(sb_is_taken(h, c), 0, "chunk %u, beyond the pool, is taken", c);
        cr_assert(*sb_st(h, c) == 0 && s->run[c] == 0, "chunk %u, beyond the pool, has a status or a run", c);
        for (uint32_t w = 0; w < s->words; w++)
            cr_assert(sb_freed(h, c)[w] == 0 && sb_avail(h, c)[w] == 0, "chunk %u, beyond the pool, has bits set", c);
        for (uint32_t k = 0; k < SB_CLASSES; k++)
            cr_assert_eq(sb_reusable(h, k)[c / 64] >> (c % 64) & 1, 0, "chunk %u, beyond the pool, queued", c);
    }
    cr_assert_eq(*s->free_chunks, s->chunks - taken_chunks(h), "free chunks counted %u, in the free set %u",
                 *s->free_chunks, s->chunks - taken_chunks(h));
}
#define KDA_TEST_GROWN_STATE expect_chunks_of_the_mapped_bytes

/* A chunk's first life: requests of one size from one SM follow one
 * another, block after block; the next size class takes a chunk of its own. */
Test(slabbump, first_life_bumps_block_after_block)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    unsigned char *a = kda_malloc(h, 100), *b = kda_malloc(h, 100), *c = kda_malloc(h, 200);
    cr_assert_eq(b - a, sb_block(sb_class_of(h, 112)), "the next block of the same chunk");
    cr_assert_neq((uint64_t)(c - h->base) / h->state.chunk_bytes, (uint64_t)(a - h->base) / h->state.chunk_bytes,
                  "another class, another chunk");
    kda_free(h, a), kda_free(h, b), kda_free(h, c);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* The blocks freed in a chunk are what its slot serves next once the pool
 * has no free chunk: exactly those, and no chunk is taken for them.  One
 * SM, one size: fill a chunk, take every other chunk in one run, free
 * every other block, ask for as many again; then the class has nothing
 * left (NULL) until the run is freed. */
Test(slabbump, freed_blocks_are_served_again)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    uint32_t k = sb_class_of(h, 64), n = sb_blocks(h, k);
    uint64_t C = h->state.chunk_bytes;
    unsigned char **block = malloc(n * sizeof *block);
    cr_assert_not_null(block);
    for (uint32_t i = 0; i < n; i++) block[i] = kda_malloc(h, 64);
    unsigned char *rest = kda_malloc(h, (h->state.chunks - 1) * C);
    cr_assert_not_null(rest, "every other chunk, in one run");
    cr_assert_eq(taken_chunks(h), h->state.chunks);
    for (uint32_t i = 0; i < n; i += 2) kda_free(h, block[i]);
    for (uint32_t i = 0; i < n / 2; i++) { /* the first closes the chunk, which comes back with its freed half */
        unsigned char *p = kda_malloc(h, 64);
        uint64_t idx = (uint64_t)(p - block[1] + 64) / 64;
        cr_assert(p >= block[1] - 64 && idx < n && idx % 2 == 0 && block[idx] == p,
                  "request %u: %p is not a freed block of the chunk", i, (void *)p);
        block[idx] = NULL; /* served again: it may not come twice */
    }
    cr_assert_null(kda_malloc(h, 64), "the freed half used up, no chunk left");
    kda_free(h, rest);
    unsigned char *next = kda_malloc(h, 64);
    cr_assert_not_null(next, "the run's chunks free again");
    cr_assert_neq((uint64_t)(next - h->base) / C, (uint64_t)(block[1] - h->base) / C, "a new chunk");
    kda_free(h, next);
    for (uint32_t i = 0; i < n; i++) kda_free(h, i % 2 ? block[i] : block[1] - 64 + 64ull * i);
    expect_all_free(&pool);
    free(block);
    kda_host_pool_destroy(&pool);
}

/* Requests above the largest class take runs of whole chunks from the
 * top; freed, the chunks are free again. */
Test(slabbump, large_requests_take_runs)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    uint64_t C = h->state.chunk_bytes, big = 3 * C - 5;
    unsigned char *p = kda_malloc(h, big);
    cr_assert_not_null(p);
    cr_assert_eq((uint64_t)(p - h->base) % C, 0, "a run starts a chunk");
    cr_assert_eq((uint64_t)(p - h->base) / C, h->state.chunks - 3, "the top three chunks");
    cr_assert_null(kda_malloc(h, (uint64_t)h->state.chunks * C), "more chunks than the pool has");
    kda_free(h, p);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Runs of 1 to 80 chunks until the pool has none left: those within a word
 * of the taken set come by one CAS, longer ones under the lock; every run
 * starts a chunk, none overlaps another, each keeps its pattern, and the
 * pool is all free once they are freed. */
Test(slabbump, runs_in_a_word_and_across_words)
{
    kda_pool pool; /* for one SM: 256 chunks of the largest size, four words */
    cr_assert_eq(kda_host_pool_create(&pool, 256ull * SB_MAX_CHUNK, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.state.chunks, 256);
    kda_host_set_sm(0);
    kda_heap *h = &pool.heap;
    uint64_t C = h->state.chunk_bytes;
    uint32_t n = 0, k[256], longest = 0, shortest = 1000;
    unsigned char *p[256];
    for (uint32_t i = 0; n < 256; i++) {
        k[n] = 1 + i * 37 % 80;
        if (!(p[n] = kda_malloc(h, (k[n] - 1) * C + C / 2))) break;
        cr_assert_eq((uint64_t)(p[n] - h->base) % C, 0, "run %u starts a chunk", n);
        memset(p[n], (int)(n + 1), k[n] * C);
        longest = k[n] > longest ? k[n] : longest;
        shortest = k[n] < shortest ? k[n] : shortest;
        n++;
    }
    cr_assert_gt(longest, 64, "a run across words was served");
    cr_assert_lt(shortest, 64, "a run within a word was served");
    for (uint32_t a = 0; a < n; a++) {
        for (uint64_t j = 0; j < k[a] * C; j += 61)
            cr_assert_eq(p[a][j], (unsigned char)(a + 1), "run %u overwritten at %llu", a, (unsigned long long)j);
        for (uint32_t b = 0; b < n; b++)
            cr_assert(a == b || p[a] + k[a] * C <= p[b] || p[b] + k[b] * C <= p[a], "runs %u and %u overlap", a, b);
    }
    for (uint32_t a = 0; a < n; a++) kda_free(h, p[a]);
    cr_assert_eq(taken_chunks(h), 0, "every chunk free again");
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A chunk whose every block is freed goes back to the free set: a pool
 * filled to its last chunk with 64 B blocks, all freed, then serves 1 KiB
 * blocks in about all of it. */
Test(slabbump, emptied_chunks_serve_any_class)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    uint64_t cap = h->bytes / 64 + 1, n = 0, m = 0;
    void **block = malloc(cap * sizeof *block);
    cr_assert_not_null(block);
    while (n < cap && (block[n] = kda_malloc(h, 64)) != NULL) n++;
    cr_assert_eq(n * 64, h->bytes, "64 B blocks fill the pool");
    for (uint64_t i = 0; i < n; i++) kda_free(h, block[i]);
    cr_assert_eq(taken_chunks(h), 0, "every chunk freed");
    while (m < cap && (block[m] = kda_malloc(h, 1024)) != NULL) m++;
    cr_assert_eq(m * 1024, h->bytes, "then 1 KiB blocks fill it: %llu of %llu", (unsigned long long)m,
                 (unsigned long long)(h->bytes / 1024));
    for (uint64_t i = 0; i < m; i++) kda_free(h, block[i]);
    expect_all_free(&pool);
    free(block);
    kda_host_pool_destroy(&pool);
}

/* The free that leaves nothing live in a chunk, made between the chunk's
 * move to QUEUED and its queue bit (the seam stalls the queuing free there
 * and makes the chunk's other frees): the chunk still goes back to the free
 * set.  A pool filled with 64 B blocks to the last (every chunk closed); a
 * quarter of the first chunk's blocks freed queues it. */
static void **rest_block;
static uint32_t rest_from, rest_to, rest_done;
static void free_rest_when_queued(int at, const kda_heap *h, uint32_t c, uint32_t n)
{
    (void)c, (void)n;
    if (at != SB_SEAM_QUEUED || rest_done) return;
    rest_done = 1;
    for (uint32_t i = rest_from; i < rest_to; i++) kda_free(h, rest_block[i]);
}

Test(slabbump, last_free_while_the_chunk_is_queued)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    uint32_t k = sb_class_of(h, 64), n = sb_blocks(h, k);
    uint64_t cap = h->bytes / 64 + 1, got = 0;
    void **block = malloc(cap * sizeof *block);
    cr_assert_not_null(block);
    while (got < cap && (block[got] = kda_malloc(h, 64)) != NULL) got++;
    cr_assert_eq(got * 64, h->bytes, "64 B blocks fill the pool");
    for (uint32_t i = 0; i < n; i++) /* a first life hands out a chunk's blocks in order */
        cr_assert_eq((unsigned char *)block[i] - (unsigned char *)block[0], 64 * i, "block %u of the first chunk", i);
    rest_block = block, rest_from = sb_threshold(h, k), rest_to = n, rest_done = 0;
    seam_hook = free_rest_when_queued;
    for (uint32_t i = 0; i < sb_threshold(h, k); i++) kda_free(h, block[i]);
    seam_hook = NULL;
    cr_assert(rest_done, "the threshold's free queued the chunk");
    for (uint64_t i = n; i < got; i++) kda_free(h, block[i]);
    expect_all_free(&pool);
    free(block);
    kda_host_pool_destroy(&pool);
}

/* A closer that finds the chunk's count ahead of its bits (a free held
 * between its count and its bit) waits for them: it neither installs the
 * chunk with no block (which closes it again at once, round and round while
 * the free is held) nor leaves it.  A pool of 16 KiB blocks, 4 a chunk
 * (threshold 1), all handed out, the last chunk still in its slot; thread
 * A frees a block of it and is held in the seam until B's request has
 * closed the chunk and queued it (B's queuing seam, seen while A is held;
 * 10 s at most, then the test fails), then 200 ms more (or until B
 * installed the chunk 50 times with no block); B then installs it again,
 * and must get A's block. */
static _Atomic uint32_t held_free, empty_installs, queued_while_held;
static uint32_t held_chunk;
static void hold_the_free(int at, const kda_heap *h, uint32_t c, uint32_t n)
{
    (void)h;
    if (at == SB_SEAM_INSTALLED && n == 0) empty_installs++;
    if (at == SB_SEAM_QUEUED && c == held_chunk && held_free == 1) queued_while_held = 1;
    if (at != SB_SEAM_COUNTED || c != held_chunk) return;
    held_free = 1;
    for (int i = 0; i < 10000 && !queued_while_held; i++) /* B's request reaches the closer */
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    for (int i = 0; i < 200 && empty_installs < 50; i++) /* and may not install the chunk empty */
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    held_free = 2;
}

typedef struct held_args {
    const kda_heap *h;
    void *block;
} held_args;
static void *free_held(void *arg)
{
    held_args *a = arg;
    kda_host_set_sm(0);
    kda_free(a->h, a->block);
    return NULL;
}
static void *request_meanwhile(void *arg)
{
    held_args *a = arg;
    kda_host_set_sm(0);
    while (!held_free) sched_yield();
    a->block = kda_malloc(a->h, 16384);
    return NULL;
}

Test(slabbump, closer_waits_for_a_held_free)
{
    kda_pool pool;
    kda_heap *h = one_sm_pool(&pool);
    uint32_t k = sb_class_of(h, 16384), n = sb_blocks(h, k), all = n * h->state.chunks;
    cr_assert_eq(n, 4, "4 blocks a chunk: chunks of 64 KiB");
    void **block = malloc(all * sizeof *block);
    cr_assert_not_null(block);
    for (uint32_t i = 0; i < all; i++) cr_assert_not_null(block[i] = kda_malloc(h, 16384), "block %u", i);
    held_chunk = (uint32_t)(((unsigned char *)block[all - 1] - h->base) >> h->state.chunk_shift);
    cr_assert_eq(slot_of(h, held_chunk), k, "the last chunk is still in its slot");
    held_args a = {h, block[all - 1]}, b = {h, NULL};
    seam_hook = hold_the_free;
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, free_held, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, request_meanwhile, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    seam_hook = NULL;
    cr_assert(queued_while_held, "B's request did not close and queue the chunk while A's free was held");
    cr_assert_eq(empty_installs, 0, "the chunk was installed %u times with no block while the free was held",
                 (uint32_t)empty_installs);
    cr_assert_eq(b.block, block[all - 1], "the request got the held free's block");
    for (uint32_t i = 0; i < all; i++) kda_free(h, block[i]);
    expect_all_free(&pool);
    free(block);
    kda_host_pool_destroy(&pool);
}

/* Threads of two SMs allocate and free blocks of every class (and short
 * runs) in a pool of 64 chunks, pattern-checked, while every seam may yield
 * the thread (the windows between a step and the next widened); at the end
 * everything is freed and the state must be whole (expect_all_free: no
 * chunk left queued or taken with nothing live).  Several seeds. */
#define JITTER_THREADS 4
static _Atomic uint64_t jitter_rng;
static void yield_sometimes(int at, const kda_heap *h, uint32_t c, uint32_t n)
{
    (void)at, (void)h, (void)c, (void)n;
    uint64_t r = mix(jitter_rng++);
    for (uint64_t i = 0; i < r % 4; i++) sched_yield();
}

typedef struct jitter_args {
    const kda_heap *h;
    uint64_t seed;
    int id;
    char failure[128];
} jitter_args;
static void *jitter_thread(void *arg)
{
    jitter_args *a = arg;
    kda_host_set_sm((uint32_t)a->id % 2);
    void *block[LIVE] = {0};
    uint64_t size[LIVE] = {0}, key[LIVE] = {0}, rng = a->seed;
    for (int op = 0; op < 20000; op++) {
        rng = mix(rng);
        int s = (int)(rng % LIVE);
        if (block[s]) {
            if (!a->failure[0] && !intact(block[s], size[s], key[s]))
                snprintf(a->failure, sizeof a->failure, "thread %d: block overwritten before its free", a->id);
            kda_free(a->h, block[s]);
            block[s] = NULL;
            continue;
        }
        size[s] = rng >> 60 == 0 ? 3 * 8192 - 5 : 16 + (rng >> 20) % 2048; /* a run now and then */
        key[s] = rng;
        if ((block[s] = kda_malloc(a->h, size[s])) != NULL) fill(block[s], size[s], key[s]);
    }
    free_live_blocks(a->h, block, size, key, a->id, a->failure, sizeof a->failure);
    return NULL;
}

Test(slabbump, no_chunk_left_behind_under_preemption, .timeout = 120)
{
    for (uint64_t seed = 1; seed <= 6; seed++) {
        kda_pool pool; /* 512 KiB for two SMs: 64 chunks of 8 KiB */
        cr_assert_eq(kda_host_pool_create(&pool, 512u << 10, 2, err, sizeof err), 0, "%s", err);
        cr_assert_eq(pool.heap.state.chunks, 64);
        jitter_rng = seed << 32;
        seam_hook = yield_sometimes;
        jitter_args args[JITTER_THREADS];
        pthread_t th[JITTER_THREADS];
        for (int i = 0; i < JITTER_THREADS; i++) {
            args[i] = (jitter_args){&pool.heap, mix(seed * 131 + (uint64_t)i), i, {0}};
            cr_assert_eq(pthread_create(&th[i], NULL, jitter_thread, &args[i]), 0);
        }
        for (int i = 0; i < JITTER_THREADS; i++) pthread_join(th[i], NULL);
        seam_hook = NULL;
        for (int i = 0; i < JITTER_THREADS; i++) cr_assert_eq(args[i].failure[0], 0, "seed %llu: %s",
                                                              (unsigned long long)seed, args[i].failure);
        expect_all_free(&pool);
        kda_host_pool_destroy(&pool);
    }
}
