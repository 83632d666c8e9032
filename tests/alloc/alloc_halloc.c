/* alloc_halloc.c - Halloc's own host tests, included by test_alloc.c
 * (test_alloc_halloc).  Oracles: the slab table read directly (no block
 * counted, no bit set, only heads keep their class), the size classes'
 * arithmetic, and owner patterns. */

static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    for (uint32_t s = 0; s < h->state.slabs; s++) {
        uint64_t w = *ha_word(h, s);
        cr_assert_eq(ha_count(w), 0, "slab %u still counts %u blocks", s, ha_count(w));
        cr_assert(!ha_class_in(w) || (w & HA_HEAD_FLAG), "slab %u is empty, no head, and still has a class", s);
        for (uint32_t i = 0; i < HA_BITS_WORDS; i++) cr_assert_eq(*ha_bits(h, s, i), 0, "slab %u: bits left set", s);
    }
}

Test(halloc, size_classes)
{
    static const uint32_t want[HA_CLASSES] = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072};
    for (uint32_t k = 0; k < HA_CLASSES; k++) {
        cr_assert_eq(ha_class_bytes(k), want[k], "class %u", k);
        cr_assert_eq(ha_class_of(want[k]), k);
        cr_assert_eq(ha_class_of(want[k] - 1 > (k ? want[k - 1] : 0) ? want[k] - 1 : want[k]), k);
    }
}

Test(halloc, pool_below_the_minimum_is_refused)
{
    kda_pool pool;
    char why[256] = "";
    cr_assert_eq(kda_host_pool_create(&pool, 255u << 20, 1, why, sizeof why), -1);
    cr_assert(strstr(why, "Halloc") && strstr(why, "256 MiB"), "message: %s", why);
}

/* Small requests land in their class's slab at multiples of the class
 * size; requests above 3 KiB come from the system allocator, outside. */
Test(halloc, classes_slabs_and_large_requests)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 256u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    cr_assert_eq(h->state.slabs, 48, "three quarters of 256 MiB in 4 MiB slabs");
    cr_assert_eq(pool.plan.sys_heap_bytes, 64u << 20);
    unsigned char *a = kda_malloc(h, 100), *b = kda_malloc(h, 3000), *c = kda_malloc(h, 3073);
    cr_assert(a && b && c);
    uint64_t oa = (uint64_t)(a - h->base), ob = (uint64_t)(b - h->base);
    cr_assert(oa < (uint64_t)h->state.slabs * HA_SLAB && ob < (uint64_t)h->state.slabs * HA_SLAB, "small blocks in the slabs");
    cr_assert_neq(oa / HA_SLAB, ob / HA_SLAB, "two classes, two slabs");
    cr_assert_eq(oa % HA_SLAB % 128, 0, "100 B is class 128");
    cr_assert_eq(ob % HA_SLAB % 3072, 0, "3000 B is class 3072");
    cr_assert(c < h->base || c >= h->base + (uint64_t)h->state.slabs * HA_SLAB, "3073 B: the system allocator");
    fill(a, 100, 1);
    fill(b, 3000, 2);
    fill(c, 3073, 3);
    cr_assert(intact(a, 100, 1) && intact(b, 3000, 2) && intact(c, 3073, 3));
    kda_free(h, a);
    kda_free(h, b);
    kda_free(h, c);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Exhaustion of every slab gives NULL; freed slabs serve another class,
 * and the same number of blocks can be had again.  The count from the
 * documented layout (halloc.h): three quarters of 256 MiB in 4 MiB slabs,
 * each holding floor(4 MiB / 3 KiB) blocks of the 3 KiB class; every byte
 * of every block pattern-checked (a round's own keys) before its free. */
Test(halloc, slabs_move_between_classes, .timeout = 60)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 256u << 20, 1, err, sizeof err), 0, "%s", err);
    kda_heap *h = &pool.heap;
    enum { MAX = 70000, SIZE = 3072, SLABS = (256 << 20) / 4 * 3 / (4 << 20), EXPECTED = SLABS * ((4 << 20) / SIZE) };
    static void *blocks[MAX];
    for (int round = 0; round < 2; round++) {
        int n = 0;
        for (; n < MAX; n++) {
            blocks[n] = kda_malloc(h, SIZE);
            if (!blocks[n]) break;
            fill(blocks[n], SIZE, (uint64_t)round * MAX + (uint64_t)n);
        }
        cr_assert_eq(n, EXPECTED, "round %d: %d blocks, want every block of every slab (%d)", round, n, EXPECTED);
        for (int i = 0; i < n; i++) {
            cr_assert(intact(blocks[i], SIZE, (uint64_t)round * MAX + (uint64_t)i), "round %d: block %d overwritten",
                      round, i);
            kda_free(h, blocks[i]);
        }
        expect_all_free(&pool);
        /* now a slab of the 3 KiB class serves 64-byte blocks */
        void *small = kda_malloc(h, 64);
        cr_assert_not_null(small, "an emptied slab serves another class");
        kda_free(h, small);
    }
    kda_host_pool_destroy(&pool);
}
