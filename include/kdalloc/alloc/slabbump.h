/* slabbump.h - SlabBump, this project's second allocator (beyond the paper;
 * docs/alloc.md): CountedBump's one atomicAdd per request, on a counter per
 * SM (or set of SMs) and size class, in chunks of one size class whose freed blocks are
 * served again while other blocks of the chunk stay live.
 *
 * Pool.  Chunks of C bytes (a power of two from 4 KiB to 256 KiB, about
 * pool / (8 x SMs), at least 64 chunks where 4 KiB allow it: a 4 GiB pool
 * on 132 SMs has chunks of 256 KiB, 128 blocks of 2 KiB an install, not 32;
 * installs are what requests wait for).  A chunk is free, or serves one
 * size class (16 B to 64 KiB, two classes an octave, up to C/4), or is
 * part of a run of whole chunks for a larger request.  Each (set, class)
 * has a slot that hands out the blocks of its current chunk: one atomicAdd
 * takes a ticket.  A set per SM where the slots' open chunks fit in a
 * quarter of the pool; in smaller pools SMs share sets (SM i: i % sets).
 *
 * State, outside the pool (kda_state):
 *   slot[s]      64 bits in its own 128-byte line: chunk + 1 (top 21 bits;
 *                0: none), the tickets it may hand out (19), whether they
 *                are the chunk's first life (1), tickets taken (low 23);
 *                beside it the fill word (1 while a request fills the slot)
 *   status[c]    32 bits: state (free, active in a slot, closed, queued for
 *                reuse), class + 1 (or a run's mark), and the blocks freed
 *                and not yet taken back (low 25 bits); 32 consecutive
 *                chunks' words in 32 lines (sb_st), so that the frees of
 *                chunks that SMs took side by side do not share a line
 *   freed[c][]   one bit a block: freed since the chunk was last installed
 *   avail[c][]   one bit a block: free for the tickets of the slot it is in
 *   taken[]      one bit a chunk: not free; reusable[k][]: queued, class k
 *   queued[k]    at least the chunks of class k queued (added before the
 *                bit is set, taken off after it is cleared): 0 skips the search
 *   free_chunks  at least the chunks in the free set (added before a bit
 *                is cleared, taken off after one is set): 0 skips the
 *                search, which in a pool taken whole would read every word
 *   qhint[k]     the word of reusable[k] its last search took a bit from
 *   run[c]       a run's chunk count, at its first chunk; lock, hint
 *
 * malloc(S), S up to the largest class: the ticket t of the SM set's slot for
 * S's class.  t < limit: in a chunk's first life the block is t; after
 * that, t claims one bit of avail (atomicAnd from a hashed word on).
 * t == limit: this request closes the chunk and installs the next: a free
 * chunk (first life: limit = blocks a chunk), else a chunk of the class
 * queued for reuse (its freed bits move to avail: limit = how many), else
 * none.
 * t > limit: wait until the slot changes, then ask again.  An empty slot is
 * filled by one request at a time, under its fill word.  Larger requests
 * take runs of whole chunks from the top of the pool: one CAS where the run
 * fits in a word of the taken set, else under a lock.
 *
 * Lanes of a warp that free blocks of one chunk at once count them with
 * one add (the group's leader's) and set the bits of one word with one
 * atomicOr; a lone lane, and every host thread, skips the group's steps.
 *
 * free(p): the chunk's freed count + 1, then p's bit in freed.  A closed
 * chunk whose count reaches a quarter of its blocks is queued for reuse, by
 * the request that made it so (or by its closer, if it had already); one
 * whose every block is freed goes back to the free set, for any class.
 *
 * Invariants (why no block is handed out twice).
 *   - In a chunk's first life block t goes to ticket t of the one slot
 *     value that installed it, and a chunk has one first life a reset.
 *   - Every other block comes from an avail bit.  A bit is set in freed by
 *     the one free of a block handed out, moved to avail by the one
 *     installer that swaps the word to 0, and cleared by the one atomicAnd
 *     that finds it set: so each free serves one request again.
 *   - The tickets under a limit equal the bits moved in for them; a
 *     ticket's holder searches until it claims a bit, and a bit claimed by
 *     a late holder of an older ticket leaves one of its own for a later
 *     one: every holder finds one, and no two the same.
 *   - The freed count is added before the bit is set, so an installer never
 *     takes away more than the count holds.
 *   - A chunk is active in one slot at a time: it leaves the free set, and
 *     the reuse queue, by one atomic each.
 *   - A chunk with nothing live and out of every slot is free: the last
 *     free retires it whatever state it is in (closed, or queued: then it
 *     takes the queue's bit), and a queuer reads the count again after
 *     setting the bit, for a last free that came before the bit.
 *   - An install from the queue moves at least the blocks counted when it
 *     took the chunk (it waits for bits of counted frees still on their
 *     way), so it never installs an empty chunk.
 *
 * Memory order (PTX: the atomics are relaxed, kda_fence is fence.sc.gpu; a
 * fence then a write releases, a read then a fence acquires; host atomics
 * are stronger and hide all of this).  Each hand-off between threads:
 *   - a block served in a first life: the installer writes status, a
 *     fence, then the slot (release); the request computes the block's
 *     address from its add's result.  The block served again: the free's
 *     fence (release of its accesses), its count add, its freed bit; the
 *     installer swaps the freed word to 0, ors the bits into avail, a
 *     fence, the slot (release); the claimer's atomicAnd that takes the
 *     avail bit is an acquire (atom.acquire: a bit may come from a later
 *     install than the slot value the request read, so the acquire is on
 *     the And, not on the slot's add).
 *   - count before bit (free) and bit before count taken back (installer):
 *     the free's bit address is computed from its add's result (the class,
 *     passed from the group's leader by a shuffle),
 *     the installer's subtraction from the bits its swaps returned.  The
 *     PTX model does not order accesses by such dependencies; the hardware
 *     does (no access issues before its address or value is known, and
 *     atomics are performed at L2 in issue order).  A fence between them
 *     would hold in the model too, at a fence on every free.
 *   - taking a chunk (atomicOr on taken, CAS for a run) and then writing
 *     its status or run: the taking atomic is an acquire, so the writes
 *     land after the last owner's: a retirer writes status 0, a fence,
 *     then clears the bit (release); a run's free likewise.
 *   - queuing: the state moved to QUEUED (CAS), the count of queued, a
 *     fence, the bit (release); the taker of the bit fences (acquire)
 *     before its move to ACTIVE.  Then the queuer fences and reads the
 *     count; a last free adds its count, fences (sb_retire) and takes the
 *     bit: of two such fence.sc pairs one sees the other's write.
 *   - a retirer waits for every freed bit, then clears the words and the
 *     status, a fence (acquire of the frees, release of the clean chunk),
 *     then clears the taken bit.
 *   - the fill word: a lock (CAS) then a fence, the slot read and written,
 *     a fence, the unlock; a waiter reads the fill word down, a fence,
 *     then the slot (a stale empty slot would be a false NULL).
 *   - the closer fences after the add that made it closer; the runs' lock
 *     is taken with a CAS then a fence and given back after a fence.
 *   - the hint, queued[k] and the plain loads of bitmap words only steer
 *     the searches: the atomic on the word decides.
 * Fast paths: malloc in a first life, one atomicAdd; after it, the add and
 * an acquiring atomicAnd.  free: a fence, an atomicAdd and an atomicOr.
 *
 * Limits: a chunk keeps its class while any of its blocks is live (memory
 * freed around live blocks serves that class only); 4 blocks at least a
 * chunk; a growable pool grows to at most 131,071 chunks (the state is
 * laid out for them: 512 MiB from a start of 4 KiB chunks).
 */
