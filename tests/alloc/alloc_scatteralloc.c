/* alloc_scatteralloc.c - ScatterAlloc's own host tests, included by
 * test_alloc.c (test_alloc_scatteralloc).  Oracles: the page table read
 * directly (every page free again, bits and fill levels zero), addresses
 * computed from the page size, owner patterns, and an owner map of the
 * pool in 16-byte units (a nearly full pool under many threads). */
#include <pthread.h>
#include <sched.h>
#include <time.h>

/* Every page's word, chunk bits and every region's count are zero again
 * (top holds hints only, which may outlive their page's split). */
static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    for (uint32_t page = 0; page < h->state.pages; page++) {
        cr_assert_eq(*sa_word(h, page), 0, "page %u: chunk size %llu, fill %u", page,
                     (unsigned long long)sa_size_of(*sa_word(h, page)), sa_fill_of(*sa_word(h, page)));
        for (uint32_t i = 0; i < 32; i++) cr_assert_eq(*sa_sub(h, page, i), 0, "page %u: bits left set", page);
    }
    for (uint32_t r = 0; r < sa_regions(h->state.pages); r++) cr_assert_eq(*sa_full(h, r), 0, "region %u still counts full pages (%u)", r, *sa_full(h, r));
}

static uint32_t page_of(const kda_pool *pool, const void *p)
{
    return (uint32_t)(((const unsigned char *)p - pool->heap.base) / SA_PAGE);
}

/* Requests of one size from one SM share a page, one chunk after another,
 * until the page is full; the next request moves on to another page. */
Test(scatteralloc, one_size_fills_a_page)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    uint32_t chunks = (uint32_t)(SA_PAGE / 112);
    void *blocks[1100];
    cr_assert_leq(chunks, 1100);
    for (uint32_t i = 0; i < chunks; i++) {
        blocks[i] = kda_malloc(&pool.heap, 100); /* padded to 112 */
        cr_assert_not_null(blocks[i]);
        cr_assert_eq(page_of(&pool, blocks[i]), page_of(&pool, blocks[0]), "chunk %u left the page", i);
        cr_assert_eq(((unsigned char *)blocks[i] - pool.heap.base) % SA_PAGE % 112, 0, "not on a chunk boundary");
        fill(blocks[i], 100, i);
    }
    uint32_t page = page_of(&pool, blocks[0]);
    cr_assert_eq(sa_size_of(*sa_word(&pool.heap, page)), 112);
    cr_assert_eq(sa_fill_of(*sa_word(&pool.heap, page)), chunks);
    cr_assert_eq(*sa_full(&pool.heap, page / SA_REGION), 1, "the region counts the full page");
    void *next = kda_malloc(&pool.heap, 100);
    cr_assert_neq(page_of(&pool, next), page, "a full page takes no more");
    for (uint32_t i = 0; i < chunks; i++) {
        cr_assert(intact(blocks[i], 100, i), "chunk %u overwritten", i);
        kda_free(&pool.heap, blocks[i]);
    }
    kda_free(&pool.heap, next);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A smaller request may use a page of chunks up to twice its size, not
 * larger; 16-byte chunks use both bit-field levels (more than 32). */
Test(scatteralloc, max_frag_and_two_levels)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    sa_diag d = {{0}};
    void *a = kda_malloc(h, 256);
    uint32_t page = page_of(&pool, a);
    void *b = sa_try_page(h, page, 256, &d);
    cr_assert_not_null(b, "a second 256-byte chunk on the page");
    cr_assert_null(sa_try_page(h, page, 128, &d), "the page is split for 256, not 128");
    enum { N = 600 };
    static void *small[N];
    for (int i = 0; i < N; i++) {
        small[i] = kda_malloc(h, 16);
        cr_assert_not_null(small[i]);
        fill(small[i], 16, (uint64_t)i + 7);
    }
    for (int i = 0; i < N; i++) {
        cr_assert(intact(small[i], 16, (uint64_t)i + 7), "16-byte chunk %d overwritten", i);
        kda_free(h, small[i]);
    }
    kda_free(h, a);
    kda_free(h, b);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* The repair: a page retired and re-split to another size refuses a
 * reservation made with the size read before (which would overlap). */
