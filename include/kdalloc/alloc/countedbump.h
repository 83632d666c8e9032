/* countedbump.h - CountedBump, this project's own allocator (beyond the
 * paper; docs/alloc.md): AtomicMalloc's one atomicAdd per request, on one
 * counter per multiprocessor instead of one for the GPU, inside chunks that
 * count their blocks so that a chunk is reused once all of its blocks are
 * freed.
 *
 * Pool.  Chunks of C bytes (a power of two between 1 KiB and 1 MiB, about
 * pool / (16 x slots)).  Each SM has a slot that bumps through its current
 * chunk; requests of more than C/4 take runs of whole free chunks instead.
 * Slots take free chunks from the bottom of the pool, runs come from the
 * top, so that the slots' chunks do not cut up the space long runs need.
 *
 * State, outside the pool (kda_state; 8 bytes a chunk, 128 a slot; laid
 * out for chunks_max chunks, of which the first `chunks` lie in the pool:
 * a growable pool's state has room for its limit, and growth raises
 * `chunks`):
 *   bits[]         one bit a chunk: taken (a slot's, or part of a run)
 *   slot[s]        64 bits: chunk + 1 (top 17; 0: none), bytes handed out
 *                  of it (30), requests served from it (low 17); beside it,
 *                  in its line, the fill word: generation << 1 | (a fill
 *                  of the empty slot is under way)
 *   balance[c]     requests of chunk c still live once it is closed, minus
 *                  the frees before that; CB_LARGE at a run's first chunk
 *   run[c]         a run's chunk count, at its first chunk
 *   lock, hint     the runs of more than 64 chunks; the lowest bitmap word
 *                  that may have a free chunk
 *
 * Slots and SMs.  Slot s belongs to the SM whose id is s.  An SM whose
 * id is at or above the slot count shares slot id % slots: in a pool
 * planned with fewer slots than SMs (a growable pool whose limit holds
 * fewer than two chunks an SM), or where SM ids exceed the count the pool
 * was planned for (%smid need not lie below it).  A slot takes adds from
 * at most cb_sharers(C) SMs, those of ids s, s + slots, ... (1 for 1 MiB
 * chunks, 3 for 512 KiB, up to 63); an SM beyond them takes a run of
 * whole chunks for each request instead, as large requests do.  The plan
 * makes the chunks smaller until the SMs it was planned for fit
 * (ceil(SMs / slots) <= cb_sharers(C)), so only unforeseen SM ids take
 * that path.
 *
 * Invariants.
 *   - A small request is one atomicAdd of (bytes << 17 | 1) on its SM's
 *     slot; it is served when the bytes before it plus its own fit the
 *     chunk the slot names.  Bytes only grow, so exactly one request sees
 *     the bytes before it within the chunk but its own crossing the end: it
 *     closes the chunk, and every request before it was served.
 *   - Only the closer writes the slot while it names a chunk: it stores the
 *     next chunk (bytes and requests 0).  The requests that fail after the
 *     close wait until the slot names another chunk or fits again, then add
 *     once more; so each thread adds at most once to a closed value (a
 *     warp's lanes add as one).  An SM runs at most CB_SM_THREADS = 2048
 *     threads (host threads: at most that many per SM id), and at most
 *     k = cb_sharers(C) SMs add to a slot, so the bytes field stays at or
 *     below C + k x 2048 x C/4 < 2^30 and the count at or below
 *     C/16 + k x 2048 < 2^17 (the served requests, each of 16 bytes or
 *     more, and one add a thread after the close).
 *   - The closer adds the served count to the balance; each free subtracts
 *     one.  Before the close the balance is <= 0, so the one operation that
 *     brings it to exactly 0 afterwards (the close or the last free) finds
 *     the chunk empty and recycles it: its bit cleared.
 *   - Every add goes to the slot, never to a chunk directly, so no thread
 *     holds a chunk it read long ago: a recycled chunk is unreachable until
 *     a slot or a run takes it again.
 *   - A slot with no chunk (the pool ran out) is filled by one request at a
 *     time, under the slot's fill word: the filler looks at the slot, takes
 *     a free chunk only if it is still empty, and installs it, or, when
 *     none is free, puts the slot back to 0 (the failed adds' bytes
 *     cleared).  The other requests wait for the fill.  A request returns
 *     NULL only once a fill that began after its add has ended with the
 *     slot empty, or its own close found no chunk: a scan of the bitmap
 *     that began during the request found no free chunk.  Each thread adds
 *     at most once to an empty value before the value is written again, so
 *     the bound above holds for it too.
 *
 * Memory order (PTX: the atomics are relaxed, kda_fence is fence.sc.gpu;
 * a fence then a write releases, a read then a fence acquires, and any two
 * fence.sc are ordered, the later synchronising with the earlier):
 *   - free: its fence, then the balance add (releases the block's
 *     accesses).  Recycling: that add, a fence, the bit cleared (acquires
 *     every free counted, releases to the next taker).
 *   - taking a chunk (atomicOr) or a run (CAS), then writing its balance
 *     and run: a fence between (acquire), so that the writes land after the
 *     chunk's last life: its last balance add, a run's `run[c] = 0`.
 *     Without it the model lets a run's length read 0 at its free (the run
 *     never given back) or a stale add land on a fresh balance.
 *   - installing a chunk in a slot: balance 0, a fence, the slot written
 *     (release).  The closer fences before its balance add (acquire, also
 *     when it took no next chunk).  A free of a block of the chunk follows
 *     the 0 too: the add that handed the block out read the installer's
 *     slot value, so the installer's fence precedes the fence of the thread
 *     that made that add (and, kdalloc.h's rule, of any thread the block
 *     went to) in the fence.sc order.
 *   - free_large reads run[c] after free's fence, which follows
 *     malloc_large's fence (after its run and balance writes) in the same
 *     way.
 *   - the fill word: a fence between a request's add and its first read of
 *     the fill word (a fill that begins later sees the add), between a read
 *     or lock of the fill word and a read of the slot, and before the
 *     unlock.
 *   - a served request uses its block with no fence after its add: the
 *     block's address is computed from the add's result.  The PTX model
 *     does not order accesses by such a dependency; the hardware does: no
 *     access issues before its address is known, the add is performed at
 *     L2 after the previous owners' accesses were (the fences above), and
 *     global stores go through to L2.  An acquire there (atom.acquire, or
 *     a fence) would make it hold in the model too, at a price on every
 *     request; the fast path stays one relaxed atomicAdd.
 *   - the bitmap's plain loads, the hint and the runs' lock only steer the
 *     searches; the atomicOr or CAS on a bitmap word decides.
 * malloc's fast path: one atomicAdd.  free's: a fence and one atomicAdd.
 */
