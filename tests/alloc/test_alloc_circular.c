/* test_alloc_circular.c - what allocators with a chunk list
 * (KDA_ALLOC_HAS_CHUNK_LIST: the CMalloc family, circular.h) promise: exhaustion gives NULL and freeing makes the pool usable
 * again, freed chunks merge with their successor, walks that start at a
 * stale or dead header (or one from before a reset) never hand out memory
 * inside a live block, the pre-split heap layout, each multiprocessor's own
 * heap and the large requests' home, and pools from below the smallest
 * chunk to above 4 GiB.
 *
 * Oracles: owner patterns over every block, and byte copies of live blocks
 * compared after a malloc; addresses and chunk positions computed from the
 * layout's arithmetic; a walk of the whole chunk list (kda_scan) checked
 * chunk by chunk; and the state whole again at the end (expect_all_free). */
#include "test_alloc.h"

#if KDA_ALLOC_HOST && defined(KDA_ALLOC_HAS_CHUNK_LIST)

static char err[256];

/* The unit of the header in front of block p. */
static uint32_t header_unit(const kda_pool *pool, const void *p)
{
    return (uint32_t)(((const unsigned char *)p - pool->heap.base) / KDA_UNIT) - 1;
}

/* Exhaustion gives NULL, and freeing makes the pool usable again: the same
 * requests succeed as often as before.  (Freed chunks merge only with their
 * successor, so the pool does not become one chunk again: by design.) */
static int allocate_until_null(kda_pool *pool, void **blocks, int max, uint64_t size)
{
    int n = 0;
    for (; n < max; n++) {
        blocks[n] = kda_malloc(&pool->heap, size);
        if (!blocks[n]) break;
        fill(blocks[n], size, (uint64_t)n);
    }
    return n;
}

Test(alloc, null_on_exhaustion_then_usable)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 8u << 20, 4, err, sizeof err), 0, "%s", err);
    enum { MAX = 4096 };
    static void *blocks[MAX];
    int first = 0;
    for (int round = 0; round < 3; round++) {
        int n = allocate_until_null(&pool, blocks, MAX, 4000);
        cr_assert(n > 1000 && n < MAX, "round %d: %d blocks of 4000 B from 8 MiB", round, n);
        if (round == 0) first = n;
        cr_assert_geq(n, first, "round %d: %d blocks, the first round had %d", round, n, first);
        cr_assert_null(kda_malloc(&pool.heap, 4000), "still exhausted");
        for (int i = 0; i < n; i++) {
            cr_assert(intact(blocks[i], 4000, (uint64_t)i), "block %d overwritten", i);
            kda_free(&pool.heap, blocks[i]);
        }
        expect_all_free(&pool);
    }
    kda_host_pool_destroy(&pool);
}

/* Freeing a block merges its free successor: two neighbours freed in
 * reverse order serve one request of their combined size. */
Test(alloc, free_merges_with_successor)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 1u << 20, 1, err, sizeof err), 0, "%s", err);
    unsigned char *a = kda_malloc(&pool.heap, 1024), *b = kda_malloc(&pool.heap, 1024);
    cr_assert(a && b);
    cr_assert_eq(b, a + 1024 + KDA_UNIT, "consecutive blocks are one header unit apart");
    kda_free(&pool.heap, b);
    kda_free(&pool.heap, a);
    kda_scan scan;
    kda_scan_circular(pool.heap.base, &pool.heap, &scan, NULL, NULL);
    cr_assert(scan.well_formed, "%s", scan.problem);
    /* memOffset now points past the merged chunk; start the walk at it. */
    pool.heap.state.offsets[0] = header_unit(&pool, a);
    unsigned char *c = kda_malloc(&pool.heap, 2048 + KDA_UNIT);
    cr_assert_eq(c, a, "the merged chunk serves 2 KiB + 16 at the same place");
    kda_free(&pool.heap, c);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* With the allocation offset set to a stale position `hint`, a 64-byte
 * malloc must still succeed, outside the live block [live, live + size),
 * and leave the block's bytes as they were. */
static void expect_stale_hint_missed(kda_pool *pool, uint32_t hint, const unsigned char *live, size_t size,
                                     const char *what)
{
    unsigned char *before = malloc(size);
    cr_assert_not_null(before);
    memcpy(before, live, size);
    pool->heap.state.offsets[0] = hint;
    unsigned char *p = kda_malloc(&pool->heap, 64);
    cr_assert_not_null(p, "%s: malloc gave up", what);
    cr_assert(p + 64 <= live || p >= live + size, "%s: malloc handed out memory inside a live block", what);
    cr_assert_eq(memcmp(before, live, size), 0, "%s: the live block was written", what);
    free(before);
    kda_free(&pool->heap, p);
}