Test(scatteralloc, stale_chunk_size_is_refused)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    sa_diag d = {{0}};
    void *a = kda_malloc(h, 64);
    uint32_t page = page_of(&pool, a);
    kda_free(h, a);
    cr_assert_eq(*sa_word(h, page), 0, "the emptied page is retired");
    *sa_word(h, page) = sa_pack(1024, 0); /* re-split by another thread */
    cr_assert_null(sa_try_page(h, page, 64, &d), "a reservation for 64-byte chunks on a 1 KiB page");
    cr_assert_eq(sa_fill_of(*sa_word(h, page)), 0, "the reservation is given back");
    *sa_word(h, page) = 0;
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Requests larger than a page get whole consecutive pages from the top of
 * the pool down; freeing them releases every page. */
Test(scatteralloc, large_requests_take_pages_from_the_top)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint64_t size = 3 * SA_PAGE - 100;
    unsigned char *a = kda_malloc(h, size), *b = kda_malloc(h, size);
    cr_assert(a && b);
    cr_assert_eq(a, h->base + (uint64_t)(h->state.pages - 3) * SA_PAGE, "the top three pages");
    cr_assert_eq(b, a - 3 * SA_PAGE, "the next three below");
    fill(a, size, 1);
    fill(b, size, 2);
    void *small = kda_malloc(h, 64);
    cr_assert((unsigned char *)small < b, "small requests stay below");
    cr_assert(intact(a, size, 1) && intact(b, size, 2));
    kda_free(h, a);
    kda_free(h, b);
    kda_free(h, small);
    cr_assert_null(kda_malloc(h, h->bytes + 1));
    cr_assert_null(kda_malloc(h, (uint64_t)(h->state.pages + 1) * SA_PAGE - 8), "more pages than the pool has");
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A reservation that finds its page re-split to another size, and makes
 * it full, counts that crossing and uncounts it with its give-back: the
 * region's count of full pages stays as it was (it used to wrap below 0,
 * which hid the region from every walk). */
Test(scatteralloc, refused_reservation_keeps_the_full_count)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    sa_diag d = {{0}};
    uint32_t page = 5, region = page / SA_REGION, chunks = sa_chunks(1024);
    *sa_word(h, page) = sa_pack(1024, chunks - 1); /* re-split by others, one chunk short of full */
    cr_assert_null(sa_try_page(h, page, 64, &d), "a reservation made for 64-byte chunks");
    cr_assert_eq(*sa_full(h, region), 0, "the region's full count moved");
    cr_assert_eq(*sa_word(h, page), sa_pack(1024, chunks - 1), "the reservation is given back");
    *sa_word(h, page) = 0;
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A large block's first page holds its size below SA_TAIL (2 GiB): a
 * request of 2 GiB or more gets NULL, even where the pages are free, not a
 * block whose first page reads as another's tail. */