#ifndef KDA_COUNTEDBUMP_H
#define KDA_COUNTEDBUMP_H

#include <stdio.h>

#define KDA_ALLOC_NAME "CountedBump"
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
/* 64 KiB: 64 chunks of 1 KiB, so that beside the slots' chunks some are
 * left for requests of more than C/4 (with one chunk, the slot's, such a
 * request could never be served). */
#define KDA_ALLOC_MIN_POOL (64ull << 10)
#define KDA_ALLOC_GROWS 1
#define KDA_ALLOC_CHUNKS 1

#define CB_COUNT_BITS 17
#define CB_BYTES_BITS 30
#define CB_CHUNK_SHIFT (CB_COUNT_BITS + CB_BYTES_BITS)
#define CB_MAX_CHUNKS ((1u << (64 - CB_CHUNK_SHIFT)) - 1)
#define CB_LARGE (1 << 30) /* a run's balance: above any count of requests */
#define CB_MIN_CHUNK 1024u
#define CB_MAX_CHUNK (1u << 20)
/* The most threads one SM runs at once (2048 on every CUDA GPU so far),
 * as a power of two: each may add once to a closed or empty slot value. */
#define CB_SM_THREADS_LOG2 11
#define CB_SM_THREADS (1u << CB_SM_THREADS_LOG2)

/* Each slot in its own 128-byte line: the SMs' atomics must not queue
 * behind each other's in the L2 (they did, by the line, not the word).
 * The slots come first in the state block, so a device block (256-byte
 * aligned) puts each at the start of its line. */
#define CB_SLOT_STRIDE 16

#include "kdalloc/detail/port.h"

/* The state (kda_alloc_bind lays it out in the state block, in this
 * order; laid out for chunks_max chunks, of which the first `chunks` lie
 * in the pool). */
typedef struct kda_state {
    uint64_t *slots;      /* [n_slots * CB_SLOT_STRIDE] slot s at s * CB_SLOT_STRIDE, its fill word after it */
    uint64_t *bits;       /* [ceil(chunks_max / 64)] one bit a chunk: taken */
    int32_t *balance;     /* [32 * rows] chunk c's at (c % 32) * rows + c / 32, rows = ceil(chunks_max / 32) */
    uint32_t *run;        /* [chunks_max] a run's chunk count, at its first chunk */
    uint32_t *lock;       /* the runs of more than 64 chunks */
    uint32_t *hint;       /* the lowest bitmap word that may have a free chunk */
    uint32_t chunks;      /* in the pool now (growth raises it) */
    uint32_t chunks_max;  /* the state has room for: a growable pool's limit */
    uint32_t chunk_bytes; /* C */
    uint32_t n_slots;
} kda_state;

