/* countedbump.h - CountedBump, this project's own allocator (beyond the
 * paper; docs/alloc.md): AtomicMalloc's one atomicAdd per request, on one
 * counter per multiprocessor instead of one for the GPU, inside chunks that
 * count their blocks so that a chunk is reused once all of its blocks are
 * freed.
 *
 * Pool.  Chunks of C bytes (a power of two between 1 KiB and 1 MiB, about
 * pool / (16 x slots)) from the pool's start.  Each SM (slot) has a current
 * chunk and bumps through it; requests of more than C/4 take whole runs of
 * free chunks instead.
 *
 * State, outside the pool (heap.meta; 20 bytes a chunk):
 *   bits[]        one bit a chunk: taken (a slot's, or part of a large block)
 *   word[chunk]   64 bits: bytes handed out (high 40) and requests (low 24)
 *   balance[chunk] requests of the chunk still live, once it is closed;
 *                 minus the frees before that
 *   run[chunk]    a large block's chunk count, at its first chunk (0: small)
 *   owner[chunk]  the slot that took the chunk last
 *   slot[s]       slot s's current chunk + 1 (0: none), and a change count
 *   lock          the large requests of more than 64 chunks
 *
 * Invariants.
 *   - A small request is one atomicAdd of (bytes << 24 | 1) on its chunk's
 *     word; it is served when the bytes before it plus its own fit.  Bytes
 *     only grow, so the first request that does not fit is the only one
 *     that sees the bytes before it still within the chunk: it closes the
 *     chunk, and all requests before it were served.
 *   - The closer adds the chunk's served count to the balance; every free
 *     subtracts one.  Before the close the balance is <= 0, so the one
 *     operation that brings it to exactly 0 after the close (the closer's
 *     add or the last free) finds the chunk empty and recycles it.
 *   - The closer gives the chunk's owner slot a new chunk, so a slot whose
 *     chunk is closed always changes: threads waiting on it go on.
 *   - A recycled chunk's word reads "closed" (bytes beyond any chunk) until
 *     a slot takes the chunk again and zeroes it, so a thread that read an
 *     old slot value either fails on it or is served, and counted, in the
 *     chunk's new life; never in a large block that took the chunk.
 * malloc's fast path: one load of the slot, one atomicAdd.  free's: one
 * load, one atomicAdd.  A full chunk: the closer takes a free chunk from the
 * bitmap (one CAS, starting at a word hashed from the SM) and installs it;
 * the others wait for the slot to change.  No chunk left: NULL.
 */
#ifndef KDA_COUNTEDBUMP_H
#define KDA_COUNTEDBUMP_H

#include <stdio.h>

#define KDA_ALLOC_NAME "CountedBump"
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL 0

#define CB_COUNT_BITS 24
#define CB_CLOSED ((uint64_t)1 << 62) /* a word's bytes beyond any chunk */
#define CB_MIN_CHUNK 1024u
#define CB_MAX_CHUNK (1u << 20)

/* ---- the state's layout in heap.meta ---- */
KDA_HD uint32_t cb_words(const kda_heap *h) { return (h->cells + 63) / 64; }
KDA_HD uint64_t *cb_bits(const kda_heap *h) { return (uint64_t *)h->meta; }
KDA_HD uint64_t *cb_slot(const kda_heap *h, uint32_t s) { return cb_bits(h) + cb_words(h) + s; }
KDA_HD uint64_t *cb_word(const kda_heap *h, uint32_t c) { return cb_slot(h, h->groups) + c; }
KDA_HD int32_t *cb_balance(const kda_heap *h, uint32_t c) { return (int32_t *)cb_word(h, h->cells) + c; }
KDA_HD uint32_t *cb_run(const kda_heap *h, uint32_t c) { return (uint32_t *)cb_balance(h, h->cells) + c; }
KDA_HD uint32_t *cb_owner(const kda_heap *h, uint32_t c) { return cb_run(h, h->cells) + c; }
KDA_HD uint32_t *cb_lock(const kda_heap *h) { return cb_owner(h, h->cells); }
/* A slot's value: its chunk + 1 (0: none) and, above, how often it changed
 * (so that a thread waiting for a new chunk sees the change even when the
 * slot gets the same chunk back). */
KDA_HD uint32_t cb_slot_chunk(uint64_t value) { return (uint32_t)value; }
KDA_HD uint64_t cb_slot_next(uint64_t value, uint32_t chunk1) { return ((value >> 32) + 1) << 32 | chunk1; }