Test(scatteralloc, large_blocks_below_2_gib)
{
    kda_pool pool;
    uint64_t bytes = (2ull << 30) + 8 * SA_PAGE;
    cr_assert_eq(kda_host_pool_create(&pool, bytes, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    cr_assert_null(kda_malloc(h, 2ull << 30), "2 GiB in one block");
    unsigned char *p = kda_malloc(h, (2ull << 30) - SA_PAGE);
    cr_assert_not_null(p, "2 GiB less a page");
    kda_free(h, p);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A large search starts below the last large block and wraps to the top:
 * pages freed above it are found only once the pages below it are gone. */
Test(scatteralloc, large_search_starts_at_the_last_block)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint64_t three = 3 * SA_PAGE;
    unsigned char *a = kda_malloc(h, three), *b = kda_malloc(h, three);
    cr_assert(a && b && b == a - three);
    kda_free(h, a);
    unsigned char *c = kda_malloc(h, three);
    cr_assert_eq(c, b - three, "below the last block, not in the pages freed above it");
    uint32_t below = (uint32_t)((c - h->base) / SA_PAGE);
    unsigned char *d = kda_malloc(h, (uint64_t)(below - 1) * SA_PAGE);
    cr_assert_eq(d, h->base + SA_PAGE, "every page below but the lowest");
    unsigned char *e = kda_malloc(h, three);
    cr_assert_eq(e, a, "the bottom has one page: the search wraps to the top");
    fill(e, three, 5);
    cr_assert_null(kda_malloc(h, three), "no three free pages left");
    cr_assert(intact(e, three, 5));
    kda_free(h, b), kda_free(h, c), kda_free(h, d), kda_free(h, e);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Exhaustion gives NULL, and after freeing everything the same number of
 * requests succeeds again. */
Test(scatteralloc, null_on_exhaustion_then_usable)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 2u << 20, 4, err, sizeof err), 0, "%s", err);
    enum { MAX = 8192 };
    static void *blocks[MAX];
    int first = 0;
    for (int round = 0; round < 3; round++) {
        int n = 0;
        for (; n < MAX; n++) {
            kda_host_set_sm((uint32_t)n % 4);
            blocks[n] = kda_malloc(&pool.heap, 1000);
            if (!blocks[n]) break;
            fill(blocks[n], 1000, (uint64_t)n);
        }
        kda_host_set_sm(0);
        cr_assert(n > 1000 && n < MAX, "round %d: %d blocks of 1000 B from 2 MiB", round, n);
        if (round == 0) first = n;
        cr_assert_eq(n, first, "round %d: %d blocks, the first round had %d", round, n, first);
        for (int i = 0; i < n; i++) {
            cr_assert(intact(blocks[i], 1000, (uint64_t)i), "block %d overwritten", i);
            kda_free(&pool.heap, blocks[i]);
        }
        expect_all_free(&pool);
    }
    kda_host_pool_destroy(&pool);
}

/* ---- a nearly full pool under many threads ----
 * Threads allocate mixed sizes (16 B .. 3 pages, many near half a page and
 * a page) until the pool refuses, then free some and go on, so the pool
 * stays nearly full while pages are retired and re-split all the time.
 * Oracles: an owner map of the pool in 16-byte units, claimed by CAS for
 * every byte a block was asked for (a second claim is an overlap, caught
 * at once, naming both owners); each block's pattern, checked before its
 * free and every few steps; and the state whole again at the end. */
#define NF_THREADS 12
#define NF_LIVE 96

typedef struct nf_shared {
    kda_pool *pool;
    uint32_t *owner; /* [pool bytes / 16]: 0 free, else the holder's tag */
    int iterations;
    volatile int stop;
    char failure[256];
    uint32_t failed; /* the first failure's CAS */
} nf_shared;

typedef struct nf_args {
    nf_shared *s;
    uint32_t id;
    uint64_t seed, nulls, allocations, large;
} nf_args;

static void nf_fail(nf_shared *s, const char *what)
{
    if (__atomic_exchange_n(&s->failed, 1u, __ATOMIC_SEQ_CST) == 0) snprintf(s->failure, sizeof s->failure, "%s", what);
    s->stop = 1;
}

/* Mixed sizes, with weight where a page's behaviour changes (the sizes
 * named for 8 KiB pages): its chunk count crosses 32 (256 B), one chunk a
 * page (above half a page), a page exactly, and just above it (the large
 * path). */
static uint64_t nf_size(uint64_t *rng)
{
    *rng = mix(*rng + 0x9e3779b97f4a7c15ull);
    uint64_t r = *rng >> 8, kind = *rng % 100;
    if (kind < 30) return 1 + r % 256;                               /* two-level pages */
    if (kind < 50) return 200 + r % 400;                             /* around 32 chunks */
    if (kind < 65) return 1024 + r % (SA_PAGE / 2 - 1024);           /* up to half a page */
    if (kind < 80) return SA_PAGE / 2 - 64 + r % 192;                /* around half a page */
    if (kind < 90) return SA_PAGE - 64 + r % 128;                    /* around a page */
    return SA_PAGE + 1 + r % (2 * SA_PAGE + SA_PAGE / 2);           /* 1 .. 3.5 pages */
}