/* The tag repair: a walk that starts at a header position which was merged
 * away and overwritten must not hand out memory inside a live block. */
Test(alloc, stale_offset_is_not_trusted)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 1u << 20, 1, err, sizeof err), 0, "%s", err);
    unsigned char *a = kda_malloc(&pool.heap, 1024), *b = kda_malloc(&pool.heap, 1024);
    uint32_t stale = header_unit(&pool, b);
    kda_free(&pool.heap, b);
    kda_free(&pool.heap, a); /* merges b's chunk into a's */
    pool.heap.state.offsets[0] = header_unit(&pool, a);
    unsigned char *big = kda_malloc(&pool.heap, 2048);
    cr_assert_eq(big, a);
    for (int trial = 0; trial < 2; trial++) {
        /* Payload over the old header: zeros (looks free to a naive
         * reader), then a copy of a genuine free header of another chunk. */
        if (trial == 0) memset(big, 0, 2048);
        else memcpy(big + (b - a) - 8, pool.heap.base + (uint64_t)stale * KDA_UNIT + 2048 + 8, 8);
        expect_stale_hint_missed(&pool, stale, big, 2048, trial ? "a copied free header" : "zeros");
    }
    kda_free(&pool.heap, big);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A header merged away keeps its tag until it is written over, so a stale
 * position can lead to a dead header that looks valid, with a `next` into
 * garbage.  A walk steps back to it once, then starts anew, instead of going
 * back and forth between the two until it gives up (as it did on the GPU). */
Test(alloc, dead_header_leading_into_garbage)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 1u << 20, 1, err, sizeof err), 0, "%s", err);
    enum { BIG = 4096 };
    unsigned char *big = kda_malloc(&pool.heap, BIG);
    cr_assert_not_null(big);
    fill(big, BIG, 77);
    uint32_t dead = header_unit(&pool, big) + 10, garbage = header_unit(&pool, big) + 100;
    circ_write_header(&pool.heap, dead, KDA_STATE_USED, garbage, KDA_CIRCULAR_FUSED); /* as a merge leaves it */
    expect_stale_hint_missed(&pool, dead, big, BIG, "a dead header leading into garbage");
    kda_free(&pool.heap, big);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* A reset must also retire the old headers still in memory: a free one
 * left inside what is now a live block is not handed out. */
Test(alloc, headers_from_before_a_reset_are_not_trusted)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 1u << 20, 1, err, sizeof err), 0, "%s", err);
    unsigned char *a = kda_malloc(&pool.heap, 1024), *b = kda_malloc(&pool.heap, 1024);
    cr_assert(a && b);
    uint32_t old = header_unit(&pool, b);
    kda_free(&pool.heap, b); /* a free header at `old`, which the reset does not overwrite */
    kda_host_pool_reset(&pool);
    unsigned char *big = kda_malloc(&pool.heap, 4096); /* covers `old` again, unwritten */
    cr_assert(big && big <= pool.heap.base + (uint64_t)old * KDA_UNIT && big + 4096 > b, "layout changed?");
    expect_stale_hint_missed(&pool, old, big, 4096, "a header from before the reset");
    kda_free(&pool.heap, big);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* The pre-split layout: binary heaps of chunk sizes R, R/2, R/2, R/4 ...,
 * the remainder chunk, and the end marker; checked chunk by chunk. */
typedef struct layout_walk {
    const kda_layout *l;
    uint64_t index;
    int ok;
    char problem[128];
} layout_walk;

static void expect_layout_chunk(void *ctx, uint32_t unit, uint32_t size_units, int used)
{
    layout_walk *w = ctx;
    const kda_layout *l = w->l;
    uint64_t heap = w->index / l->chunks, slot = w->index % l->chunks;
    uint32_t want_unit, want_size;
    if (heap < l->n_heaps) {
        uint32_t level = 0;
        while ((2ull << level) <= slot + 1) level++;
        want_size = l->root_units >> level;
        want_unit = (uint32_t)heap * l->heap_units + level * l->root_units + (uint32_t)(slot + 1 - (1ull << level)) * want_size;
    } else { /* the remainder */
        want_unit = l->n_heaps * l->heap_units;
        want_size = l->units - 1 - want_unit;
    }
    if (w->ok && (used || unit != want_unit || (size_units != want_size && heap < l->n_heaps))) {
        w->ok = 0;
        snprintf(w->problem, sizeof w->problem, "chunk %llu: unit %u size %u (want unit %u size %u)%s",
                 (unsigned long long)w->index, unit, size_units, want_unit, want_size, used ? ", used" : "");
    }
    w->index++;
}