#include "kdalloc/detail/heap.h"

/* How many SMs may add to one slot with chunks of `chunk` bytes (a power
 * of two): the most k with chunk + k x CB_SM_THREADS x chunk/4 < 2^30 (the
 * bytes stay below the chunk field) and chunk/16 + k x CB_SM_THREADS <
 * 2^17 (the count below the bytes).  1 for 1 MiB chunks, 3 for 512 KiB,
 * 7 for 256 KiB, ..., 62 for 32 KiB, 63 below. */
KDA_HD uint32_t cb_sharers(uint32_t chunk)
{
#ifdef __CUDA_ARCH__
    uint32_t log2 = (uint32_t)__ffs(chunk) - 1;
#else
    uint32_t log2 = (uint32_t)__builtin_ffs((int)chunk) - 1;
#endif
    uint32_t by_bytes = ((1u << CB_BYTES_BITS) - 1 - chunk) >> (CB_SM_THREADS_LOG2 - 2 + log2);
    uint32_t by_count = ((1u << CB_COUNT_BITS) - 1 - chunk / KDA_UNIT) >> CB_SM_THREADS_LOG2;
    return by_bytes < by_count ? by_bytes : by_count;
}

/* The bitmap words that hold the pool's chunks (the searches' range). */
KDA_HD uint32_t cb_words(const kda_heap *h) { return (h->state.chunks + 63) / 64; }
KDA_HD uint64_t *cb_bits(const kda_heap *h) { return h->state.bits; }
KDA_HD uint64_t *cb_slot(const kda_heap *h, uint32_t s) { return h->state.slots + (uint64_t)s * CB_SLOT_STRIDE; }
/* Slot s's fill word, in the slot's line: generation << 1, | 1 while a
 * request fills the empty slot. */
KDA_HD uint32_t *cb_fill(const kda_heap *h, uint32_t s) { return (uint32_t *)(cb_slot(h, s) + 1); }
/* Balances are spread so that chunks next to each other (slots take them
 * from the bottom) count their frees in different lines. */
KDA_HD uint32_t cb_rows(uint32_t chunks_max) { return (chunks_max + 31) / 32; }
KDA_HD int32_t *cb_balance(const kda_heap *h, uint32_t c)
{
    return h->state.balance + (c % 32) * cb_rows(h->state.chunks_max) + c / 32;
}
KDA_HD uint32_t *cb_run(const kda_heap *h, uint32_t c) { return h->state.run + c; }
KDA_HD uint32_t *cb_lock(const kda_heap *h) { return h->state.lock; }
KDA_HD uint32_t *cb_hint(const kda_heap *h) { return h->state.hint; }

/* A slot's value: its chunk + 1 (0: none), the bytes handed out of it and
 * the requests served. */
KDA_HD uint32_t cb_slot_chunk(uint64_t value) { return (uint32_t)(value >> CB_CHUNK_SHIFT); }
KDA_HD uint64_t cb_slot_bytes(uint64_t value) { return value >> CB_COUNT_BITS & ((1ull << CB_BYTES_BITS) - 1); }
KDA_HD uint32_t cb_slot_count(uint64_t value) { return (uint32_t)value & ((1u << CB_COUNT_BITS) - 1); }
KDA_HD uint64_t cb_slot_value(uint32_t chunk1) { return (uint64_t)chunk1 << CB_CHUNK_SHIFT; }

/* The chunk a block lies in (chunks are a power of two in size). */
KDA_FN uint32_t cb_chunk_of(const kda_heap *h, const void *ptr)
{
    return (uint32_t)((uint64_t)((const unsigned char *)ptr - h->base) >> (kda_ffs32(h->state.chunk_bytes) - 1));
}

/* ---- the chunk bitmap ---- */

