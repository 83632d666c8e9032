/* alloc_countedbump.c - CountedBump's own host tests, included by
 * test_alloc_countedbump.  Oracles: the chunk bitmap and counters read
 * directly (every chunk free again but the slots' current ones, whose
 * served requests are all freed), addresses computed from the chunk size,
 * owner patterns over every byte of a block, and, where threads share a
 * slot, a map of the 16-byte units of the pool saying which request holds
 * each (a unit handed out twice is found when it is claimed). */
#include <pthread.h>
#include <sched.h>
#include <time.h>

static int chunk_taken(const kda_heap *h, uint32_t c) { return cb_bits(h)[c / 64] >> (c % 64) & 1; }

static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    uint32_t current = 0;
    for (uint32_t s = 0; s < h->state.n_slots; s++) {
        uint64_t value = *cb_slot(h, s);
        if (!cb_slot_chunk(value)) {
            cr_assert_eq(value, 0, "slot %u has no chunk but counts %llx", s, (unsigned long long)value);
            continue;
        }
        uint32_t c = cb_slot_chunk(value) - 1;
        current++;
        cr_assert(chunk_taken(h, c), "slot %u's chunk %u is not taken", s, c);
        cr_assert_leq(cb_slot_bytes(value), h->state.chunk_bytes, "slot %u's chunk is open", s);
        cr_assert_eq(*cb_balance(h, c) + (int64_t)cb_slot_count(value), 0, "slot %u's chunk: %u served, balance %d",
                     s, cb_slot_count(value), *cb_balance(h, c));
    }
    uint32_t taken = 0;
    for (uint32_t c = 0; c < h->state.chunks; c++) {
        taken += chunk_taken(h, c);
        cr_assert_eq(*cb_run(h, c), 0, "chunk %u still starts a large block", c);
    }
    cr_assert_eq(taken, current, "%u chunks taken, %u of them slots' current chunks", taken, current);
}

/* A growable pool's state, once created, grown or reset (the grow tests
 * call it: expect_own_grown_state): its chunks are those of its mapped
 * bytes; the state has room for the limit's, and those beyond the pool are
 * untouched, free as soon as a growth counts them. */
static void expect_chunks_of_the_mapped_bytes(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    uint64_t mapped = h->bytes / h->state.chunk_bytes;
    cr_assert_eq(h->state.chunks, mapped < h->state.chunks_max ? mapped : h->state.chunks_max, "%u chunks in %llu bytes",
                 h->state.chunks, (unsigned long long)h->bytes);
    cr_assert_eq((uint64_t)h->state.chunks_max * h->state.chunk_bytes, pool->plan.limit_bytes,
                 "the state has room for the limit");
    for (uint32_t c = h->state.chunks; c < h->state.chunks_max; c++) {
        cr_assert_eq(chunk_taken(h, c), 0, "chunk %u, beyond the pool, is taken", c);
        cr_assert(*cb_run(h, c) == 0 && *cb_balance(h, c) == 0, "chunk %u, beyond the pool, is in use", c);
    }
}
#define KDA_TEST_GROWN_STATE expect_chunks_of_the_mapped_bytes

/* Requests follow one another in the slot's chunk; the first that does not
 * fit closes it and goes to a new chunk; once every block of the closed
 * chunk is freed, the chunk is free again. */
Test(countedbump, bump_close_and_recycle)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    cr_assert_eq(h->state.chunk_bytes, 256u << 10, "4 MiB / (16 x 1 slot): 256 KiB chunks");
    enum { N = 1024 };
    static unsigned char *b[N];
    uint32_t per_chunk = h->state.chunk_bytes / 1008;
    for (uint32_t i = 0; i <= per_chunk; i++) {
        b[i] = kda_malloc(h, 1000); /* padded to 1008 */
        cr_assert_not_null(b[i]);
        if (i && i < per_chunk) cr_assert_eq(b[i], b[i - 1] + 1008, "block %u follows", i);
        fill(b[i], 1000, i);
    }
    uint32_t first = (uint32_t)((b[0] - h->base) / h->state.chunk_bytes);
    uint32_t second = (uint32_t)((b[per_chunk] - h->base) / h->state.chunk_bytes);
    cr_assert_neq(first, second, "the request that did not fit went to another chunk");
    cr_assert_eq(*cb_balance(h, first), (int32_t)per_chunk, "the closed chunk counts its %u blocks", per_chunk);
    for (uint32_t i = 0; i < per_chunk; i++) {
        cr_assert(intact(b[i], 1000, i), "block %u overwritten", i);
        kda_free(h, b[i]);
    }
    cr_assert_eq(chunk_taken(h, first), 0, "the emptied chunk is free");
    kda_free(h, b[per_chunk]);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Frees before the close count too: a chunk whose blocks were all freed
 * before it closed is recycled by the closer itself. */