static void check_layout(uint64_t bytes, uint32_t n_sms)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, bytes, n_sms, err, sizeof err), 0, "%s", err);
    const kda_layout *l = &pool.heap.state.layout;
    cr_assert_geq(l->levels, 1);
    cr_assert_eq(l->root_units % KDA_MIN_CHUNK_UNITS, 0);
    cr_assert_eq(l->chunks, (1u << l->levels) - 1);
    cr_assert_leq((uint64_t)l->n_heaps * l->heap_units, pool.heap.state.units - 1);
    if (l->n_heaps == 1)
        cr_assert_gt((uint64_t)(l->levels + 1) * (2ull * l->root_units), pool.heap.state.units - 1, "the largest heap that fits");
    layout_walk w = {l, 0, 1, {0}};
    kda_scan scan;
    kda_scan_circular(pool.heap.base, &pool.heap, &scan, expect_layout_chunk, &w);
    cr_assert(scan.well_formed, "%s", scan.problem);
    cr_assert(w.ok, "%s", w.problem);
    cr_assert_geq(w.index, (uint64_t)l->n_heaps * l->chunks);
    kda_host_pool_destroy(&pool);
}

Test(alloc, presplit_heap_layout)
{
    check_layout(16u << 20, 3);
    check_layout(1000u << 10, 132);
    check_layout(100u << 20, 132);
}

#if KDA_CIRCULAR_MULTI
/* Each multiprocessor starts in its own heap; their roots are R / #SM. */
Test(alloc, each_sm_starts_in_its_heap)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 16u << 20, 4, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.state.n_offsets, 4);
    cr_assert_eq(pool.heap.state.layout.n_heaps, 4);
    kda_pool one;
    cr_assert_eq(kda_host_pool_create(&one, 16u << 20, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.state.layout.root_units, one.heap.state.layout.root_units / 4);
    kda_host_pool_destroy(&one);
    for (uint32_t sm = 0; sm < 4; sm++) {
        kda_host_set_sm(sm);
        unsigned char *p = kda_malloc(&pool.heap, 100);
        uint64_t unit = (uint64_t)(p - pool.heap.base) / KDA_UNIT;
        uint64_t heap_start = (uint64_t)sm * pool.heap.state.layout.heap_units;
        cr_assert(unit >= heap_start && unit < heap_start + pool.heap.state.layout.heap_units,
                  "SM %u got unit %llu, outside its heap", sm, (unsigned long long)unit);
        kda_free(&pool.heap, p);
    }
    kda_host_set_sm(0);
    kda_host_pool_destroy(&pool);
}

/* A request larger than a heap's root starts at the large-request offset,
 * after the heaps, instead of walking through every SM's heap; small ones
 * stay in their SM's heap. */
Test(alloc, large_requests_start_after_the_heaps)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 16u << 20, 8, err, sizeof err), 0, "%s", err);
    const kda_layout *l = &pool.heap.state.layout;
    uint64_t heaps_end = (uint64_t)l->n_heaps * l->heap_units;
    cr_assert_eq(pool.heap.state.offsets[pool.heap.state.n_offsets], heaps_end);
    uint64_t root_bytes = (uint64_t)l->root_units * KDA_UNIT;
    kda_host_set_sm(3);
    unsigned char *small = kda_malloc(&pool.heap, root_bytes - KDA_UNIT); /* fits the root with its header */
    unsigned char *large = kda_malloc(&pool.heap, root_bytes);
    cr_assert(small && large);
    uint64_t small_unit = (uint64_t)(small - pool.heap.base) / KDA_UNIT - 1;
    uint64_t large_unit = (uint64_t)(large - pool.heap.base) / KDA_UNIT - 1;
    cr_assert_eq(small_unit, 3ull * l->heap_units, "the root of SM 3's heap serves what fits it");
    cr_assert_eq(large_unit, heaps_end, "the first large request is served at the remainder's start");
    cr_assert_eq(pool.heap.state.offsets[pool.heap.state.n_offsets], large_unit + l->root_units + 1, "large offset moved");
    cr_assert_eq(pool.heap.state.offsets[3], small_unit + l->root_units, "SM 3's offset moved");
    unsigned char *large2 = kda_malloc(&pool.heap, root_bytes);
    cr_assert_eq(large2, large + root_bytes + KDA_UNIT, "the next one follows it");
    kda_free(&pool.heap, large2);
    kda_free(&pool.heap, large);
    kda_free(&pool.heap, small);
    kda_host_set_sm(0);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