#ifndef KDA_SLABBUMP_H
#define KDA_SLABBUMP_H

#include <stdio.h>

#define KDA_ALLOC_NAME "SlabBump"
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL (64ull << 10) /* 16 chunks of 4 KiB */
#define KDA_ALLOC_GROWS 1
#define KDA_ALLOC_CHUNKS 1
#define KDA_ALLOC_REUSES_HOLES 1

#include "kdalloc/alloc/slabbump_layout.h"

/* ---- the chunk sets ---- */

/* A free chunk, taken (its bit set), or UINT32_MAX.  From the hint word
 * on, wrapping; within a word each SM starts at its own bit (SM x 37 mod
 * 64), so closers of different SMs take different bits with one atomicOr
 * each instead of all racing for the lowest.  The hint moves to the word a
 * chunk was taken from: the searches sweep the pool, and a pool with few
 * free chunks costs a search the words up to the next one, not the words
 * from the last chunk freed (a hint lowered by every retire had the next
 * search read every full word above it again). */
KDA_FN uint32_t sb_take_free(const kda_heap *h)
{
    if (!kda_load32(h->state.free_chunks)) return UINT32_MAX; /* the pool taken whole: no search */
    uint32_t words = sb_words_of(h), start = kda_load32(h->state.hint), from = kda_sm_id() * 37u % 64;
    if (start >= words) start = 0;
    for (uint32_t i = 0; i < words; i++) {
        uint32_t w = (start + i) % words, left = h->state.chunks - 64 * w;
        uint64_t valid = left >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << left) - 1;
        uint64_t free_bits = ~kda_load64(&h->state.taken[w]) & valid;
        while (free_bits) {
            uint64_t upper = free_bits & ~(uint64_t)0 << from, pick = upper ? upper : free_bits;
            uint64_t bit = pick & (0 - pick);
            uint64_t old = kda_or64_acquire(&h->state.taken[w], bit); /* acquire: after the retirer's status 0 */
            if (!(old & bit)) {
                kda_add32(h->state.free_chunks, 0u - 1u);
                KDA_ASSERT(kda_load32(h->state.free_chunks) <= h->state.chunks, "free_chunks never wraps below 0");
                if (w != start) kda_cas32(h->state.hint, start, w);
                SB_COUNT(SB_D_FREE_WORDS, i + 1);
                return 64 * w + (uint32_t)(63 - kda_clz64(bit));
            }
            free_bits = ~(old | bit) & valid;
        }
    }
    SB_COUNT(SB_D_FREE_WORDS, words);
    return UINT32_MAX;
}

