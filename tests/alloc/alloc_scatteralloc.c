/* alloc_scatteralloc.c - ScatterAlloc's own host tests, included by
 * test_alloc.c (test_alloc_scatteralloc).  Oracles: the page table read
 * directly (every page free again, bits and fill levels zero), addresses
 * computed from the page size, and owner patterns. */

/* Every page's word, bit-fields and every region's count are zero again. */
static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    for (uint32_t page = 0; page < h->state.pages; page++) {
        cr_assert_eq(*sa_word(h, page), 0, "page %u: chunk size %llu, fill %u", page,
                     (unsigned long long)sa_size_of(*sa_word(h, page)), sa_fill_of(*sa_word(h, page)));
        cr_assert_eq(*sa_top(h, page), 0, "page %u: bits left set", page);
        for (uint32_t i = 0; i < 32; i++) cr_assert_eq(*sa_sub(h, page, i), 0, "page %u: bits left set", page);
    }
    for (uint32_t r = 0; r < sa_regions(h->state.pages); r++) cr_assert_eq(*sa_full(h, r), 0, "region %u still counts full pages", r);
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