/* The free bits of word w (past the last chunk count as taken). */
KDA_FN uint64_t cb_free_bits(const kda_heap *h, uint32_t w, uint64_t word)
{
    uint32_t left = h->state.chunks - 64 * w;
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

/* The bits of chunks [c, c + k) that lie in bitmap word w. */
KDA_FN uint64_t cb_mask(uint32_t c, uint32_t k, uint32_t w)
{
    uint32_t lo = c > 64 * w ? c - 64 * w : 0, hi = c + k < 64 * (w + 1) ? c + k - 64 * w : 64;
    uint64_t upto = hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return upto & ~(((uint64_t)1 << lo) - 1);
}

/* Gives chunks [c, c + k) back to the bitmap, and lowers the hint to them. */
KDA_FN void cb_give_back(const kda_heap *h, uint32_t c, uint32_t k)
{
    if (k == 0) return; /* nothing (and c + k - 1 would wrap) */
    for (uint32_t w = c / 64; w <= (c + k - 1) / 64; w++) kda_and64(cb_bits(h) + w, ~cb_mask(c, k, w));
    for (uint32_t hint = kda_load32(cb_hint(h)); hint > c / 64;) {
        uint32_t old = kda_cas32(cb_hint(h), hint, c / 64);
        if (old == hint) break;
        hint = old;
    }
}

/* Takes a free chunk from the lowest bitmap word that has one, scanning
 * from the hint word (then wrapping to word 0); -1 when none is free.  In
 * the word, an atomicOr takes the first free bit at or above a position
 * hashed from the SM, so that SMs refilling at once take different bits
 * with one atomic each instead of failing each other's CAS.  A full word
 * at the hint raises the hint. */
KDA_FN int64_t cb_take_low(const kda_heap *h)
{
    uint32_t words = cb_words(h), start = kda_load32(cb_hint(h)), from = kda_sm_id() * 37u % 64;
    if (start >= words) start = 0;
    for (uint32_t i = 0; i < words; i++) {
        uint32_t w = (start + i) % words;
        uint64_t free_bits = cb_free_bits(h, w, kda_load64(cb_bits(h) + w));
        while (free_bits) {
            uint64_t upper = free_bits & ~(uint64_t)0 << from;
            uint32_t b = (uint32_t)cb_ffs64(upper ? upper : free_bits) - 1;
            uint64_t old = kda_or64(cb_bits(h) + w, (uint64_t)1 << b);
            if (!(old >> b & 1)) return (int64_t)64 * w + b;
            free_bits = cb_free_bits(h, w, old);
        }
        if (w == start && start + 1 < words) kda_cas32(cb_hint(h), w, w + 1);
    }
    return -1;
}

/* Takes k <= 64 free chunks in a row within one bitmap word, the highest
 * such run from the top of the pool down; -1 when there is none. */
KDA_FN int64_t cb_take_high(const kda_heap *h, uint32_t k)
{
    for (uint32_t w = cb_words(h); w-- > 0;) {
        uint64_t seen = kda_load64(cb_bits(h) + w);
        for (uint64_t runs; (runs = cb_runs(cb_free_bits(h, w, seen), k)) != 0;) {
            uint32_t b = 63 - (uint32_t)kda_clz64(runs);
            uint64_t mask = (k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1) << b;
            uint64_t old = kda_cas64(cb_bits(h) + w, seen, seen | mask);
            if (old == seen) return (int64_t)64 * w + b;
            seen = old;
        }
    }
    return -1;
}

/* The first chunk of the highest run of k free chunks, across words; -1
 * when there is none.  `above` counts the free chunks from the bottom of
 * the word above upward. */
KDA_FN int64_t cb_find_run(const kda_heap *h, uint32_t k)
{
    uint64_t above = 0;
    for (uint32_t w = cb_words(h); w-- > 0;) {
        uint64_t free_bits = cb_free_bits(h, w, kda_load64(cb_bits(h) + w));
        uint32_t top = (uint32_t)kda_clz64(~free_bits); /* free chunks at the word's top */
        if (above + top >= k) return (int64_t)(64 * (uint64_t)(w + 1) + above - k);
        if (k <= 64) {
            uint64_t runs = cb_runs(free_bits, k);
            if (runs) return (int64_t)64 * w + 63 - kda_clz64(runs);
        }
        above = ~free_bits ? (uint32_t)cb_ffs64(~free_bits) - 1 : above + 64;
    }
    return -1;
}

/* Takes chunks [c, c + k) word by word; if a chunk was taken meanwhile,
 * gives back the words already taken and returns 0. */
KDA_FN int cb_take_run(const kda_heap *h, uint32_t c, uint32_t k)
{
    for (uint32_t w = c / 64; w <= (c + k - 1) / 64; w++) {
        uint64_t mask = cb_mask(c, k, w), seen = kda_load64(cb_bits(h) + w), old;
        while (!(seen & mask) && (old = kda_cas64(cb_bits(h) + w, seen, seen | mask)) != seen) seen = old;
        if (seen & mask) {
            if (w > c / 64) cb_give_back(h, c, 64 * w - c);
            return 0;
        }
    }
    return 1;
}

/* Takes a run of k chunks that no single word holds (one such search at a
 * time, under the lock); the first chunk, or -1. */
KDA_FN int64_t cb_take_long(const kda_heap *h, uint32_t k)
{
    while (kda_cas32(cb_lock(h), 0, 1) != 0) kda_pause();
    int64_t c;
    while ((c = cb_find_run(h, k)) >= 0 && !cb_take_run(h, (uint32_t)c, k)) {
    }
    kda_fence();
    kda_store32(cb_lock(h), 0);
    return c;
}

/* ---- chunks for the slots ---- */

/* A chunk no block uses any more: free again. */
KDA_FN void cb_recycle(const kda_heap *h, uint32_t c)
{
    kda_fence(); /* the frees seen before this land before the chunk is free */
    cb_give_back(h, c, 1);
}

/* A free chunk made ready for a slot: the slot's new value, 0 if none. */
KDA_FN uint64_t cb_fresh_chunk(const kda_heap *h)
{
    int64_t c = cb_take_low(h);
    if (c < 0) return 0;
    KDA_ASSERT(c < h->state.chunks, "a slot's chunk lies in the pool");
    kda_fence(); /* acquire: the balance is written after its last life's adds */
    kda_store32((uint32_t *)cb_balance(h, (uint32_t)c), 0);
    kda_fence(); /* release: before the slot names the chunk */
    return cb_slot_value((uint32_t)c + 1);
}

/* The closer of slot s's chunk c, which served `served` requests: installs
 * the next chunk, then counts c's requests into its balance.  0 when no
 * chunk was left (the slot then has none). */
KDA_FN int cb_close(const kda_heap *h, uint32_t s, uint32_t c, uint32_t served)
{
    kda_fence(); /* acquire: the balance add below follows the installer's 0 */
    uint64_t next = cb_fresh_chunk(h);
    kda_store64(cb_slot(h, s), next);
    KDA_ASSERT(served <= h->state.chunk_bytes / KDA_UNIT, "a chunk serves at most C/16 requests");
    int32_t before = (int32_t)kda_add32((uint32_t *)cb_balance(h, c), served);
    KDA_ASSERT(before <= 0 && before + (int32_t)served >= 0,
               "before the close the balance is <= 0; after it, no more frees than requests served");
    if (before + (int32_t)served == 0) cb_recycle(h, c);
    return next != 0;
}

/* The fill of slot s, by the request that holds its fill word (`locked`):
 * installs a free chunk if the slot is still empty, else puts it back to 0
 * (clearing the failed adds).  While the slot has no chunk only a filler
 * writes it (a closer writes only the chunk it closed), so the CAS below
 * fails only on adds.  1 when the slot has a chunk.
 * The loop's chunk test and the give-back after it cannot fire by that
 * invariant, yet they stay: without them the build kernel compiles 6-8%
 * slower on the H200 (Sponza, Conference, Dragon; experiments.md). */
KDA_FN int cb_fill_locked(const kda_heap *h, uint32_t s, uint32_t locked)
{
    kda_fence(); /* the slot and the bitmap are read after the lock (and the adds it waited for) */
    uint64_t seen = kda_load64(cb_slot(h, s)), next = 0, old;
    if (!cb_slot_chunk(seen)) {
        next = cb_fresh_chunk(h);
        while (!cb_slot_chunk(seen) && (old = kda_cas64(cb_slot(h, s), seen, next)) != seen) seen = old;
        if (cb_slot_chunk(seen) && next) cb_give_back(h, cb_slot_chunk(next) - 1, 1); /* never: see above */
    }
    kda_fence(); /* release: the slot's new value before the unlock */
    kda_store32(cb_fill(h, s), locked - 1);
    return cb_slot_chunk(seen) || next;
}

/* Slot s had no chunk when this request looked (after its add, if it
 * added): 1 once the slot names one (ask again), 0 when a fill that began
 * after that look ended with the slot empty (no chunk was free).  One
 * request fills at a time; it takes a chunk only after it has seen the
 * slot still empty, so no request fails while another holds a chunk on its
 * way into the slot. */
KDA_FN int cb_fill_empty(const kda_heap *h, uint32_t s)
{
    uint32_t *fill = cb_fill(h, s);
    kda_fence(); /* the add lands before any fill that begins after the word read next */
    uint32_t f = kda_load32(fill), first = (f >> 1) + 1; /* the first fill that began after this point */
    for (;;) {
        kda_fence(); /* acquire: the slot as the fill word's last fill left it, or later */
        if (cb_slot_chunk(kda_load64(cb_slot(h, s)))) return 1;
        uint32_t ended = ((f >> 1) - first) & 0x7fffffffu; /* fills since `first` ended (mod 2^31) */
        if (ended < (1u << 30) && ended >= (f & 1)) return 0;
        if (!(f & 1) && kda_cas32(fill, f, f + 3) == f) return cb_fill_locked(h, s, f + 3);
        if (f & 1) kda_pause();
        f = kda_load32(fill);
    }
}

/* Waits until slot s no longer shows `seen`'s closed chunk. */
KDA_FN void cb_wait(const kda_heap *h, uint32_t s, uint64_t seen)
{
    for (;;) {
        uint64_t now = kda_load64(cb_slot(h, s));
        if (cb_slot_chunk(now) != cb_slot_chunk(seen) || cb_slot_bytes(now) <= h->state.chunk_bytes) return;
        kda_pause();
    }
}

/* ---- malloc and free ---- */

KDA_FN void *cb_malloc_large(const kda_heap *h, uint64_t need)
{
    uint64_t k = (need + h->state.chunk_bytes - 1) / h->state.chunk_bytes;
    if (k > h->state.chunks) return NULL;
    int64_t c = k <= 64 ? cb_take_high(h, (uint32_t)k) : -1;
    if (c < 0) c = cb_take_long(h, (uint32_t)k);
    if (c < 0) return NULL;
    KDA_ASSERT(c + k <= h->state.chunks, "a run lies in the pool");
    kda_fence(); /* acquire: after the last free's run[c] = 0 and balance add */
    kda_store32(cb_run(h, (uint32_t)c), (uint32_t)k);
    kda_store32((uint32_t *)cb_balance(h, (uint32_t)c), CB_LARGE);
    kda_fence();
    return h->base + (uint64_t)c * h->state.chunk_bytes;
}

/* The request whose add returned `old` was not served: closes the chunk,
 * waits for the closer or fills an empty slot, and asks again. */
KDA_FN void *cb_malloc_again(const kda_heap *h, uint32_t s, uint64_t need, uint64_t old)
{
    for (;;) {
        uint32_t c1 = cb_slot_chunk(old);
        uint64_t used = cb_slot_bytes(old);
        if (!c1) {
            if (!cb_fill_empty(h, s)) return NULL;
        } else if (used + need <= h->state.chunk_bytes) {
            KDA_ASSERT(c1 - 1 < h->state.chunks, "a slot names a chunk of the pool");
            return h->base + (uint64_t)(c1 - 1) * h->state.chunk_bytes + used;
        } else if (used <= h->state.chunk_bytes) { /* the first that does not fit closes the chunk */
            if (!cb_close(h, s, c1 - 1, cb_slot_count(old))) return NULL;
        } else {
            cb_wait(h, s, old);
        }
        old = kda_add64(cb_slot(h, s), need << CB_COUNT_BITS | 1);
    }
}

#ifdef __CUDACC__
/* kda_malloc for several lanes at once (all in `lanes`, converged): one
 * add for the lanes, each lane's block after the lower lanes'. */
KDA_FN void *cb_malloc_lanes(const kda_heap *h, uint32_t s, uint64_t need, unsigned lanes)
{
    uint32_t lane = kda_lane_id();
    for (;;) {
        uint32_t leader = (uint32_t)__ffs(lanes) - 1;
        unsigned rank = (unsigned)__popc(lanes & ((1u << lane) - 1)); /* lanes below this one */
        uint64_t before, total, old = 0;
        kda_warp_sums(lanes, need, &before, &total);
        if (lane == leader) old = kda_add64(cb_slot(h, s), total << CB_COUNT_BITS | (unsigned)__popc(lanes));
        old = __shfl_sync(lanes, old, (int)leader);
        uint32_t c1 = cb_slot_chunk(old);
        uint64_t used = cb_slot_bytes(old) + before;
        int served = c1 && used + need <= h->state.chunk_bytes;
        /* the lane that crosses the chunk's end closes it: the lanes below it were served */
        int closer = c1 && !served && used <= h->state.chunk_bytes, ok = 1;
        if (closer) ok = cb_close(h, s, c1 - 1, cb_slot_count(old) + rank);
        unsigned waiting = __ballot_sync(lanes, !served), closed = __ballot_sync(lanes, closer);
        if (served) return h->base + (uint64_t)(c1 - 1) * h->state.chunk_bytes + used;
        if (!__all_sync(waiting, ok)) return NULL; /* no chunk left for the slot */
        lanes = waiting;
        leader = (uint32_t)__ffs(lanes) - 1;
        if (!c1) {
            if (lane == leader) ok = cb_fill_empty(h, s);
            if (!__shfl_sync(lanes, ok, (int)leader)) return NULL;
        } else if (!closed && lane == leader) {
            cb_wait(h, s, old);
        }
        __syncwarp(lanes);
    }
}
#endif

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    if (size == 0 || size > h->bytes) return NULL;
    uint64_t need = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    uint32_t s = kda_sm_id();
    int large = need > h->state.chunk_bytes / 4;
    if (s >= h->state.n_slots) { /* a slot shared with lower SMs: beyond cb_sharers() of them, whole chunks */
        large |= s / h->state.n_slots >= cb_sharers(h->state.chunk_bytes);
        s %= h->state.n_slots;
    }
    if (large) return cb_malloc_large(h, need);
#ifdef __CUDACC__
    /* Lanes that ask together share one add (the same SM, so the same
     * slot); lanes that ask alone, as in the builder, skip this. */
    unsigned lanes = __activemask();
    if (lanes & (lanes - 1)) return cb_malloc_lanes(h, s, need, lanes);
#endif
    uint64_t old = kda_add64(cb_slot(h, s), need << CB_COUNT_BITS | 1);
    uint64_t used = cb_slot_bytes(old);
    KDA_ASSERT(cb_slot_chunk(old) <= h->state.chunks, "a slot names a chunk of the pool, or none");
    if (cb_slot_chunk(old) && used + need <= h->state.chunk_bytes)
        return h->base + (uint64_t)(cb_slot_chunk(old) - 1) * h->state.chunk_bytes + used;
    return cb_malloc_again(h, s, need, old);
}

