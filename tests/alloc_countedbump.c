/* alloc_countedbump.c - CountedBump's own host tests, included by
 * test_alloc.c (test_alloc_countedbump).  Oracles: the chunk bitmap and
 * counters read directly (every chunk free again but the slots' current
 * ones, whose served requests are all freed), addresses computed from the
 * chunk size, and owner patterns. */

static uint64_t cb_served(uint64_t word) { return word & (((uint64_t)1 << CB_COUNT_BITS) - 1); }

static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    uint32_t current = 0;
    for (uint32_t s = 0; s < h->groups; s++) {
        uint32_t v = cb_slot_chunk(*cb_slot(h, s));
        if (!v) continue;
        uint32_t c = v - 1;
        current++;
        cr_assert(cb_bits(h)[c / 64] >> (c % 64) & 1, "slot %u's chunk %u is not taken", s, c);
        cr_assert_eq(*cb_balance(h, c) + (int64_t)cb_served(*cb_word(h, c)), 0,
                     "slot %u's chunk: %llu served, balance %d", s, (unsigned long long)cb_served(*cb_word(h, c)),
                     *cb_balance(h, c));
    }
    uint32_t taken = 0;
    for (uint32_t c = 0; c < h->cells; c++) {
        taken += cb_bits(h)[c / 64] >> (c % 64) & 1;
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
    cr_assert_eq(cb_bits(h)[first / 64] >> (first % 64) & 1, 0, "the emptied chunk is free");
    cr_assert_eq(*cb_word(h, first), CB_CLOSED, "and closed to stale readers");
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
    cr_assert_eq(cb_bits(h)[c / 64] >> (c % 64) & 1, 0, "chunk %u is free again", c);
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

/* A chunk emptied before it closes comes straight back to its slot: the
 * slot's value changes all the same, so that threads waiting for a new
 * chunk see it (they waited forever on the GPU before). */
Test(countedbump, same_chunk_back_changes_the_slot)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 4u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    uint64_t quarter = h->cell_bytes / 4;
    for (int i = 0; i < 4; i++) kda_free(h, kda_malloc(h, quarter)); /* fills the chunk, all freed */
    uint64_t before = *cb_slot(h, 0);
    void *p = kda_malloc(h, quarter); /* closes it, recycles it, gets it back */
    uint64_t after = *cb_slot(h, 0);
    cr_assert_eq(cb_slot_chunk(after), cb_slot_chunk(before), "the same chunk again");
    cr_assert_neq(after, before, "but another slot value");
    cr_assert_eq((unsigned char *)p - h->base, (int64_t)(cb_slot_chunk(after) - 1) * h->cell_bytes);
    kda_free(h, p);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* The closer refills the slot that owns the chunk, not its own: a thread of
 * SM 1 that read slot 0's chunk long ago (it served SM 0's slot by then)
 * and crosses its end must give slot 0 a new chunk, or SM 0's threads wait
 * for a change that never comes (they did on the GPU). */
Test(countedbump, the_closer_refills_the_owner)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 64u << 20, 2, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    kda_host_set_sm(0);
    void *a = kda_malloc(h, 64);
    uint64_t slot0 = *cb_slot(h, 0);
    uint32_t c = cb_slot_chunk(slot0) - 1;
    cr_assert_eq(*cb_owner(h, c), 0);
    /* SM 1's stale request: it fills the chunk to its end, then crosses it */
    uint64_t fill = h->cell_bytes - 64, old = kda_add64(cb_word(h, c), fill << CB_COUNT_BITS | 1);
    cr_assert_eq(old >> CB_COUNT_BITS, 64, "after the 64-byte block");
    old = kda_add64(cb_word(h, c), (uint64_t)64 << CB_COUNT_BITS | 1);
    cr_assert(cb_close(h, c, old & (((uint64_t)1 << CB_COUNT_BITS) - 1)));
    cr_assert_neq(*cb_slot(h, 0), slot0, "slot 0 got a new chunk");
    kda_free(h, a);
    kda_free(h, h->base + (uint64_t)c * h->cell_bytes + 64); /* the stale thread's block */
    cr_assert_eq(cb_bits(h)[c / 64] >> (c % 64) & 1, 0, "the closed chunk is free again");
    kda_host_set_sm(0);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}