/* The free bits of word w (past the last chunk count as taken). */
KDA_FN uint64_t cb_free_bits(const kda_heap *h, uint32_t w, uint64_t word)
{
    uint32_t left = h->cells - 64 * w;
    uint64_t valid = left >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << left) - 1;
    return ~word & valid;
}

/* Bit i of the result: bits i .. i+k-1 of `free_bits` are all set. */
KDA_FN uint64_t cb_runs(uint64_t free_bits, uint32_t k)
{
    for (uint32_t have = 1; have < k;) {
        uint32_t step = have < k - have ? have : k - have;
        free_bits &= free_bits >> step;
        have += step;
    }
    return free_bits;
}

KDA_FN int cb_ffs64(uint64_t v)
{
    uint32_t lo = (uint32_t)v;
    return lo ? kda_ffs32(lo) : (uint32_t)(v >> 32) ? 32 + kda_ffs32((uint32_t)(v >> 32)) : 0;
}

/* Takes k <= 64 free chunks in a row within one bitmap word, searching from
 * a word hashed from the SM; the first chunk, or -1. */
KDA_FN int64_t cb_take_in_words(const kda_heap *h, uint32_t k)
{
    uint32_t words = cb_words(h), start = kda_sm_id() * 2654435761u % words;
    for (uint32_t i = 0; i < words; i++) {
        uint32_t w = (start + i) % words;
        uint64_t seen = kda_load64(cb_bits(h) + w);
        for (;;) {
            uint64_t runs = cb_runs(cb_free_bits(h, w, seen), k);
            if (!runs) break;
            uint32_t b = (uint32_t)cb_ffs64(runs) - 1;
            uint64_t mask = (k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1) << b;
            uint64_t old = kda_cas64(cb_bits(h) + w, seen, seen | mask);
            if (old == seen) return (int64_t)64 * w + b;
            seen = old;
        }
    }
    return -1;
}

/* The bits of chunks [c, c + k) that lie in bitmap word w. */
KDA_FN uint64_t cb_mask(uint32_t c, uint32_t k, uint32_t w)
{
    uint32_t lo = c > 64 * w ? c - 64 * w : 0, hi = c + k < 64 * (w + 1) ? c + k - 64 * w : 64;
    uint64_t upto = hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return upto & ~(((uint64_t)1 << lo) - 1);
}

/* Gives chunks [c, c + k) back to the bitmap. */
KDA_FN void cb_give_back(const kda_heap *h, uint32_t c, uint32_t k)
{
    for (uint32_t w = c / 64; w <= (c + k - 1) / 64; w++) kda_and64(cb_bits(h) + w, ~cb_mask(c, k, w));
}

/* Takes more than 64 chunks in a row, one such request at a time (under
 * the lock): scans the bitmap for a run, then takes its words one by one
 * with CAS; a word taken meanwhile gives back what was taken, and the scan
 * goes on after it.  The first chunk, or -1. */
KDA_FN int64_t cb_take_long(const kda_heap *h, uint32_t k)
{
    while (kda_cas32(cb_lock(h), 0, 1) != 0) kda_pause();
    int64_t got = -1;
    uint32_t run = 0;
    for (uint32_t c = 0; c < h->cells && got < 0; c++) {
        uint64_t word = kda_load64(cb_bits(h) + c / 64);
        if (word >> (c % 64) & 1u) {
            run = 0;
            continue;
        }
        if (++run < k) continue;
        uint32_t first = c + 1 - k, w = first / 64, last = c / 64;
        for (; w <= last; w++) {
            uint64_t mask = cb_mask(first, k, w), seen = kda_load64(cb_bits(h) + w);
            if ((seen & mask) || kda_cas64(cb_bits(h) + w, seen, seen | mask) != seen) break;
        }
        if (w > last) {
            got = first;
        } else { /* give back the words taken; go on after the one that was not free */
            if (w > first / 64) cb_give_back(h, first, 64 * w - first);
            run = 0;
        }
    }
    kda_fence();
    kda_store32(cb_lock(h), 0);
    return got;
}

/* A chunk no block uses any more: closed to stale readers, then free. */
KDA_FN void cb_recycle(const kda_heap *h, uint32_t c)
{
    kda_store64(cb_word(h, c), CB_CLOSED);
    kda_fence();
    cb_give_back(h, c, 1);
}

/* Gives slot s a new chunk unless its value moved on from `seen`.  Returns
 * 0 when no chunk is free (the slot is then left without one). */