/* A chunk of class k queued for reuse, taken off the queue, or
 * UINT32_MAX.  From the class's hint word on, wrapping; the hint moves to
 * the word a chunk was taken from (as the free set's). */
KDA_FN uint32_t sb_take_queued(const kda_heap *h, uint32_t k)
{
    uint64_t *q = sb_reusable(h, k);
    if (!kda_load32(&h->state.queued[k])) return UINT32_MAX; /* the common case: a search of no bits */
    uint32_t words = sb_words_of(h), start = kda_load32(&h->state.qhint[k]);
    if (start >= words) start = 0;
    for (uint32_t i = 0; i < words; i++) {
        uint32_t w = (start + i) % words;
        uint64_t x = kda_load64(&q[w]);
        while (x) {
            uint64_t bit = x & (0 - x);
            uint64_t old = kda_and64(&q[w], ~bit);
            if (old & bit) {
                kda_add32(&h->state.queued[k], 0u - 1u);
                if (w != start) kda_cas32(&h->state.qhint[k], start, w);
                SB_COUNT(SB_D_QUEUE_WORDS, i + 1);
                return 64 * w + (uint32_t)(63 - kda_clz64(bit));
            }
            x = old & ~bit;
        }
    }
    SB_COUNT(SB_D_QUEUE_WORDS, words);
    return UINT32_MAX;
}

/* Moves chunk c of class k from state `from` to `to`, keeping its count;
 * returns the status it moved from, or found in another state or class
 * (then nothing moved: a late request may meet a chunk that was retired
 * and serves another class now). */
KDA_FN uint32_t sb_move(const kda_heap *h, uint32_t c, uint32_t k, uint32_t from, uint32_t to)
{
    uint32_t st = kda_load32(sb_st(h, c)), old;
    while (sb_state(st) == from && sb_class1(st) == k + 1 &&
           (old = kda_cas32(sb_st(h, c), st, (st & ~(3u << SB_STATE_SHIFT)) | to << SB_STATE_SHIFT)) != st)
        st = old;
    return st;
}
KDA_HD int sb_moved(uint32_t st, uint32_t k, uint32_t from) { return sb_state(st) == from && sb_class1(st) == k + 1; }