static int nf_claim(nf_args *a, const unsigned char *p, uint64_t size, uint32_t tag)
{
    nf_shared *s = a->s;
    uint64_t first = (uint64_t)(p - s->pool->heap.base) / 16, n = (size + 15) / 16;
    for (uint64_t u = first; u < first + n; u++) {
        uint32_t expected = 0;
        if (!__atomic_compare_exchange_n(&s->owner[u], &expected, tag, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            char what[256];
            const kda_heap *h = &s->pool->heap;
            uint32_t page = (uint32_t)(u * 16 / SA_PAGE);
            uint64_t w = *sa_word(h, page);
            snprintf(what, sizeof what,
                     "overlap: thread %u got %p (%llu B) whose byte %llu is held by tag %08x (thread %u); page %u "
                     "chunk %llu fill %u top %08x",
                     a->id, (const void *)p, (unsigned long long)size, (unsigned long long)(u - first) * 16, expected,
                     expected >> 20, page, (unsigned long long)sa_size_of(w), sa_fill_of(w), *sa_top(h, page));
            nf_fail(s, what);
            for (uint64_t v = first; v < u; v++) __atomic_store_n(&s->owner[v], 0u, __ATOMIC_SEQ_CST);
            return -1;
        }
    }
    return 0;
}

static int nf_release(nf_args *a, const unsigned char *p, uint64_t size, uint32_t tag)
{
    nf_shared *s = a->s;
    uint64_t first = (uint64_t)(p - s->pool->heap.base) / 16, n = (size + 15) / 16;
    for (uint64_t u = first; u < first + n; u++) {
        uint32_t was = __atomic_exchange_n(&s->owner[u], 0u, __ATOMIC_SEQ_CST);
        if (was != tag) {
            char what[160];
            snprintf(what, sizeof what, "thread %u: unit %llu of its block %p held by tag %08x", a->id,
                     (unsigned long long)(u - first), (const void *)p, was);
            nf_fail(s, what);
            return -1;
        }
    }
    return 0;
}

static void *nf_thread(void *p)
{
    nf_args *a = p;
    nf_shared *s = a->s;
    kda_heap *h = &s->pool->heap;
    kda_host_set_sm(a->id % 4);
    kda_host_set_warp(a->id);
    uint64_t rng = mix(a->seed * 1000003u + a->id + 1);
    void *block[NF_LIVE] = {0};
    uint64_t size[NF_LIVE] = {0}, key[NF_LIVE] = {0};
    uint32_t tag[NF_LIVE] = {0}, seq = 1;
    int refused = 0;
    for (int it = 0; it < s->iterations && !s->stop; it++) {
        rng = mix(rng + 0x632be59bd9b4e019ull);
        int slot = (int)(rng % NF_LIVE);
        /* after a refusal, free (the pool is full); else mostly allocate */
        int want_free = block[slot] && (refused || rng % 8 == 0);
        if (block[slot] && !want_free) {
            if (!intact(block[slot], size[slot], key[slot])) {
                char what[160];
                snprintf(what, sizeof what, "thread %u: live block %p of %llu B overwritten", a->id, block[slot],
                         (unsigned long long)size[slot]);
                nf_fail(s, what);
            }
            continue;
        }
        if (want_free) {
            if (!intact(block[slot], size[slot], key[slot])) {
                char what[160];
                snprintf(what, sizeof what, "thread %u: block %p of %llu B overwritten before its free", a->id,
                         block[slot], (unsigned long long)size[slot]);
                nf_fail(s, what);
                break;
            }
            if (nf_release(a, block[slot], size[slot], tag[slot])) break;
            kda_free(h, block[slot]);
            block[slot] = NULL;
            refused = refused > 0 ? refused - 1 : 0;
            continue;
        }
        size[slot] = nf_size(&rng);
        key[slot] = mix(((uint64_t)a->id << 40) ^ (uint64_t)it ^ a->seed << 20);
        unsigned char *c = kda_malloc(h, size[slot]);
        a->allocations++;
        if (!c) {
            a->nulls++;
            refused = 4; /* free a few before asking again */
            continue;
        }
        a->large += size[slot] > SA_PAGE;
        tag[slot] = a->id << 20 | (seq++ & 0xfffffu);
        if (!tag[slot]) tag[slot] = 1;
        if ((uintptr_t)c % KDA_UNIT || c < h->base || c + size[slot] > h->base + h->bytes) {
            nf_fail(s, "a pointer misaligned or outside the pool");
            break;
        }
        if (nf_claim(a, c, size[slot], tag[slot])) break;
        block[slot] = c;
        fill(c, size[slot], key[slot]);
        if (it % 32 == 0) sched_yield();
    }
    for (int i = 0; i < NF_LIVE; i++)
        if (block[i]) {
            if (!intact(block[i], size[i], key[i])) nf_fail(s, "a block overwritten by the end");
            nf_release(a, block[i], size[i], tag[i]);
            kda_free(h, block[i]);
        }
    return NULL;
}

static uint32_t nf_drifted; /* regions whose full count did not return to 0 */

/* One run: `pages` pages, NF_THREADS threads of `iterations` steps. */
static void nf_run(uint32_t pages, int iterations, uint64_t seed, uint64_t *nulls, uint64_t *allocations,
                   uint64_t *large)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, (uint64_t)pages * SA_PAGE, 4, err, sizeof err), 0, "%s", err);
    nf_shared s = {&pool, calloc(pool.heap.bytes / 16, sizeof(uint32_t)), iterations, 0, {0}, 0};
    cr_assert_not_null(s.owner);
    pthread_t th[NF_THREADS];
    nf_args args[NF_THREADS];
    for (uint32_t i = 0; i < NF_THREADS; i++) {
        args[i] = (nf_args){&s, i, seed, 0, 0, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, nf_thread, &args[i]), 0);
    }
    *nulls = *allocations = *large = 0;
    for (uint32_t i = 0; i < NF_THREADS; i++) {
        pthread_join(th[i], NULL);
        *nulls += args[i].nulls;
        *allocations += args[i].allocations;
        *large += args[i].large;
    }
    cr_assert_eq(s.failed, 0, "pool of %u pages, seed %llu: %s", pages, (unsigned long long)seed, s.failure);
    for (uint64_t u = 0; u < pool.heap.bytes / 16; u++) cr_assert_eq(s.owner[u], 0, "unit %llu still owned", (unsigned long long)u);
    /* expect_all_free, with the regions' full counts only counted (so that
     * the rounds go on looking for overlaps) */
    const kda_heap *h = &pool.heap;
    for (uint32_t page = 0; page < h->state.pages; page++) {
        cr_assert_eq(*sa_word(h, page), 0, "page %u: chunk size %llu, fill %u", page,
                     (unsigned long long)sa_size_of(*sa_word(h, page)), sa_fill_of(*sa_word(h, page)));
        for (uint32_t i = 0; i < 32; i++) cr_assert_eq(*sa_sub(h, page, i), 0, "page %u: bits left set", page);
    }
    for (uint32_t r = 0; r < sa_regions(h->state.pages); r++)
        if (*sa_full(h, r)) {
            cr_log_warn("pool of %u pages, seed %llu: region %u counts %d full pages with every page free", pages,
                        (unsigned long long)seed, r, (int32_t)*sa_full(h, r));
            nf_drifted++;
        }
    free(s.owner);
    kda_host_pool_destroy(&pool);
}