KDA_FN int cb_refill(const kda_heap *h, uint32_t s, uint64_t seen)
{
    int64_t c = cb_take_in_words(h, 1);
    if (c < 0) {
        kda_cas64(cb_slot(h, s), seen, cb_slot_next(seen, 0));
        return 0;
    }
    kda_store64(cb_word(h, (uint32_t)c), 0);
    kda_store32((uint32_t *)cb_balance(h, (uint32_t)c), 0);
    kda_store32(cb_owner(h, (uint32_t)c), s);
    kda_fence();
    if (kda_cas64(cb_slot(h, s), seen, cb_slot_next(seen, (uint32_t)c + 1)) != seen) { /* another thread refilled it */
        kda_store64(cb_word(h, (uint32_t)c), CB_CLOSED);
        kda_fence();
        cb_give_back(h, (uint32_t)c, 1);
    }
    return 1;
}

/* Chunk c is closed: its served requests go to the balance, and the slot
 * whose chunk it is gets a new one.  That slot is the owner's: the closer
 * may have read another slot's value long ago (c served that slot then).
 * 0 when no chunk was left for the slot. */
KDA_FN int cb_close(const kda_heap *h, uint32_t c, uint64_t served)
{
    uint32_t owner = kda_load32(cb_owner(h, c));
    int32_t before = (int32_t)kda_add32((uint32_t *)cb_balance(h, c), (uint32_t)served);
    if (before + (int32_t)served == 0) cb_recycle(h, c);
    uint64_t value = kda_load64(cb_slot(h, owner));
    return cb_slot_chunk(value) != c + 1 || cb_refill(h, owner, value);
}

KDA_FN void *cb_malloc_large(const kda_heap *h, uint64_t need)
{
    uint64_t k = (need + h->cell_bytes - 1) / h->cell_bytes;
    if (k > h->cells) return NULL;
    int64_t c = k <= 64 ? cb_take_in_words(h, (uint32_t)k) : cb_take_long(h, (uint32_t)k);
    if (c < 0) return NULL;
    kda_store32(cb_run(h, (uint32_t)c), (uint32_t)k);
    return h->base + (uint64_t)c * h->cell_bytes;
}

#ifdef __CUDACC__
/* kda_malloc for several lanes at once (all in `lanes`, converged). */
KDA_FN void *cb_malloc_lanes(const kda_heap *h, uint32_t s, uint64_t need, unsigned lanes)
{
    uint32_t lane = kda_lane_id(), leader = (uint32_t)__ffs(lanes) - 1;
    uint64_t before, total;
    kda_warp_sums(lanes, need, &before, &total);
    unsigned rank = (unsigned)__popc(lanes & ((1u << lane) - 1)); /* lanes below this one */
    for (;;) {
        uint64_t seen = kda_load64(cb_slot(h, s)), old = 0;
        uint32_t c1 = cb_slot_chunk(seen);
        if (c1 && lane == leader) old = kda_add64(cb_word(h, c1 - 1), total << CB_COUNT_BITS | (unsigned)__popc(lanes));
        old = __shfl_sync(lanes, old, (int)leader);
        uint64_t used = (old >> CB_COUNT_BITS) + before;
        int served = c1 && used + need <= h->cell_bytes;
        /* the lane that crosses the chunk's end closes it, counting the lanes before it */
        int closer = c1 && !served && used <= h->cell_bytes, ok = 1;
        if (closer) ok = cb_close(h, c1 - 1, (old & (((uint64_t)1 << CB_COUNT_BITS) - 1)) + rank);
        unsigned waiting = __ballot_sync(lanes, !served), failed = __ballot_sync(lanes, !ok);
        if (served) return h->base + (uint64_t)(c1 - 1) * h->cell_bytes + used;
        if (failed) return NULL; /* no chunk left for the slot */
        /* the lanes not served ask again together, after the slot changed */
        lanes = waiting;
        leader = (uint32_t)__ffs(lanes) - 1;
        kda_warp_sums(lanes, need, &before, &total);
        rank = (unsigned)__popc(lanes & ((1u << lane) - 1));
        if (!c1) {
            if (lane == leader) ok = cb_refill(h, s, seen);
            if (!__shfl_sync(lanes, ok, (int)leader)) return NULL;
        } else if (lane == leader) {
            while (kda_load64(cb_slot(h, s)) == seen) kda_pause(); /* the chunk's closer refills it */
        }
        __syncwarp(lanes);
    }
}
#endif

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    if (size == 0 || size > h->bytes) return NULL;
    uint64_t need = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    if (need > h->cell_bytes / 4) return cb_malloc_large(h, need);
    uint32_t s = kda_sm_id() % h->groups;
#ifdef __CUDACC__
    /* The lanes that ask together make one request: one atomicAdd for the
     * warp, each lane's block after the lower lanes' (the same SM, so the
     * same slot).  Lanes that ask alone, as in the builder, skip this. */
    unsigned lanes = __activemask();
    if (lanes & (lanes - 1)) return cb_malloc_lanes(h, s, need, lanes);