/* The slot value that installs the next chunk of class k: a free one, else
 * one queued for reuse (its freed blocks moved to avail); 0 for none.  Free
 * chunks first: a first life hands out block t to ticket t, the fastest
 * path, and a chunk whose blocks are all freed goes back to the free set
 * anyway; the queue serves the class once the pool has no free chunk. */
KDA_FN uint64_t sb_install(const kda_heap *h, uint32_t k)
{
    uint32_t c = sb_take_free(h);
    if (c != UINT32_MAX) {
        kda_store32(sb_st(h, c), sb_status(SB_ACTIVE, k + 1, 0));
        kda_fence();
        SB_COUNT(SB_D_INSTALL_FREE, 1);
        return sb_value(c, sb_blocks(h, k), 1);
    }
    c = sb_take_queued(h, k);
    if (c == UINT32_MAX) {
        SB_COUNT(SB_D_INSTALL_NONE, 1);
        return 0;
    }
    kda_fence(); /* acquire: after the queue's bit */
    /* Only the taker of the queue's bit moves a chunk out of QUEUED, so the
     * move succeeds; the count it read (at least the threshold) is frees
     * whose bits are set or on their way (a free counts, then sets its
     * bit).  Those bits are waited for: installing fewer, none at worst,
     * would close the chunk again at once, queue it and install it again
     * while a free is held between its two steps. */
    uint32_t want = sb_move(h, c, k, SB_QUEUED, SB_ACTIVE) & SB_COUNT_MASK;
    KDA_ASSERT(want >= sb_threshold(h, k) && want <= sb_blocks(h, k),
               "a chunk taken off the queue counts a quarter to all of its blocks freed");
    uint32_t moved = 0, *freed = sb_freed(h, c), *avail = sb_avail(h, c);
    for (uint32_t words = sb_words_k(h, k);; kda_pause()) {
        for (uint32_t w = 0; w < words; w++) {
            /* a word read empty is left alone: a bit landing after the read
             * stays counted, for the chunk's next install */
            uint32_t x = kda_load32(&freed[w]) ? kda_and32(&freed[w], 0u) : 0u;
            if (x) {
                kda_or32(&avail[w], x);
                moved += sb_popc(x);
            }
        }
        if (moved >= want) break;
        SB_COUNT(SB_D_INSTALL_ROUNDS, 1);
    }
    SB_COUNT(SB_D_INSTALL_QUEUED, 1);
    SB_COUNT(SB_D_MOVED, moved);
    SB_SEAM(SB_SEAM_INSTALLED, h, c, moved);
    kda_add32(sb_st(h, c), 0u - moved);
    KDA_ASSERT((kda_load32(sb_st(h, c)) & SB_COUNT_MASK) <= sb_blocks(h, k),
               "an install moves no more bits than the count holds");
    kda_fence(); /* release: avail before the slot names the chunk */
    return sb_value(c, moved, 0);
}

/* The free that makes every block of chunk c freed: if c is out of any
 * slot, it goes back to the free set, for any class.  Every block freed
 * means none is in avail (a block there was never handed out) and no free
 * of it is to come.  The retirer owns c once it takes it off its queue
 * (an installer may have taken it first: then it serves its class again)
 * or moves it from closed to queued without the queue's bit (no installer
 * can find it); then it waits for the bits of frees still on their way
 * (their counts came first), clears them, and frees the chunk. */