Test(scatteralloc, nearly_full_pool_mixed_sizes, .timeout = 280)
{
    const char *env = getenv("KDA_NF_ROUNDS");
    int rounds = env ? atoi(env) : 6;
    static const uint32_t pool_pages[] = {128, 160, 256, 64, 40};
    for (int r = 0; r < rounds; r++) {
        uint32_t pages = pool_pages[r % (int)(sizeof pool_pages / sizeof pool_pages[0])];
        uint64_t nulls, allocations, large;
        nf_run(pages, 40000, (uint64_t)r, &nulls, &allocations, &large);
        cr_log_info("round %d: %u pages, %llu allocations, %llu NULL, %llu large", r, pages,
                    (unsigned long long)allocations, (unsigned long long)nulls, (unsigned long long)large);
        cr_assert_gt(nulls, allocations / 50, "round %d: the pool must run full (%llu of %llu NULL)", r,
                     (unsigned long long)nulls, (unsigned long long)allocations);
    }
    cr_expect_eq(nf_drifted, 0, "%u runs ended with a region's full count not 0", nf_drifted);
}

/* The first page kda_malloc(size) looks at, from sm 0, warp 0, super block 0. */
static uint32_t first_page_for(const kda_heap *h, uint64_t size)
{
    size = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    return (uint32_t)((size * SA_K_SIZE) % sa_sb_pages(h));
}