#endif
    for (;;) {
        uint64_t seen = kda_load64(cb_slot(h, s));
        uint32_t c1 = cb_slot_chunk(seen);
        if (!c1) {
            if (!cb_refill(h, s, seen)) return NULL;
            continue;
        }
        uint64_t old = kda_add64(cb_word(h, c1 - 1), need << CB_COUNT_BITS | 1);
        uint64_t used = old >> CB_COUNT_BITS;
        if (used + need <= h->cell_bytes) return h->base + (uint64_t)(c1 - 1) * h->cell_bytes + used;
        if (used <= h->cell_bytes) { /* the first that does not fit closes the chunk */
            if (!cb_close(h, c1 - 1, old & (((uint64_t)1 << CB_COUNT_BITS) - 1))) return NULL;
        } else {
            while (kda_load64(cb_slot(h, s)) == seen) kda_pause(); /* the closer refills it */
        }
    }
}

KDA_FN void kda_free(const kda_heap *h, void *ptr)
{
    if (!ptr) return;
    uint32_t c = (uint32_t)((uint64_t)((unsigned char *)ptr - h->base) / h->cell_bytes);
    uint32_t k = kda_load32(cb_run(h, c));
    kda_fence(); /* our stores to the block land before it is free */
    if (k) { /* a large block */
        kda_store32(cb_run(h, c), 0);
        kda_fence();
        cb_give_back(h, c, k);
        return;
    }
    if ((int32_t)kda_add32((uint32_t *)cb_balance(h, c), ~0u) == 1) cb_recycle(h, c);
}

static inline int kda_alloc_plan(kda_pool *pool, uint64_t bytes, uint32_t n_sms, char *err, size_t errlen)
{
    kda_heap *h = &pool->heap;
    uint32_t slots = n_sms ? n_sms : 1;
    uint64_t chunk = CB_MAX_CHUNK;
    while (chunk > CB_MIN_CHUNK && chunk * 16 * slots > bytes) chunk /= 2;
    if (bytes < chunk) chunk = bytes; /* a pool of one chunk */
    uint64_t chunks = chunk ? bytes / chunk : 0;
    if (chunks == 0 || chunks > UINT32_MAX / 2) {
        snprintf(err, errlen, "CountedBump cannot split a pool of %llu bytes into chunks", (unsigned long long)bytes);
        return -1;
    }
    h->cells = (uint32_t)chunks;
    h->cell_bytes = (uint32_t)chunk;
    h->groups = slots;
    pool->state_bytes = pool->clear_bytes = (chunks + 63) / 64 * 8 + slots * 8ull + chunks * 20 + 4;
    return 0;
}

/* For the fragmentation figures (bench/allocbench): from a host copy of
 * the state (h->meta), the free bytes (free chunks, and the rest of the
 * slots' open chunks) and the largest block one request could get; the
 * bytes serving a block: a large block's chunks (a small block's are its
 * padded request, which the state does not keep: 0, not counted). */
#define KDA_ALLOC_HAS_SPACE 1
static inline void kda_alloc_space(const kda_heap *h, uint64_t *free_bytes, uint64_t *largest)
{
    uint64_t run = 0;
    *free_bytes = *largest = 0;
    for (uint32_t c = 0; c < h->cells; c++) {
        if (cb_bits(h)[c / 64] >> (c % 64) & 1) {
            run = 0;
            continue;
        }
        run += h->cell_bytes;
        *free_bytes += h->cell_bytes;
        if (run > *largest) *largest = run;
    }
    for (uint32_t s = 0; s < h->groups; s++) {
        uint32_t c1 = cb_slot_chunk(*cb_slot(h, s));
        uint64_t used = c1 ? *cb_word(h, c1 - 1) >> CB_COUNT_BITS : h->cell_bytes;
        if (used < h->cell_bytes) {
            uint64_t rest = h->cell_bytes - used;
            *free_bytes += rest;
            uint64_t one = rest < h->cell_bytes / 4 ? rest : h->cell_bytes / 4; /* a small request's most */
            if (one > *largest) *largest = one;
        }
    }
}
static inline uint64_t kda_alloc_block_bytes(const kda_heap *h, uint64_t offset)
{
    return (uint64_t)*cb_run(h, (uint32_t)(offset / h->cell_bytes)) * h->cell_bytes;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, const kda_layout *l, uint64_t i) { (void)h, (void)l, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h, const kda_layout *l) { (void)h, (void)l; }

#endif