KDA_FN void sb_retire(const kda_heap *h, uint32_t c, uint32_t k)
{
    kda_fence(); /* after the count add (a free's) or the queue's bit (sb_queue's): see sb_queue */
    uint32_t st = kda_load32(sb_st(h, c)), n = sb_blocks(h, k);
    if ((st & SB_COUNT_MASK) != n || sb_class1(st) != k + 1) return;
    if (sb_state(st) == SB_QUEUED) {
        uint64_t bit = (uint64_t)1 << (c % 64);
        if (!(kda_and64(&sb_reusable(h, k)[c / 64], ~bit) & bit)) return;
        kda_add32(&h->state.queued[k], 0u - 1u);
    } else if (sb_state(st) != SB_CLOSED || kda_cas32(sb_st(h, c), st, st | 1u << SB_STATE_SHIFT) != st) {
        return; /* active in a slot, or another free or its closer moved it */
    }
    uint32_t *freed = sb_freed(h, c), words = sb_words_k(h, k);
    for (uint32_t bits = 0;; bits = 0) {
        for (uint32_t w = 0; w < words; w++) bits += sb_popc(kda_load32(&freed[w]));
        KDA_ASSERT(bits <= n, "a retire finds exactly n freed bits, never more");
        if (bits == n) break;
        kda_pause();
    }
    for (uint32_t w = 0; w < words; w++) kda_store32(&freed[w], 0);
    kda_store32(sb_st(h, c), 0);
    kda_add32(h->state.free_chunks, 1);
    SB_COUNT(SB_D_RETIRES, 1);
    kda_fence(); /* release: the chunk clean (and counted) before it is free */
    kda_and64(&h->state.taken[c / 64], ~((uint64_t)1 << (c % 64)));
}

/* Chunk c, moved to QUEUED by the caller, gets its queue bit.  A free
 * that made every block freed between the move and the bit found no bit
 * to take and left the chunk to us: after the bit, the count is read
 * again (sb_retire), and such a chunk retires now instead of sitting in
 * the queue with nothing live.  The bit, a fence, the count read; the
 * free: its count add, a fence (sb_retire's), the bit taken: one of the
 * two sees the other, and one atomicAnd takes the bit. */
KDA_FN void sb_queue(const kda_heap *h, uint32_t c, uint32_t k)
{
    kda_add32(&h->state.queued[k], 1);
    SB_COUNT(SB_D_QUEUES, 1);
    kda_fence(); /* the state and the count before the queue's bit */
    SB_SEAM(SB_SEAM_QUEUED, h, c, k);
    kda_or64(&sb_reusable(h, k)[c / 64], (uint64_t)1 << (c % 64));
    sb_retire(h, c, k);
}

/* The closer's step: chunk c leaves its slot, and is queued if enough of
 * it is free already. */
KDA_FN void sb_close(const kda_heap *h, uint32_t c, uint32_t k)
{
    uint32_t st = sb_move(h, c, k, SB_ACTIVE, SB_CLOSED);
    KDA_ASSERT(sb_moved(st, k, SB_ACTIVE), "the closer's chunk is active in its slot, in its class");
    KDA_ASSERT((st & SB_COUNT_MASK) <= sb_blocks(h, k), "a chunk's count never exceeds its blocks");
    if ((st & SB_COUNT_MASK) == sb_blocks(h, k)) sb_retire(h, c, k);
    else if ((st & SB_COUNT_MASK) >= sb_threshold(h, k) &&
             sb_moved(sb_move(h, c, k, SB_CLOSED, SB_QUEUED), k, SB_CLOSED))
        sb_queue(h, c, k);
}

/* ---- runs of whole chunks, for requests above the largest class ---- */

#include "kdalloc/alloc/slabbump_runs.h"

/* ---- malloc and free ---- */

/* Ticket t of a chunk after its first life: one avail bit, searched from a
 * word hashed from the ticket. */
KDA_FN uint32_t sb_claim(const kda_heap *h, uint32_t c, uint32_t k, uint32_t t)
{
    uint32_t *avail = sb_avail(h, c), words = sb_words_k(h, k), first = (t * 2654435761u >> 8) % words;
    for (uint32_t i = 0;; i++) {
        uint32_t w = (first + i) % words, x = kda_load32(&avail[w]);
        while (x) {
            uint32_t bit = x & (0u - x);
            /* acquire: the install that set the bit, and the free before it */
            uint32_t old = kda_and32_acquire(&avail[w], ~bit);
            SB_COUNT(SB_D_CLAIM_ANDS, 1);
            if (old & bit) return 32 * w + (uint32_t)kda_ffs32(bit) - 1;
            x = old & ~bit;
        }
        if (i >= words) { /* a bit is on its way (an older ticket took one of ours) */
            SB_COUNT(SB_D_CLAIM_PAUSES, 1);
            kda_pause();
        }
    }
}