static void find_chunk(void *ctx, uint32_t unit, uint32_t size_units, int used)
{
    (void)size_units, (void)used;
    uint32_t *want = ctx;
    if (unit == want[0]) want[1] = 1;
}

/* A heap's first unit is a home, where walks start anew: freeing the chunk
 * before it (the last of the previous heap) never merges it away. */
Test(alloc, heap_starts_are_never_merged_away)
{
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 16u << 20, 4, err, sizeof err), 0, "%s", err);
    const kda_layout *l = &pool.heap.state.layout;
    uint32_t last = l->heap_units - KDA_MIN_CHUNK_UNITS; /* heap 0's last, smallest chunk */
    kda_host_set_sm(0);
    pool.heap.state.offsets[0] = last;
    unsigned char *p = kda_malloc(&pool.heap, (KDA_MIN_CHUNK_UNITS - 1) * KDA_UNIT); /* fills it exactly */
    cr_assert_eq(p, pool.heap.base + (uint64_t)(last + 1) * KDA_UNIT);
    kda_free(&pool.heap, p); /* its successor, heap 1's first chunk, is free */
    uint32_t want[2] = {l->heap_units, 0};
    kda_scan scan;
    kda_scan_circular(pool.heap.base, &pool.heap, &scan, find_chunk, want);
    cr_assert(scan.well_formed, "%s", scan.problem);
    cr_assert(want[1], "heap 1's first chunk was merged into heap 0's last");
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

#endif

/* A pool smaller than the smallest pre-split chunk has no heap at all: it is
 * one remainder chunk, and every SM's walk starts there.  (A k-d tree of one
 * triangle gets such a pool.) */
Test(alloc, pool_smaller_than_the_smallest_chunk)
{
    if (800 / KDA_UNIT >= KDA_MIN_CHUNK_UNITS) cr_skip_test("built with a smallest chunk of %u B or less", 800u);
    kda_pool pool;
    cr_assert_eq(kda_host_pool_create(&pool, 800, 132, err, sizeof err), 0, "%s", err);
    cr_assert_eq(pool.heap.state.layout.levels, 0);
    for (uint32_t sm = 0; sm < 132; sm++) {
        kda_host_set_sm(sm);
        void *p = kda_malloc(&pool.heap, 4);
        cr_assert_not_null(p, "SM %u", sm);
        void *q = kda_malloc(&pool.heap, 300);
        cr_assert_not_null(q, "SM %u", sm);
        cr_assert_null(kda_malloc(&pool.heap, 600), "SM %u: more than is left", sm);
        kda_free(&pool.heap, q);
        kda_free(&pool.heap, p);
    }
    kda_host_set_sm(0);
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}

/* Offsets are 16-byte units: a pool over 4 GiB is addressed in full. */
Test(alloc, pool_larger_than_4_gib, .timeout = 120)
{
    kda_pool pool;
    uint64_t bytes = (5ull << 30) + (1u << 20);
    /* One heap: its remainder chunk spans the pool's upper half. */
    cr_assert_eq(kda_host_pool_create(&pool, bytes, 1, err, sizeof err), 0, "%s", err);
    void *blocks[8];
    int n = 0, beyond = 0;
    for (; n < 8; n++) {
        blocks[n] = kda_malloc(&pool.heap, 600u << 20);
        if (!blocks[n]) break;
        unsigned char *end = (unsigned char *)blocks[n] + (600u << 20) - 8;
        memcpy(end, &n, sizeof n);
        beyond |= end - pool.heap.base > (4ll << 30);
    }
    cr_assert(beyond, "no block reached beyond 4 GiB (%d blocks)", n);
    for (int i = 0; i < n; i++) {
        int v;
        memcpy(&v, (unsigned char *)blocks[i] + (600u << 20) - 8, sizeof v);
        cr_assert_eq(v, i);
        kda_free(&pool.heap, blocks[i]);
    }
    expect_all_free(&pool);
    kda_host_pool_destroy(&pool);
}


#endif