Test(countedbump, freed_before_the_close)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    void *a = kda_malloc(h, 64);
    uint32_t c = (uint32_t)(((unsigned char *)a - h->base) / h->state.chunk_bytes);
    kda_free(h, a);
    cr_assert_eq(*cb_balance(h, c), -1);
    void *big = kda_malloc(h, h->state.chunk_bytes / 4); /* fits what is left */
    void *next = kda_malloc(h, h->state.chunk_bytes / 4);
    void *more = kda_malloc(h, h->state.chunk_bytes / 4);
    void *over = kda_malloc(h, h->state.chunk_bytes / 4); /* closes the chunk */
    cr_assert(big && next && more && over);
    kda_free(h, big);
    kda_free(h, next);
    kda_free(h, more);
    cr_assert_eq(chunk_taken(h, c), 0, "chunk %u is free again", c);
    kda_free(h, over);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Requests above a quarter chunk take runs of whole chunks, also runs
 * longer than a bitmap word. */
Test(countedbump, large_blocks)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 128u << 20, 8, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    cr_assert_eq(h->state.chunks, 128, "1 MiB chunks");
    uint64_t sizes[] = {h->state.chunk_bytes / 4 + 16, 3 * (uint64_t)h->state.chunk_bytes, 70 * (uint64_t)h->state.chunk_bytes - 5};
    void *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = kda_malloc(h, sizes[i]);
        cr_assert_not_null(p[i], "%llu bytes", (unsigned long long)sizes[i]);
        cr_assert_eq(((unsigned char *)p[i] - h->base) % h->state.chunk_bytes, 0, "starts a chunk");
        fill(p[i], sizes[i], (uint64_t)i);
    }
    for (int i = 0; i < 3; i++) {
        cr_assert(intact(p[i], sizes[i], (uint64_t)i), "block %d overwritten", i);
        kda_free(h, p[i]);
    }
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Slots take chunks from the bottom of the pool, runs come from the top,
 * so that slots do not cut up the space that runs need.  A run that no
 * bitmap word holds (it crosses a word's edge) is found too. */
Test(countedbump, slots_low_runs_high)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 128u << 20, 8, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    cr_assert_eq(h->state.chunks, 128, "1 MiB chunks, two bitmap words");
    uint64_t C = h->state.chunk_bytes;
    kda_host_set_sm(5);
    unsigned char *small = kda_malloc(h, 100);
    kda_host_set_sm(0);
    cr_assert_eq((small - h->base) / C, 5, "slot 5 starts with chunk 5 (slots hold chunks 0-7)");
    unsigned char *a = kda_malloc(h, 3 * C), *d = kda_malloc(h, 50 * C), *e = kda_malloc(h, 30 * C);
    unsigned char *f = kda_malloc(h, 20 * C);
    cr_assert_eq((a - h->base) / C, 125, "3 chunks at the top");
    cr_assert_eq((d - h->base) / C, 75, "50 below them");
    cr_assert_eq((e - h->base) / C, 34, "30 at the top of the lower word (11 are left in the upper)");
    cr_assert_eq((f - h->base) / C, 14, "20 below those");
    kda_free(h, e); /* free: chunks 8-13 and 34-74; no word holds 40 in a row */
    unsigned char *g = kda_malloc(h, 40 * C);
    cr_assert_not_null(g, "40 chunks across the words' edge");
    cr_assert_eq((g - h->base) / C, 35, "the top 40 of chunks 34-74");
    fill(g, 40 * C, 7);
    cr_assert(intact(g, 40 * C, 7));
    kda_free(h, g);
    kda_free(h, f);
    kda_free(h, d);
    kda_free(h, a);
    kda_free(h, small);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A pool that ran out fails every request, however many, without the
 * slot's count of failed adds growing into its chunk field; once the
 * blocks are freed, as many requests succeed again, in fresh chunks. */
Test(countedbump, exhausted_slot_recovers)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint64_t quarter = h->state.chunk_bytes / 4;
    enum { N = 64 };
    static void *b[N];
    uint32_t got = 0;
    while (got < N && (b[got] = kda_malloc(h, quarter)) != NULL) fill(b[got], quarter, got), got++;
    cr_assert_eq(got, 4 * h->state.chunks, "every chunk handed out in quarters");
    for (int i = 0; i < 100000; i++) cr_assert_null(kda_malloc(h, quarter)); /* 6.5 GB of failed adds */
    cr_assert_eq(*cb_slot(h, 0), 0, "the slot has no chunk and counts nothing");
    for (uint32_t i = 0; i < got; i++) {
        cr_assert(intact(b[i], quarter, i), "block %u overwritten", i);
        kda_free(h, b[i]);
    }
    for (uint32_t i = 0; i < got; i++) cr_assert_not_null(b[i] = kda_malloc(h, quarter), "request %u again", i);
    for (uint32_t i = 0; i < got; i++) kda_free(h, b[i]);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* ---- slots shared by several SMs, and empty slots ---- */

/* Owners of the pool's 16-byte units, a byte each (0: free): a request
 * claims its block's units when it gets the block and gives them back
 * before it frees it, eight units to an atomic exchange where they fill a
 * word.  Returns how many of the units were not as expected (held by
 * another request when claimed; not this request's when given back). */
static uint64_t swap_units(uint8_t *owner, uint64_t first, uint64_t n, uint8_t expect, uint8_t put)
{
    uint64_t wrong = 0, end = first + n, word_put = 0x0101010101010101ull * put;
    for (uint64_t u = first; u < end;) {
        if (u % 8 == 0 && u + 8 <= end) {
            uint64_t old = __atomic_exchange_n((uint64_t *)(owner + u), word_put, __ATOMIC_ACQ_REL);
            for (int i = 0; i < 8; i++) wrong += (uint8_t)(old >> (8 * i)) != expect;
            u += 8;
        } else {
            wrong += __atomic_exchange_n(owner + u, put, __ATOMIC_ACQ_REL) != expect;
            u++;
        }
    }
    return wrong;
}

/* Threads that ask for blocks of one size, many of them through a slot
 * they share: each block's units claimed, the block filled with its
 * owner's pattern, held while the others run, checked, given back, freed. */
typedef struct share_args {
    kda_pool *pool;
    uint8_t *owner;    /* a byte per unit of the pool */
    int *stop;         /* set by the first failure: the others end early */
    uint32_t *arrived; /* threads that have begun */
    uint32_t sm;
    int id, rounds;
    uint64_t size;
    uint64_t served, nulls;
    char failure[200];
} share_args;

static void *share_thread(void *p)
{
    share_args *a = p;
    const kda_heap *h = &a->pool->heap;
    kda_host_set_sm(a->sm);
    kda_host_set_warp((uint32_t)a->id);
    __atomic_add_fetch(a->arrived, 1, __ATOMIC_RELEASE);
    uint8_t tag = (uint8_t)(a->id % 255 + 1);
    for (int r = 0; r < a->rounds && !__atomic_load_n(a->stop, __ATOMIC_RELAXED); r++) {
        unsigned char *b = kda_malloc(h, a->size);
        if (!b) {
            a->nulls++;
            sched_yield();
            continue;
        }
        a->served++;
        if ((uintptr_t)b % KDA_UNIT || b < h->base || b + a->size > h->base + h->bytes) {
            snprintf(a->failure, sizeof a->failure, "SM %u, thread %d: bad pointer %p", a->sm, a->id, (void *)b);
            break;
        }
        uint64_t first = (uint64_t)(b - h->base) / KDA_UNIT, n = (a->size + KDA_UNIT - 1) / KDA_UNIT;
        uint64_t key = mix(((uint64_t)a->id << 32) ^ (uint64_t)r);
        uint64_t held = swap_units(a->owner, first, n, 0, tag);
        if (held) {
            snprintf(a->failure, sizeof a->failure,
                     "SM %u, thread %d: block at offset %llu handed out while another request holds %llu of its "
                     "%llu units",
                     a->sm, a->id, (unsigned long long)(b - h->base), (unsigned long long)held, (unsigned long long)n);
            break;
        }
        fill(b, a->size, key);
        sched_yield(); /* hold it while the others ask */
        if (!intact(b, a->size, key)) {
            snprintf(a->failure, sizeof a->failure, "SM %u, thread %d: block at offset %llu overwritten", a->sm, a->id,
                     (unsigned long long)(b - h->base));
            break;
        }
        uint64_t lost = swap_units(a->owner, first, n, tag, 0);
        if (lost) {
            snprintf(a->failure, sizeof a->failure, "SM %u, thread %d: %llu units of its block taken by others", a->sm,
                     a->id, (unsigned long long)lost);
            break;
        }
        kda_free(h, b);
    }
    if (a->failure[0]) __atomic_store_n(a->stop, 1, __ATOMIC_RELAXED);
    return NULL;
}

typedef struct share_run {
    kda_pool *pool;
    uint8_t *owner;
    share_args *args;
    pthread_t *th;
    int n, started, stop;
    uint32_t arrived;
} share_run;

/* Starts per_sm[i] threads on SM sms[i], each asking `rounds` times for
 * `size` bytes. */
static void share_start(share_run *run, kda_pool *pool, const uint32_t *sms, const int *per_sm, int n_sms, int rounds,
                        uint64_t size)
{
    *run = (share_run){.pool = pool};
    for (int i = 0; i < n_sms; i++) run->n += per_sm[i];
    run->owner = calloc(pool->heap.bytes / KDA_UNIT + 8, 1);
    run->args = calloc((size_t)run->n, sizeof *run->args);
    run->th = calloc((size_t)run->n, sizeof *run->th);
    cr_assert(run->owner && run->args && run->th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64u << 10);
    for (int i = 0, id = 0; i < n_sms; i++)
        for (int j = 0; j < per_sm[i]; j++, id++) {
            run->args[id] = (share_args){pool, run->owner, &run->stop, &run->arrived, sms[i], id, rounds, size,
                                         0, 0, {0}};
            if (pthread_create(&run->th[id], &attr, share_thread, &run->args[id]) != 0) break;
            run->started++;
        }
    pthread_attr_destroy(&attr);
    cr_assert_eq(run->started, run->n, "started %d of %d threads", run->started, run->n);
}

/* Joins the threads: no block handed out twice or overwritten, every unit
 * given back, every chunk free again. */
static void share_finish(share_run *run, const char *what)
{
    uint64_t served = 0, nulls = 0;
    const char *failure = NULL;
    for (int i = 0; i < run->started; i++) {
        pthread_join(run->th[i], NULL);
        served += run->args[i].served;
        nulls += run->args[i].nulls;
        if (!failure && run->args[i].failure[0]) failure = run->args[i].failure;
    }
    cr_assert(!failure, "%s: %s", what, failure);
    cr_log_info("%s: %d threads, %llu blocks of %llu B, %llu NULL", what, run->n, (unsigned long long)served,
                (unsigned long long)run->args[0].size, (unsigned long long)nulls);
    cr_assert_gt(served, 0, "%s: no block served", what);
    uint64_t units = run->pool->heap.bytes / KDA_UNIT, u = 0;
    while (u < units && !run->owner[u]) u++;
    cr_assert_eq(u, units, "%s: unit %llu still held", what, (unsigned long long)u);
    expect_all_free(run->pool);
    free(run->th);
    free(run->args);
    free(run->owner);
}

/* How many SMs a slot takes adds from (cb_sharers): each of up to 2048
 * threads an SM may add a quarter chunk to a closed value, and the bytes
 * field must stay below 2^30, the count below 2^17. */
Test(countedbump, sharers_of_a_slot)
{
    uint32_t expect[][2] = {{1u << 20, 1}, {1u << 19, 3}, {1u << 18, 7}, {1u << 17, 15}, {1u << 16, 31},
                            {1u << 15, 62}, {1u << 14, 63}, {1u << 10, 63}, {256, 63}};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        uint64_t C = expect[i][0], k = cb_sharers((uint32_t)C);
        cr_assert_eq(k, expect[i][1], "chunks of %llu B: %llu SMs a slot", (unsigned long long)C,
                     (unsigned long long)k);
        cr_assert_lt(C + k * CB_SM_THREADS * (C / 4), 1ull << CB_BYTES_BITS);
        cr_assert_lt(C / KDA_UNIT + k * CB_SM_THREADS, 1ull << CB_COUNT_BITS);
        cr_assert(C + (k + 1) * CB_SM_THREADS * (C / 4) >= 1ull << CB_BYTES_BITS ||
                      C / KDA_UNIT + (k + 1) * CB_SM_THREADS >= 1ull << CB_COUNT_BITS,
                  "one SM more would still fit");
    }
}