KDA_FN void *sb_malloc(const kda_heap *h, uint64_t size)
{
    if (size == 0 || size > h->bytes) return NULL; /* before the padding, which wraps near 2^64 */
    uint64_t need = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    uint32_t k = sb_class_of(h, need);
    if (k == SB_CLASSES) {
        SB_COUNT(SB_D_RUNS, 1);
        return sb_take_run(h, need);
    }
    uint32_t s = (kda_sm_id() % h->state.sets) * h->state.classes + k;
    uint64_t *slot = sb_slot(h, s);
    for (;;) {
        uint64_t v = kda_add64(slot, 1);
        uint32_t c1 = sb_v_chunk(v), t = sb_v_ticket(v), limit = sb_v_limit(v);
        if (c1 && t < limit) {
            SB_COUNT(sb_v_first(v) ? SB_D_FIRST : SB_D_CLAIMED, 1);
            uint32_t b = sb_v_first(v) ? t : sb_claim(h, c1 - 1, k, t);
            KDA_ASSERT(c1 - 1 < h->state.chunks && b < sb_blocks(h, k), "a ticket's block lies in its slot's chunk");
            return h->base + ((uint64_t)(c1 - 1) << h->state.chunk_shift) + (uint64_t)b * sb_block(k);
        }
        if (c1 && t == limit) { /* the closer: the next chunk, then this request again */
            SB_TIMER(t0);
            kda_fence();
            sb_close(h, c1 - 1, k);
            kda_store64(slot, sb_install(h, k));
            SB_COUNT(SB_D_CLOSES, 1);
            SB_COUNT_SINCE(SB_D_CYCLES_CLOSE, t0);
            continue;
        }
        if (!c1) { /* an empty slot: one request at a time fills it */
            if (kda_cas32(sb_fill(h, s), 0, 1) == 0) {
                SB_COUNT(SB_D_FILLS, 1);
                kda_fence();
                uint64_t seen = kda_load64(slot), next = 0, old;
                if (!sb_v_chunk(seen)) {
                    next = sb_install(h, k);
                    while ((old = kda_cas64(slot, seen, next)) != seen) seen = old; /* only adds move it */
                }
                kda_fence();
                kda_store32(sb_fill(h, s), 0);
                if (!sb_v_chunk(seen) && !next) return NULL; /* no chunk left for the class */
            } else {
                while (kda_load32(sb_fill(h, s)) && !sb_v_chunk(kda_load64(slot))) {
                    SB_COUNT(SB_D_FILL_PAUSES, 1);
                    kda_pause();
                }
                kda_fence(); /* acquire: the filler's slot, written before its fill word came down */
                if (!sb_v_chunk(kda_load64(slot))) return NULL; /* the filler found none */
            }
            continue;
        }
        /* past the limit: wait until the closer has installed the next */
        SB_TIMER(t0);
        for (uint64_t now = kda_load64(slot); sb_v_chunk(now) && sb_v_ticket(now) > sb_v_limit(now);
             now = kda_load64(slot)) {
            SB_COUNT(SB_D_LIMIT_PAUSES, 1);
            kda_pause();
        }
        SB_COUNT_SINCE(SB_D_CYCLES_LIMIT, t0);
    }
}

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    SB_TIMER(t0);
    void *p = sb_malloc(h, size);
    SB_COUNT(SB_D_MALLOCS, 1);
    if (!p) SB_COUNT(SB_D_NULLS, 1);
    SB_COUNT_SINCE(SB_D_CYCLES_MALLOC, t0);
    return p;
}