/* A refused reservation that lands on a free page (fill 0 -> 1, size 0: it
 * counts no crossing) is inherited by the next split; split to one chunk a
 * page (a request above half a page), the inherited fill is "full", and
 * the stale give-back uncounts a crossing nobody counted: full[r] wraps to
 * 2^32 - 1 and every walk skips the region from then on. */
Test(scatteralloc, inherited_fill_keeps_the_full_count)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 16 * SA_PAGE, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint64_t size = SA_PAGE / 2 + 100;
    uint32_t page = first_page_for(h, size);
    /* thread A read `page` as (S', f) and was stalled; the page was retired;
     * A's add lands: (0, 1) */
    *sa_word(h, page) = sa_pack(0, 1);
    /* B splits it for `size` (fill 1 inherited: the page is full, so B
     * does not reserve there) and moves on to the next page */
    void *b = kda_malloc(h, size);
    cr_assert_not_null(b);
    cr_assert_eq(sa_size_of(*sa_word(h, page)), (size + 15) & ~15ull, "B split the page");
    /* A gives its reservation back */
    sa_unreserve(h, page);
    kda_free(h, b);
    cr_expect_eq(*sa_full(h, 0), 0, "the region counts %d full pages", (int32_t)*sa_full(h, 0));
    void *c = kda_malloc(h, 64);
    cr_expect_not_null(c, "an empty pool refuses 64 B: its only region is skipped as full");
    kda_free(h, c);
    *sa_full(h, 0) = 0;
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A pool of four pages where requests of 16 B and of `other` bytes both
 * start on one page (the tests below replay orders of one page's frees). */
static kda_heap *one_page_pool(kda_pool *pool, uint64_t other)
{
    cr_assert_eq(kda_host_pool_create(pool, 4 * SA_PAGE, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(first_page_for(&pool->heap, 16), first_page_for(&pool->heap, other), "both sizes start on one page");
    return &pool->heap;
}

/* The chunk index of block p on its page, chunks of `chunk` bytes. */
static uint32_t spot_of(const kda_heap *h, const void *p, uint64_t chunk)
{
    return (uint32_t)((uint64_t)((const unsigned char *)p - h->base) % SA_PAGE / chunk);
}

/* On the GPU a free's bit clears may land after its give-back.  Played in
 * that order: the last chunk of a page of more than 32 chunks is freed, its
 * clear of top's hint not yet landed; the page retires and is split anew
 * into 16 chunks and one is taken; then the late hint clear lands.  The
 * next request must get another chunk. */
Test(scatteralloc, late_hint_clear_never_frees_a_live_chunk)
{
    kda_pool pool;
    uint64_t small = SA_PAGE / 16; /* 16 chunks: one level */
    kda_heap *h = one_page_pool(&pool, small);
    unsigned char *a = kda_malloc(h, 16); /* more than 32 chunks: top holds hints */
    cr_assert_not_null(a);
    uint32_t page = page_of(&pool, a), spot = spot_of(h, a, 16);
    /* kda_free(a) as the device may perform it: the chunk's bit, the give-back, */
    kda_and32(sa_sub(h, page, spot / 32), ~(1u << spot % 32));
    sa_unreserve(h, page);
    cr_assert_eq(*sa_word(h, page), 0, "the page retired");
    unsigned char *x = kda_malloc(h, small);
    cr_assert_eq(page_of(&pool, x), page);
    fill(x, small, 1);
    kda_and32(sa_top(h, page), ~(1u << spot / 32)); /* ... then the hint's clear */
    unsigned char *y = kda_malloc(h, small);
    fill(y, small, 2);
    cr_assert_neq(x, y, "two live blocks at %p", (void *)x);
    cr_assert(intact(x, small, 1), "the first block was overwritten");
    kda_free(h, x);
    kda_free(h, y);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A hint set after its word emptied (a walker found word 1 full, its
 * chunks were freed, then its mark landed) outlives the page's split, the
 * page's last free clearing only its own word's hint.  The page's next split
 * into two chunks must still hand out both (with a chunk's bits in top, the
 * second would wait for good on the stale bit 1). */
Test(scatteralloc, stale_hint_does_not_hide_a_chunk, .timeout = 20)
{
    kda_pool pool;
    uint64_t half = SA_PAGE / 2; /* two chunks a page */
    kda_heap *h = one_page_pool(&pool, half);
    unsigned char *a = kda_malloc(h, 16); /* word 0 of a page of more than 32 chunks */
    cr_assert_not_null(a);
    uint32_t page = page_of(&pool, a);
    kda_or32(sa_top(h, page), 1u << 1); /* the late mark: word 1 full */
    kda_free(h, a);
    cr_assert_eq(*sa_word(h, page), 0, "the page retired");
    unsigned char *b = kda_malloc(h, half), *c = kda_malloc(h, half);
    cr_assert(b && c && b != c);
    cr_assert(page_of(&pool, b) == page && page_of(&pool, c) == page, "both chunks of the page are handed out");
    kda_free(h, b);
    kda_free(h, c);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A free whose own bit's clear lands after its give-back: the page retires
 * and is split anew into two chunks; the first request takes the free one,
 * the second holds the last reservation and must wait for the late clear,
 * then take that bit (a taker always has a free bit, or one on its way).
 * The clear lands only once the second request's reservation is seen (the
 * page's fill at 2; 10 s at most, then the test fails), so it lands while
 * that request is in flight; the request then holds the late bit's chunk. */
static const kda_heap *late_heap;
static uint32_t late_page, *late_word, late_mask;
static _Atomic int late_in_flight;
static void *land_late_clear(void *unused)
{
    (void)unused;
    for (int i = 0; i < 10000 && !(late_in_flight = sa_fill_of(kda_load64(sa_word(late_heap, late_page))) == 2); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    kda_and32(late_word, ~late_mask);
    return NULL;
}

Test(scatteralloc, a_late_own_clear_keeps_its_chunk_taken_until_it_lands, .timeout = 20)
{
    kda_pool pool;
    uint64_t half = SA_PAGE / 2;
    kda_heap *h = one_page_pool(&pool, half);
    unsigned char *a = kda_malloc(h, 16), *b = kda_malloc(h, 16); /* spots 0 and 1 */
    cr_assert(a && b);
    uint32_t page = page_of(&pool, b), spot = spot_of(h, b, 16);
    kda_free(h, a);
    /* kda_free(b) with its own clear held back: the hint, the give-back */
    kda_and32(sa_top(h, page), ~(1u << spot / 32));
    sa_unreserve(h, page);
    cr_assert_eq(*sa_word(h, page), 0, "the page retired");
    cr_assert_lt(spot, 2u, "the held-back bit lies in the next split's range");
    unsigned char *x = kda_malloc(h, half);
    cr_assert_eq(page_of(&pool, x), page);
    late_heap = h, late_page = page;
    late_word = sa_sub(h, page, spot / 32);
    late_mask = 1u << spot % 32;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, land_late_clear, NULL), 0);
    unsigned char *y = kda_malloc(h, half); /* waits for the clear */
    pthread_join(t, NULL);
    cr_assert(late_in_flight, "the late clear landed before the second request reserved its chunk");
    cr_assert(y && y != x && page_of(&pool, y) == page, "the second chunk, once its bit is clear");
    cr_assert_eq(spot_of(h, y, half), spot, "the second request holds the chunk of the late bit");
    cr_assert(*late_word & late_mask, "the late bit is the second request's, set again");
    kda_free(h, x);
    kda_free(h, y);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Hints on every word of a page of more than 32 chunks, all stale: every
 * chunk is still handed out (the hints cost a pass, never a chunk). */
Test(scatteralloc, stale_hints_on_every_word_hide_no_chunk, .timeout = 20)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4 * SA_PAGE, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint32_t page = first_page_for(h, 16), n = sa_chunks(16);
    *sa_top(h, page) = ~0u;
    void **blocks = calloc(n, sizeof *blocks);
    cr_assert_not_null(blocks);
    for (uint32_t i = 0; i < n; i++) {
        blocks[i] = kda_malloc(h, 16);
        cr_assert(blocks[i] && page_of(&pool, blocks[i]) == page, "chunk %u of %u on the page", i, n);
    }
    for (uint32_t i = 0; i < n; i++) kda_free(h, blocks[i]);
    free(blocks);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}