/* The last free of a run gives its chunks back. */
KDA_FN void cb_free_large(const kda_heap *h, uint32_t c)
{
    uint32_t k = kda_load32(cb_run(h, c));
    KDA_ASSERT(k > 0 && c + k <= h->state.chunks, "a run's length at its free is > 0, its chunks in the pool");
    kda_store32(cb_run(h, c), 0);
    kda_fence();
    cb_give_back(h, c, k);
}

KDA_FN void kda_free(const kda_heap *h, void *ptr)
{
    if (!ptr) return;
    uint32_t c = cb_chunk_of(h, ptr);
    kda_fence(); /* our stores to the block land before it can be reused */
    KDA_ASSERT(c < h->state.chunks, "a freed block lies in the pool");
    int32_t before = (int32_t)kda_add32((uint32_t *)cb_balance(h, c), ~0u);
    KDA_ASSERT(before == CB_LARGE || (before > -(int32_t)(h->state.chunk_bytes / KDA_UNIT) &&
                                      before <= (int32_t)(h->state.chunk_bytes / KDA_UNIT)),
               "a chunk's balance lies within its requests served (a run's: CB_LARGE)");
    if (before == 1) cb_recycle(h, c); /* the closed chunk's last block */
    else if (before >= CB_LARGE) cb_free_large(h, c);
}

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_state *s = &h->state;
    kda_carver c = {block, 0};
    s->slots = (uint64_t *)kda_carve(&c, (uint64_t)s->n_slots * CB_SLOT_STRIDE * sizeof *s->slots);
    s->bits = (uint64_t *)kda_carve(&c, ((uint64_t)s->chunks_max + 63) / 64 * sizeof *s->bits);
    s->balance = (int32_t *)kda_carve(&c, 32ull * cb_rows(s->chunks_max) * sizeof *s->balance);
    s->run = (uint32_t *)kda_carve(&c, (uint64_t)s->chunks_max * sizeof *s->run);
    s->lock = (uint32_t *)kda_carve(&c, sizeof *s->lock);
    s->hint = (uint32_t *)kda_carve(&c, sizeof *s->hint);
    return c.used;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    uint32_t sms = n_sms ? n_sms : 1, slots = sms;
    uint64_t chunk = CB_MAX_CHUNK, limit = plan->limit_bytes;
    /* About 16 chunks a slot; a growable pool starts with about one a slot
     * (more come as it grows), so that its chunks are not so small that
     * common requests take the runs' path. */
    uint64_t per_slot = limit ? 1 : 16;
    while (chunk > CB_MIN_CHUNK && chunk * per_slot * slots > bytes) chunk /= 2;
    while (chunk > bytes) chunk /= 2; /* a pool smaller than one chunk */
    uint64_t chunks, room;
    for (;;) {
        chunks = chunk ? bytes / chunk : 0, room = chunks;
        if (limit && chunks) { /* growable: the state has room for the most it may grow to */
            uint64_t most = limit / chunk < CB_MAX_CHUNKS ? limit / chunk : CB_MAX_CHUNKS;
            room = most > chunks ? most : chunks;
        }
        /* A tiny pool, or a limit of fewer than two chunks an SM: fewer
         * slots, leaving chunks for closers, and the SMs share them; the
         * chunks are made smaller until a slot's bound admits the SMs that
         * share it (cb_sharers). */
        slots = room < 2ull * sms ? (room > 1 ? (uint32_t)room / 2 : 1) : sms;
        if (chunk <= CB_MIN_CHUNK || (sms + slots - 1) / slots <= cb_sharers((uint32_t)chunk)) break;
        chunk /= 2;
    }
    if (chunks == 0 || chunks > CB_MAX_CHUNKS) {
        snprintf(err, errlen, "CountedBump cannot split a pool of %.1f MiB into at most %u chunks of at most 1 MiB",
                 bytes / 1048576.0, CB_MAX_CHUNKS);
        return -1;
    }
    if (limit) plan->limit_bytes = room * chunk;
    h->state.chunks = (uint32_t)chunks;
    h->state.chunks_max = (uint32_t)room;
    h->state.chunk_bytes = (uint32_t)chunk;
    h->state.n_slots = slots;
    plan->state_bytes = plan->clear_bytes = kda_alloc_bind(h, NULL);
    return 0;
}