KDA_FN void sb_free(const kda_heap *h, void *ptr)
{
    uint64_t offset = (uint64_t)((unsigned char *)ptr - h->base);
    uint32_t c = (uint32_t)(offset >> h->state.chunk_shift);
    kda_fence(); /* our stores to the block land before it can be served again */
    /* The lanes freeing blocks of one chunk now count them with one add,
     * and the bits of one word with one OR.  The count first (see the
     * invariants); what it held names the class.  A run's count is written
     * over by its free (a run is one block: its group is one lane). */
    uint32_t active = kda_active_lanes(), alone = !(active & (active - 1));
    uint32_t mates = alone ? active : kda_group_in(active, c), lead = kda_group_leader(mates), m = sb_popc(mates);
    alone = m == 1;
    uint32_t old = 0;
    if (kda_lane_id() == lead) old = kda_add32(sb_st(h, c), m);
    if (!alone) old = kda_group_bcast32(mates, old, lead);
    uint32_t class1 = sb_class1(old);
    if (class1 == SB_RUN_MARK) {
        sb_free_run(h, c);
        return;
    }
    KDA_ASSERT(c < h->state.chunks && class1 >= 1 && class1 <= h->state.classes,
               "a freed block lies in a chunk of the pool that serves a class");
    uint32_t k = class1 - 1, b = sb_div_block((uint32_t)offset & (h->state.chunk_bytes - 1), k);
    SB_SEAM(SB_SEAM_COUNTED, h, c, b);
    if (alone) {
        kda_or32(&sb_freed(h, c)[b / 32], 1u << (b % 32));
    } else {
        uint32_t word_mates = kda_group_in(mates, b / 32), bits = kda_group_or(word_mates, 1u << (b % 32));
        if (kda_lane_id() == kda_group_leader(word_mates)) kda_or32(&sb_freed(h, c)[b / 32], bits);
        kda_group_sync(mates); /* every bit of the group set before its leader acts on the count */
        if (kda_lane_id() != lead) return;
    }
    uint32_t before = old & SB_COUNT_MASK, count = before + m, thr = sb_threshold(h, k);
    KDA_ASSERT(count <= sb_blocks(h, k), "a chunk's count never exceeds its blocks");
    if (count == sb_blocks(h, k)) sb_retire(h, c, k);
    else if (sb_state(old) == SB_CLOSED && before < thr && count >= thr &&
             sb_moved(sb_move(h, c, k, SB_CLOSED, SB_QUEUED), k, SB_CLOSED))
        sb_queue(h, c, k);
}

KDA_FN void kda_free(const kda_heap *h, void *ptr)
{
    if (!ptr) return;
    SB_TIMER(t0);
    sb_free(h, ptr);
    SB_COUNT(SB_D_FREES, 1);
    SB_COUNT_SINCE(SB_D_CYCLES_FREE, t0);
}

/* ---- host side ---- */

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_state *s = &h->state;
    kda_carver cv = {block, 0};
    uint64_t n = s->chunks_max, words = (n + 63) / 64;
    s->slots = (uint64_t *)kda_carve(&cv, (uint64_t)s->sets * s->classes * SB_SLOT_STRIDE * sizeof *s->slots);
    s->status = (uint32_t *)kda_carve(&cv, 32ull * sb_st_rows(s->chunks_max) * sizeof *s->status);
    s->freed = (uint32_t *)kda_carve(&cv, n * s->words * sizeof *s->freed);
    s->avail = (uint32_t *)kda_carve(&cv, n * s->words * sizeof *s->avail);
    s->taken = (uint64_t *)kda_carve(&cv, words * sizeof *s->taken);
    s->reusable = (uint64_t *)kda_carve(&cv, SB_CLASSES * words * sizeof *s->reusable);
    s->queued = (uint32_t *)kda_carve(&cv, SB_CLASSES * sizeof *s->queued);
    s->free_chunks = (uint32_t *)kda_carve(&cv, sizeof *s->free_chunks);
    s->qhint = (uint32_t *)kda_carve(&cv, SB_CLASSES * sizeof *s->qhint);
    s->run = (uint32_t *)kda_carve(&cv, n * sizeof *s->run);
    s->lock = (uint32_t *)kda_carve(&cv, sizeof *s->lock);
    s->hint = (uint32_t *)kda_carve(&cv, sizeof *s->hint);
    return cv.used;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    kda_state *s = &h->state;
    uint64_t chunk = SB_MAX_CHUNK, sms = n_sms ? n_sms : 1;
    while (chunk > SB_MIN_CHUNK && (chunk * 8 * sms > bytes || bytes / chunk < 64)) chunk /= 2;
    uint64_t chunks = bytes / chunk, room = chunks;
    if (chunks < 16 || chunks >= (1u << 21) - 1) {
        snprintf(err, errlen, "SlabBump splits a pool into 16 to 2 million chunks of 4-256 KiB: %.1f MiB does not fit",
                 (double)bytes / (1 << 20));
        return -1;
    }
    if (plan->limit_bytes) { /* growable: the state has room for the most it may grow to */
        uint64_t most = plan->limit_bytes / chunk < SB_MAX_ROOM ? plan->limit_bytes / chunk : SB_MAX_ROOM;
        room = most > chunks ? most : chunks;
        plan->limit_bytes = room * chunk;
    }
    s->chunks = (uint32_t)chunks;
    s->chunks_max = (uint32_t)room;
    s->chunk_bytes = (uint32_t)chunk;
    for (s->chunk_shift = 0; (1ull << s->chunk_shift) < chunk; s->chunk_shift++) {
    }
    s->words = (uint32_t)(chunk / KDA_UNIT / 32);
    for (s->classes = 0; s->classes < SB_CLASSES && sb_block(s->classes) <= chunk / 4; s->classes++) {
    }
    /* Every slot may hold a chunk open: a set of slots (one a class) an SM
     * while they take at most a quarter of the pool, else SMs share sets. */
    uint64_t sets = bytes / (4 * chunk * s->classes);
    s->sets = (uint32_t)(sets < 1 ? 1 : sets > sms ? sms : sets);
    plan->state_bytes = plan->clear_bytes = kda_alloc_bind(h, NULL);
    return 0;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { kda_store32(h->state.free_chunks, h->state.chunks); }