/* A growable pool whose limit holds fewer than two chunks an SM has fewer
 * slots than SMs; the plan makes its chunks smaller until the SMs that
 * share a slot fit its bound.  64 SMs, a start of 64 MiB and a limit of
 * 127 MiB: 127 chunks of 1 MiB would leave 63 slots, SM 63 beside SM 0 on
 * slot 0, two SMs where 1 MiB chunks admit one; 512 KiB chunks give 254,
 * and each SM its own slot. */
Test(countedbump, plan_keeps_the_sms_within_a_slots_bound)
{
    kda_pool pool;
    /* the grow tests' pool (test_alloc_grow.c: 64 KiB of 64 MiB, 4 SMs) is
     * planned for about one chunk a slot: 16 KiB, requests above 4 KiB take
     * runs */
    cr_assert_eq(kda_host_pool_create_growable(&pool, 64u << 10, 64u << 20, 4, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.state.chunk_bytes, 16u << 10);
    cr_assert_eq(pool.heap.state.chunks, (64u << 10) / (16u << 10));
    cr_assert_eq(pool.heap.state.chunks_max, (64u << 20) / (16u << 10), "the state has room for the limit");
    expect_chunks_of_the_mapped_bytes(&pool);
    kda_host_pool_destroy(&pool);
    cr_assert_eq(kda_host_pool_create_growable(&pool, 64u << 20, 127u << 20, 64, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.state.chunk_bytes, 512u << 10);
    cr_assert_eq(pool.heap.state.n_slots, 64);
    cr_assert_eq(pool.heap.state.chunks_max, 254);
    kda_host_pool_destroy(&pool);
    const uint64_t MiB = 1u << 20;
    const uint64_t cases[][3] = {{64 * MiB, 127 * MiB, 64},  {132 * MiB, 132 * MiB, 132}, {2 * MiB, 2 * MiB, 132},
                                 {132 * MiB, 200 * MiB, 132}, {1 * MiB, 1 * MiB, 132},    {4096, 4096, 132},
                                 {256u << 10, 256u << 10, 132}, {8 * MiB, 15 * MiB, 8}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(kda_host_pool_create_growable(&pool, cases[i][0], cases[i][1], (uint32_t)cases[i][2], err,
                                                   sizeof err),
                     0, "%s", err);
        const kda_heap *h = &pool.heap;
        uint32_t sms = (uint32_t)cases[i][2], per_slot = (sms + h->state.n_slots - 1) / h->state.n_slots;
        cr_assert(per_slot <= cb_sharers(h->state.chunk_bytes) || h->state.chunk_bytes <= CB_MIN_CHUNK,
                  "start %llu, limit %llu, %u SMs: %u slots of %u B chunks, %u SMs a slot where %u fit",
                  (unsigned long long)cases[i][0], (unsigned long long)cases[i][1], sms, h->state.n_slots, h->state.chunk_bytes,
                  per_slot, cb_sharers(h->state.chunk_bytes));
        cr_assert(h->state.n_slots == sms || h->state.chunks_max < 2ull * sms, "slots cut only for want of chunks");
        kda_host_pool_destroy(&pool);
    }
}

/* The pool above, grown to its limit (chunks free for the slots). */
static void create_grown(kda_pool *pool)
{
    cr_assert_eq(kda_host_pool_create_growable(pool, 64u << 20, 127u << 20, 64, err, sizeof err), 0, "%s", err);
    cr_assert_eq(kda_host_pool_grow(pool, 127u << 20, err, sizeof err), 0, "%s", err);
}

/* SMs with ids at or above the slot count (as %smid may be: it need not
 * lie below the SM count) share slots: SMs 0, g, 2g and 3g (g slots) all
 * map to slot 0.  Requests that do not fit wait for the closer, each
 * thread adding once to the closed value; so no more SMs may add to a slot
 * than its bound admits, and the others take whole chunks.  Here the
 * closer is held up on purpose: slot 0 is set closed by hand and no
 * request is its closer, so all of slot 0's requests wait.  Once they have
 * asked, 2048 threads on each of the four SMs, each for a quarter chunk,
 * the slot must still name its chunk.  The test then plays the closer, and
 * the requests go on (with SM 1's, on its own slot), every block claimed
 * unit by unit and pattern-checked. */
Test(countedbump, shared_slot_bound_while_its_closer_is_held_up, .timeout = 300)
{
    kda_pool pool;
    create_grown(&pool);
    kda_heap *h = &pool.heap;
    uint64_t C = h->state.chunk_bytes;
    uint32_t g = h->state.n_slots, adders = cb_sharers(h->state.chunk_bytes) < 4 ? cb_sharers(h->state.chunk_bytes) : 4;
    uint64_t closed = cb_slot_value(1) | (C + KDA_UNIT) << CB_COUNT_BITS; /* chunk 0, past its end, none served */
    *cb_slot(h, 0) = closed;
    const uint32_t sms[] = {0, g, 2 * g, 3 * g, 1};
    const int per_sm[] = {2048, 2048, 2048, 2048, 64};
    share_run run;
    share_start(&run, &pool, sms, per_sm, 5, 4, C / 4);
    /* Wait until every thread has begun, slot 0 counts the adds of every
     * thread its bound admits, and its value has stopped changing for
     * 200 ms (an add too many would show); or it names another chunk.  On
     * a loaded machine (CI, sanitizers) threads may start late: up to a
     * minute. */
    uint64_t now = closed;
    for (int i = 0, still = 0; i < 60000 && still < 200 && cb_slot_chunk(now) == 1; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        uint64_t then = now;
        now = __atomic_load_n(cb_slot(h, 0), __ATOMIC_ACQUIRE);
        int begun = __atomic_load_n(&run.arrived, __ATOMIC_ACQUIRE) == (uint32_t)run.n;
        still = begun && now == then && cb_slot_count(now) >= adders * CB_SM_THREADS ? still + 1 : 0;
    }
    cr_log_info("%u adds to the closed value, bytes %llu", cb_slot_count(now), (unsigned long long)cb_slot_bytes(now));
    cr_assert_eq(cb_slot_chunk(now), 1, "the slot's chunk field is %u, not 1: the adds carried into it",
                 cb_slot_chunk(now));
    cr_assert_leq(cb_slot_bytes(now), cb_slot_bytes(closed) + (uint64_t)adders * CB_SM_THREADS * (C / 4),
                  "bytes %llu", (unsigned long long)cb_slot_bytes(now));
    cr_assert_eq(cb_slot_count(now), adders * CB_SM_THREADS, "one add from each thread of the %u SMs the slot admits",
                 adders);
    /* The closer: the next chunk in the slot, then the closed chunk (none
     * of its requests served) free again.  The SMs beyond the slot's bound
     * and SM 1 take chunks meanwhile and may hold every free one for a
     * moment: the closer waits for one (up to 10 s on a loaded machine). */
    uint64_t next = cb_fresh_chunk(h);
    for (int i = 0; i < 10000 && !next; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        next = cb_fresh_chunk(h);
    }
    cr_assert_neq(next, 0, "a free chunk for the slot within 10 s");
    __atomic_store_n(cb_slot(h, 0), next, __ATOMIC_RELEASE);
    cb_recycle(h, 0);
    share_finish(&run, "slot 0 shared, its closer held up");
    kda_host_pool_destroy(&pool);
}

/* The same pool at full speed: SMs 0, g, 2g, 3g and 4g on slot 0 (those
 * beyond the slot's bound taking whole chunks), and SMs 1 and 2 on their
 * own slots, every block checked unit by unit. */
Test(countedbump, shared_slot_serves_each_block_once, .timeout = 120)
{
    kda_pool pool;
    create_grown(&pool);
    uint32_t g = pool.heap.state.n_slots;
    const uint32_t sms[] = {0, g, 2 * g, 3 * g, 4 * g, 1, 2};
    const int per_sm[] = {1024, 1024, 1024, 1024, 1024, 256, 256};
    share_run run;
    share_start(&run, &pool, sms, per_sm, 7, 6, pool.heap.state.chunk_bytes / 4);
    share_finish(&run, "slot 0 shared by five SMs");
    kda_host_pool_destroy(&pool);
}

/* An empty slot and exactly one free chunk: every request of a burst must
 * be served, since the chunk holds them all.  A request that finds no free
 * chunk while another is taking the last one to install it must wait for
 * that fill, not report the pool empty.  Threads on the slot's own SM and
 * on one that shares the slot (the pool is planned for one SM). */
enum { BURST = 8 };
typedef struct burst_state {
    kda_pool *pool;
    uint32_t go;   /* the trial's number: the threads ask when it changes */
    uint32_t done; /* threads done with the trial */
    int quit;
    void *block[BURST];
} burst_state;
typedef struct burst_args {
    burst_state *st;
    int id;
} burst_args;

/* Spins until *word differs from `seen` (yielding now and then, as there
 * are more threads than cores); returns it. */
static uint32_t spin_while(const uint32_t *word, uint32_t seen)
{
    uint32_t now;
    for (unsigned i = 1; (now = __atomic_load_n(word, __ATOMIC_ACQUIRE)) == seen; i++)
        if (i % 256 == 0) sched_yield();
    return now;
}

static void *burst_thread(void *p)
{
    burst_args *a = p;
    burst_state *st = a->st;
    kda_host_set_sm((uint32_t)a->id % 2); /* SM 1 shares slot 0 */
    for (uint32_t trial = 0;;) {
        trial = spin_while(&st->go, trial);
        if (__atomic_load_n(&st->quit, __ATOMIC_ACQUIRE)) return NULL;
        st->block[a->id] = kda_malloc(&st->pool->heap, 16);
        __atomic_add_fetch(&st->done, 1, __ATOMIC_RELEASE);
    }
}

Test(countedbump, no_null_while_a_chunk_is_free, .timeout = 120)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 64u << 10, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint64_t C = h->state.chunk_bytes;
    cr_assert(C == 4096 && h->state.chunks == 16 && h->state.n_slots == 1, "16 chunks of 4 KiB, one slot");
    kda_host_set_sm(0);
    /* Every chunk but the slot's taken by runs of one chunk each. */
    void *run[16];
    int runs = 0;
    while (runs < 16 && (run[runs] = kda_malloc(h, C)) != NULL) runs++;
    cr_assert_eq(runs, 15, "15 runs beside the slot's chunk");
    /* The slot's chunk filled and closed with no next chunk: slot empty. */
    void *quarter[4];
    for (int i = 0; i < 4; i++) cr_assert_not_null(quarter[i] = kda_malloc(h, C / 4));
    cr_assert_null(kda_malloc(h, C / 4), "no chunk for the slot");
    cr_assert_eq(*cb_slot(h, 0), 0, "the slot is empty");
    kda_free(h, run[--runs]); /* one chunk free */

    burst_state st = {.pool = &pool};
    burst_args args[BURST];
    pthread_t th[BURST];
    for (int i = 0; i < BURST; i++) {
        args[i] = (burst_args){&st, i};
        cr_assert_eq(pthread_create(&th[i], NULL, burst_thread, &args[i]), 0);
    }
    int trials = 100000, failed_trials = 0, nulls = 0;
    for (int t = 0; t < trials; t++) {
        __atomic_store_n(&st.done, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st.go, (uint32_t)t + 1, __ATOMIC_RELEASE);
        sched_yield(); /* leave both cores to the threads that ask */
        for (uint32_t d = 0; d < BURST;) d = spin_while(&st.done, d);
        int missing = 0;
        for (int i = 0; i < BURST; i++) missing += st.block[i] == NULL;
        failed_trials += missing > 0;
        nulls += missing;
        /* Back to an empty slot and one free chunk: fill the slot's chunk
         * until it closes with no next chunk, then free its blocks. */
        void *more[8];
        int m = 0;
        while (m < 8 && (more[m] = kda_malloc(h, C / 4)) != NULL) m++;
        cr_assert(m < 8 && *cb_slot(h, 0) == 0, "trial %d: the slot did not run dry", t);
        for (int i = 0; i < BURST; i++) kda_free(h, st.block[i]);
        for (int i = 0; i < m; i++) kda_free(h, more[i]);
        uint32_t taken = 0;
        for (uint32_t c = 0; c < h->state.chunks; c++) taken += chunk_taken(h, c);
        cr_assert_eq(taken, 15, "trial %d: %u chunks taken, not 14 runs and the closed chunk", t, taken);
    }
    __atomic_store_n(&st.quit, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&st.go, (uint32_t)trials + 1, __ATOMIC_RELEASE);
    for (int i = 0; i < BURST; i++) pthread_join(th[i], NULL);
    cr_assert_eq(failed_trials, 0, "%d of %d bursts got %d NULLs in all with a free chunk for them", failed_trials,
                 trials, nulls);
    for (int i = 0; i < 4; i++) kda_free(h, quarter[i]);
    while (runs > 0) kda_free(h, run[--runs]);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}
