/* alloc_countedbump.c - CountedBump's own host tests, included by
 * test_alloc.c (test_alloc_countedbump).  Oracles: the chunk bitmap and
 * counters read directly (every chunk free again but the slots' current
 * ones, whose served requests are all freed), addresses computed from the
 * chunk size, and owner patterns. */

static int chunk_taken(const kda_heap *h, uint32_t c) { return cb_bits(h)[c / 64] >> (c % 64) & 1; }

static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    uint32_t current = 0;
    for (uint32_t s = 0; s < h->groups; s++) {
        uint64_t value = *cb_slot(h, s);
        if (!cb_slot_chunk(value)) {
            cr_assert_eq(value, 0, "slot %u has no chunk but counts %llx", s, (unsigned long long)value);
            continue;
        }
        uint32_t c = cb_slot_chunk(value) - 1;
        current++;
        cr_assert(chunk_taken(h, c), "slot %u's chunk %u is not taken", s, c);
        cr_assert_leq(cb_slot_bytes(value), h->cell_bytes, "slot %u's chunk is open", s);
        cr_assert_eq(*cb_balance(h, c) + (int64_t)cb_slot_count(value), 0, "slot %u's chunk: %u served, balance %d",
                     s, cb_slot_count(value), *cb_balance(h, c));
    }
    uint32_t taken = 0;
    for (uint32_t c = 0; c < h->cells; c++) {
        taken += chunk_taken(h, c);
        cr_assert_eq(*cb_run(h, c), 0, "chunk %u still starts a large block", c);
    }
    cr_assert_eq(taken, current, "%u chunks taken, %u of them slots' current chunks", taken, current);
}

/* Requests follow one another in the slot's chunk; the first that does not
 * fit closes it and goes to a new chunk; once every block of the closed
 * chunk is freed, the chunk is free again. */
Test(countedbump, bump_close_and_recycle)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    cr_assert_eq(h->cell_bytes, 256u << 10, "4 MiB / (16 x 1 slot): 256 KiB chunks");
    enum { N = 1024 };
    static unsigned char *b[N];
    uint32_t per_chunk = h->cell_bytes / 1008;
    for (uint32_t i = 0; i <= per_chunk; i++) {
        b[i] = kda_malloc(h, 1000); /* padded to 1008 */
        cr_assert_not_null(b[i]);
        if (i && i < per_chunk) cr_assert_eq(b[i], b[i - 1] + 1008, "block %u follows", i);
        fill(b[i], 1000, i);
    }
    uint32_t first = (uint32_t)((b[0] - h->base) / h->cell_bytes);
    uint32_t second = (uint32_t)((b[per_chunk] - h->base) / h->cell_bytes);
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
    uint32_t c = (uint32_t)(((unsigned char *)a - h->base) / h->cell_bytes);
    kda_free(h, a);
    cr_assert_eq(*cb_balance(h, c), -1);
    void *big = kda_malloc(h, h->cell_bytes / 4); /* fits what is left */
    void *next = kda_malloc(h, h->cell_bytes / 4);
    void *more = kda_malloc(h, h->cell_bytes / 4);
    void *over = kda_malloc(h, h->cell_bytes / 4); /* closes the chunk */
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
    cr_assert_eq(h->cells, 128, "1 MiB chunks");
    uint64_t sizes[] = {h->cell_bytes / 4 + 16, 3 * (uint64_t)h->cell_bytes, 70 * (uint64_t)h->cell_bytes - 5};
    void *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = kda_malloc(h, sizes[i]);
        cr_assert_not_null(p[i], "%llu bytes", (unsigned long long)sizes[i]);
        cr_assert_eq(((unsigned char *)p[i] - h->base) % h->cell_bytes, 0, "starts a chunk");
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
    cr_assert_eq(h->cells, 128, "1 MiB chunks, two bitmap words");
    uint64_t C = h->cell_bytes;
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
    uint64_t quarter = h->cell_bytes / 4;
    enum { N = 64 };
    static void *b[N];
    uint32_t got = 0;
    while (got < N && (b[got] = kda_malloc(h, quarter)) != NULL) fill(b[got], quarter, got), got++;
    cr_assert_eq(got, 4 * h->cells, "every chunk handed out in quarters");
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