/* Growth: the pool holds more chunks.  Their bits and status were cleared
 * with the state and never set (every search stops at `chunks`), so they
 * are free as soon as the descriptor counts them. */
static inline void kda_alloc_grow_heap(kda_heap *h, uint64_t bytes)
{
    uint64_t chunks = bytes / h->state.chunk_bytes;
    h->bytes = bytes;
    h->state.chunks = chunks < h->state.chunks_max ? (uint32_t)chunks : h->state.chunks_max;
}
KDA_FN void kda_alloc_grow(const kda_heap *before, const kda_heap *after)
{
    KDA_ASSERT(after->state.chunks >= before->state.chunks, "growth only adds chunks");
    kda_add32(after->state.free_chunks, after->state.chunks - before->state.chunks);
}

/* From a host copy of the state: free chunks, the free blocks of class
 * chunks (freed and avail bits, and a first life's blocks not yet handed
 * out); the largest block: a run of free chunks, or a class's block. */
static inline void kda_alloc_space(const kda_heap *h, kda_space *space)
{
    const kda_state *s = &h->state;
    uint64_t run = 0;
    space->free_bytes = space->largest_block = 0;
    space->known = 1;
    for (uint32_t c = 0; c < s->chunks; c++) {
        uint32_t class1 = sb_class1(*sb_st(h, c));
        if (!(s->taken[c / 64] >> (c % 64) & 1)) {
            space->free_bytes += s->chunk_bytes;
            run += s->chunk_bytes;
            if (run > space->largest_block) space->largest_block = run;
            continue;
        }
        run = 0;
        if (class1 == 0 || class1 == SB_RUN_MARK) continue;
        uint64_t blocks = 0;
        for (uint32_t w = 0; w < s->words; w++) blocks += sb_popc(sb_freed(h, c)[w]) + sb_popc(sb_avail(h, c)[w]);
        space->free_bytes += blocks * sb_block(class1 - 1);
        if (blocks && sb_block(class1 - 1) > space->largest_block) space->largest_block = sb_block(class1 - 1);
    }
    for (uint32_t i = 0; i < s->sets * s->classes; i++) {
        uint64_t v = *sb_slot(h, i);
        if (sb_v_chunk(v) && sb_v_first(v) && sb_v_ticket(v) < sb_v_limit(v))
            space->free_bytes += (uint64_t)(sb_v_limit(v) - sb_v_ticket(v)) * sb_block(i % s->classes);
    }
}

#endif
