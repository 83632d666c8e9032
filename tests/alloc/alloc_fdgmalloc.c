/* alloc_fdgmalloc.c - FDGMalloc's own host tests, included by test_alloc.c
 * (test_alloc_fdgmalloc).  Each host thread is a warp of one.  Oracles:
 * addresses within a superblock computed from the padded sizes, the
 * warps' header table read directly, and owner patterns. */

/* Every warp's memory has been given back: no header is left. */
static void expect_all_free(const kda_pool *pool)
{
    for (uint32_t slot = 0; slot < pool->heap.state.n_warps; slot++)
        cr_assert_null(*fdg_cell(&pool->heap, slot), "warp %u still has a header", slot);
}

/* Small requests follow one another in the warp's superblock; a request
 * that does not fit starts a new one; larger than a superblock comes from
 * the system allocator alone.  The warp's end gives everything back. */
Test(fdgmalloc, superblocks_and_the_warps_end)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 64u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    kda_host_set_warp(5);
    unsigned char *a = kda_malloc(h, 100), *b = kda_malloc(h, 1);
    cr_assert(a && b);
    cr_assert_eq(b, a + 112, "the next request follows, padded to 16");
    fdg_warp *w = *fdg_cell(h, 5);
    cr_assert_not_null(w, "warp 5 has a header");
    cr_assert_eq(w->superblock, a);
    unsigned char *c = kda_malloc(h, FDG_SUPERBLOCK - 100); /* does not fit the rest */
    cr_assert_not_null(c);
    cr_assert_eq(w->superblock, c, "a new superblock");
    unsigned char *big = kda_malloc(h, FDG_SUPERBLOCK + 1);
    cr_assert_not_null(big);
    cr_assert_eq(w->superblock, c, "a large block leaves the superblock alone");
    fill(a, 100, 1);
    fill(big, FDG_SUPERBLOCK + 1, 2);
    fill(c, FDG_SUPERBLOCK - 100, 3);
    cr_assert(intact(a, 100, 1) && intact(big, FDG_SUPERBLOCK + 1, 2) && intact(c, FDG_SUPERBLOCK - 100, 3));
    kda_free(h, a); /* does nothing */
    cr_assert_eq(*fdg_cell(h, 5), w);
    kda_warp_done(h);
    expect_all_free(&pool);
    kda_host_set_warp(0);
    kda_host_pool_destroy(&pool);
}

/* A warp that registers more blocks than a list holds chains lists; its
 * end walks them all (ASan or valgrind would report what it missed). */
Test(fdgmalloc, lists_chain)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 64u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    for (uint32_t i = 0; i < 3 * FDG_LIST + 5; i++) {
        void *p = kda_malloc(h, FDG_SUPERBLOCK + 16);
        cr_assert_not_null(p);
        fill(p, 64, i);
    }
    fdg_warp *w = *fdg_cell(h, 0);
    int lists = 0;
    for (void **l = w->list; l; l = (void **)l[0]) lists++;
    cr_assert_eq(lists, 4, "%u blocks and a superblock need four lists of %u", 3 * FDG_LIST + 5, FDG_LIST);
    kda_warp_done(h);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A pool reset ends every warp that still has a header. */
Test(fdgmalloc, reset_ends_every_warp)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 64u << 20, 1, err, sizeof err), 0, "%s", err);
    for (uint32_t warp = 0; warp < 100; warp += 7) {
        kda_host_set_warp(warp);
        cr_assert_not_null(kda_malloc(&pool.heap, 64 + warp));
    }
    kda_host_set_warp(0);
    kda_host_pool_reset(&pool);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}