/* From a host copy of the state: the free bytes (free chunks, and the
 * rest of the slots' open chunks) and the largest block one request could
 * get; the bytes serving a block: a run's chunks (a small block's are its
 * padded request, which the state does not keep: 0, not counted). */
static inline void kda_alloc_space(const kda_heap *h, kda_space *space)
{
    uint64_t run = 0, *free_bytes = &space->free_bytes, *largest = &space->largest_block;
    *free_bytes = *largest = 0;
    space->known = 1;
    for (uint32_t c = 0; c < h->state.chunks; c++) {
        if (cb_bits(h)[c / 64] >> (c % 64) & 1) {
            run = 0;
            continue;
        }
        run += h->state.chunk_bytes;
        *free_bytes += h->state.chunk_bytes;
        if (run > *largest) *largest = run;
    }
    for (uint32_t s = 0; s < h->state.n_slots; s++) {
        uint64_t value = *cb_slot(h, s), used = cb_slot_chunk(value) ? cb_slot_bytes(value) : h->state.chunk_bytes;
        if (used < h->state.chunk_bytes) {
            uint64_t rest = h->state.chunk_bytes - used;
            *free_bytes += rest;
            uint64_t one = rest < h->state.chunk_bytes / 4 ? rest : h->state.chunk_bytes / 4; /* a small request's most */
            if (one > *largest) *largest = one;
        }
    }
}
#define KDA_ALLOC_HAS_BLOCK_BYTES 1
static inline uint64_t kda_alloc_block_bytes(const kda_heap *h, uint64_t offset)
{
    return (uint64_t)*cb_run(h, (uint32_t)(offset / h->state.chunk_bytes)) * h->state.chunk_bytes;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }

/* After the state is cleared: every slot starts with a chunk (slot s with
 * chunk s), so that the first requests do not all race to fill them. */
KDA_FN void kda_alloc_reset_finish(const kda_heap *h)
{
    for (uint32_t s = 0; s < h->state.n_slots && s < h->state.chunks; s++) {
        cb_bits(h)[s / 64] |= (uint64_t)1 << (s % 64);
        *cb_slot(h, s) = cb_slot_value(s + 1);
    }
}

/* Growth: the pool holds more chunks.  Their bits were cleared with the
 * state and never set (every search stops at `chunks`), so they are free
 * as soon as the descriptor counts them; a slot left without a chunk takes
 * one on its next request, as after any shortage. */
static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes)
{
    uint64_t chunks = bytes / h->state.chunk_bytes;
    h->bytes = bytes;
    h->state.chunks = chunks < h->state.chunks_max ? (uint32_t)chunks : h->state.chunks_max;
}
KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after) { (void)before, (void)after; }

#endif
