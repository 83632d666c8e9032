/* alloc_slabbump.c - SlabBump's own host tests, included by
 * test_alloc_slabbump.  Oracles: the chunk sets and bitmaps read directly
 * (every block of every class chunk accounted for once: freed, avail, or
 * not yet handed out by a slot's first life; no run left), addresses
 * computed from the chunk and block size, and the set of blocks freed
 * against the set served again. */

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
 * and every offset in a chunk of 64 KiB. */
Test(slabbump, block_index_without_division)
{
    for (uint32_t k = 0; k < SB_CLASSES; k++)
        for (uint32_t x = 0; x < 65536; x += 16)
            cr_assert_eq(sb_div_block(x, k), x / sb_block(k), "class %u, offset %u", k, x);
}

/* The blocks of class chunk c that are free, counted from its bits and the
 * slots: each must be counted once, and all of them must be. */
static void expect_all_free(const kda_pool *pool)
{
    const kda_heap *h = &pool->heap;
    const kda_state *s = &h->state;
    uint64_t *unhanded = calloc(s->chunks, sizeof *unhanded);
    cr_assert_not_null(unhanded);
    for (uint32_t i = 0; i < s->sets * s->classes; i++) {
        uint64_t v = *sb_slot(h, i);
        if (!sb_v_chunk(v)) continue;
        uint32_t c = sb_v_chunk(v) - 1, left = sb_v_ticket(v) < sb_v_limit(v) ? sb_v_limit(v) - sb_v_ticket(v) : 0;
        if (sb_v_first(v)) unhanded[c] += left;
    }
    for (uint32_t c = 0; c < s->chunks; c++) {
        uint32_t class1 = sb_class1(s->status[c]);
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
    }
    free(unhanded);
}

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
    kda_pool pool; /* 16 MiB for one SM: 256 chunks of 64 KiB, four words */
    cr_assert_eq(kda_host_pool_create(&pool, 16u << 20, 1, err, sizeof err), 0, "%s", err);
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
