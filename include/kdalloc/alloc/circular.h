/* circular.h - CMalloc and its variants (Vinkler & Havran 2015, Sec. 5.2-5.4)
 * as ONE implementation with two compile-time parameters:
 *   fused: the free/used flag and the next-chunk offset are one 64-bit word,
 *          read and swapped together (CFMalloc, CFMMalloc); otherwise they
 *          are two 32-bit words, and a chunk is locked by swapping its flag
 *          alone before its size is read (CMalloc, CMMalloc), as published;
 *   multi: one allocation offset (memOffset) per multiprocessor, each
 *          starting in its own heap (CMMalloc, CFMMalloc).  A request that
 *          no heap chunk can hold (larger than a heap's root) starts at one
 *          more offset instead, kept in the remainder after the heaps: with
 *          one heap per SM of a 132-SM GPU, each heap is tiny, and such a
 *          request would otherwise walk every other heap's chunks first.
 *
 * Pool.  The pool is a circular singly linked list of chunks, in 16-byte
 * units.  Chunk c spans units [c, next); its 8-byte header is the last half
 * of unit c, so its payload starts at unit c + 1, 16-byte aligned, right
 * behind the header:
 *     byte 16c + 8:  flag  = tag(c) | state      (state 0 = free, 1 = used)
 *     byte 16c + 12: next  = first unit of the following chunk
 * The last unit of the pool holds the end marker: always used, next = 0.
 * Offsets are 32-bit unit numbers, so a pool may be up to 64 GiB.
 *
 * Invariants.
 *   - Every home (circ_home: unit 0, and for the multi variants each heap's
 *     first unit and the remainder's) always starts a chunk: free() never
 *     merges a home into its predecessor (unit 0's predecessor is the end
 *     marker, which is never freed anyway).
 *   - Only the thread holding chunk c (flag used) changes c's header, and
 *     only it may merge c's successor into c; so while a thread holds c,
 *     next(c) is a genuine chunk.
 *   - A new header is written and fenced before the link to it is stored.
 *
 * Repairs over the published algorithm (docs/alloc.md):
 *   - Payloads are 16-byte aligned and requests are padded to 16 bytes.
 *   - A walk that has passed whole circles of the pool returns NULL
 *     instead of spinning (so does one restarted KDA_MAX_RESTARTS times).
 *     They must be KDA_HOME_CIRCLES circles from the offset's home, though:
 *     a walk that started at the offset may have followed stale headers
 *     past free chunks, and any walk may pass the chunks large enough
 *     while other threads hold them to split them.
 *   - Tags.  A thread may read a header position it does not hold while the
 *     owner of the chunk before it frees, merges it away, and the merged
 *     chunk is handed out and overwritten (the paper argues the reader cannot
 *     be stalled that long; host threads can be descheduled for that long).
 *     The flag word therefore carries tag(c), a hash of the chunk's own
 *     position and of the pool's epoch (bumped by every reset, so headers
 *     left over from before a reset are not trusted either): a stale
 *     position fails the tag check (or the tagged CAS) instead of being
 *     trusted; the walk steps back to the chunk it came from (or starts
 *     anew: circ_recover).  A header merged away keeps its tag until the
 *     memory is written over, so a stale position can lead to a header
 *     that looks valid but is dead, and its `next` into garbage; stepping
 *     back to such a header must not be repeated (circ_recover).
 *   - free() fences before releasing the chunk, so the freeing thread's
 *     payload stores cannot land after the next owner's.
 */
#ifndef KDA_CIRCULAR_H
#define KDA_CIRCULAR_H

#include <stddef.h>

#include "kdalloc/detail/port.h"

/* The pre-split layout of a circular pool (circular_layout.h): n_heaps heaps side
 * by side from unit 0, each a binary heap of chunk sizes, then one
 * remainder chunk, then the end marker in the last unit. */
typedef struct kda_layout {
    uint32_t n_heaps;    /* 1, or one per SM for the multi variants (fewer if the pool is small) */
    uint32_t levels;     /* L: a heap holds 2^l chunks of root / 2^l units for l < L */
    uint32_t root_units; /* R: a heap's first, largest chunk */
    uint32_t heap_units; /* L * R: heap h starts at unit h * heap_units */
    uint32_t chunks;     /* chunks per heap: 2^L - 1 */
    uint32_t units;      /* the pool it was laid out for (the start, for a grown pool) */
} kda_layout;

/* The state of the CMalloc family. */
typedef struct kda_state {
    uint32_t *offsets;  /* the state block: memOffset per SM, in units; the multi
                         * variants have one more, offsets[n_offsets], for requests
                         * larger than a heap's root chunk (circ_slot); the last
                         * entry is circ_grow's, where its chunk starts */
    uint32_t units;     /* the pool now, in 16-byte units */
    uint32_t n_offsets; /* 1, or one allocation offset per SM */
    uint32_t epoch;     /* bumped by every reset, part of each header's tag */
    kda_layout layout;  /* the pre-split heaps */
} kda_state;

#include "kdalloc/detail/heap.h"

/* Smallest chunk of the pre-split heaps, in units (4 KiB; docs/alloc.md
 * says why this size).  Only the layout (circular_layout.h, host code)
 * uses it: an override with -D must reach the C compiler. */
#ifndef KDA_MIN_CHUNK_UNITS
#define KDA_MIN_CHUNK_UNITS 256u
#endif

/* Walk statistics, for diagnosis only: built with -DKDA_DIAG, device code
 * counts per request size class (class k holds requests of up to 64 * 4^k
 * bytes, the last class the rest) the walks, the headers they read (a fused
 * walk that loses a CAS counts the header again: CFMalloc's is the word its
 * CAS returned, the per-SM variants read it again), their clock cycles,
 * the longest walk, recoveries from stale reads, lost CASes (fused) and
 * NULLs.  A walk adds its counts with a few atomics when it ends, so diagnosed
 * runs are slower and their times not comparable.  kda_walk_stats_print
 * (below) prints them: `kdalloc-allocbench --test warps` and the warm-up
 * build of `kdalloc build` do. */
#define KDA_SIZE_CLASSES 8
#define KDA_SIZE_CLASS_TOP(k) (64ull << (2 * (k))) /* the largest request of class k < KDA_SIZE_CLASSES - 1 */
enum {
    KDA_STAT_WALKS,
    KDA_STAT_READS,
    KDA_STAT_CYCLES,
    KDA_STAT_MAX_READS,
    KDA_STAT_RESTARTS,
    KDA_STAT_LOST_CAS,
    KDA_STAT_NULLS,
    KDA_STATS
};
#if defined(KDA_DIAG) && defined(__CUDACC__)
#define KDA_DIAG_DEVICE 1
#define KDA_ALLOC_HAS_WALK_STATS 1
#endif
#ifdef KDA_DIAG_DEVICE
static __device__ unsigned long long kda_walk_stats[KDA_SIZE_CLASSES][KDA_STATS];
#define KDA_DIAG_CLOCK() clock64()
#else
#define KDA_DIAG_CLOCK() 0
#endif

/* A chunk is split only when it holds at least MAX_FRAG = 5/4 of what the
 * request needs (header included); below that it is handed out whole. */
#define KDA_MAX_FRAG_NUM 5u
#define KDA_MAX_FRAG_DEN 4u
/* Circles of the whole pool from the offset's home before malloc returns
 * NULL.  With thousands of walkers in a small pool, one circle can pass every
 * chunk that is large enough while other threads hold it (docs/alloc.md). */
#define KDA_HOME_CIRCLES 4u
/* Recoveries from stale reads (steps back and restarts) before malloc gives up. */
#define KDA_MAX_RESTARTS 1024u

#define KDA_STATE_FREE 0u
#define KDA_STATE_USED 1u

/* The tag of a header at unit c in the pool's current epoch (see above). */
KDA_HD uint32_t circ_tag(const kda_heap *h, uint32_t c)
{
    return ((c ^ h->state.epoch * 0x85EBCA6Bu) * 0x9E3779B1u ^ 0x5BD1E995u) & ~1u;
}

KDA_FN uint32_t *circ_flag(const kda_heap *h, uint32_t c) { return (uint32_t *)(h->base + (uint64_t)c * KDA_UNIT + 8); }
KDA_FN uint32_t *circ_next(const kda_heap *h, uint32_t c) { return (uint32_t *)(h->base + (uint64_t)c * KDA_UNIT + 12); }
KDA_FN uint64_t *circ_word(const kda_heap *h, uint32_t c) { return (uint64_t *)(h->base + (uint64_t)c * KDA_UNIT + 8); }

KDA_FN uint64_t circ_pack(const kda_heap *h, uint32_t c, uint32_t state, uint32_t next)
{
    return (uint64_t)next << 32 | (circ_tag(h, c) | state);
}

/* Writes a complete header that no other thread can see yet. */
KDA_FN void circ_write_header(const kda_heap *h, uint32_t c, uint32_t state, uint32_t next, int fused)
{
    if (fused) {
        kda_store64(circ_word(h, c), circ_pack(h, c, state, next));
    } else {
        kda_store32(circ_next(h, c), next);
        kda_store32(circ_flag(h, c), circ_tag(h, c) | state);
    }
}

/* The allocation offset a request of `units` units (header included)
 * starts at, and moves: the only one, the SM's, or the large-request one. */
KDA_FN uint32_t circ_slot(const kda_heap *h, int multi, uint32_t units)
{
    if (!multi) return 0;
    return units > h->state.layout.root_units ? h->state.n_offsets : kda_sm_id() % h->state.n_offsets;
}

/* The offset a free of chunk c moves: the large-request one for a chunk in
 * the remainder (where it lives), else the SM's. */
KDA_FN uint32_t circ_free_slot(const kda_heap *h, int multi, uint32_t c)
{
    if (!multi) return 0;
    return c >= h->state.layout.n_heaps * h->state.layout.heap_units ? h->state.n_offsets : kda_sm_id() % h->state.n_offsets;
}

/* Where the offset `slot` starts in a fresh pool, and where a walk from
 * it starts anew: the start of the SM's heap, or for the large-request
 * offset the first chunk after the heaps (the remainder, or the end
 * marker).  A home is never merged away (circ_is_home), so it always
 * starts a chunk. */
KDA_FN uint32_t circ_home(const kda_heap *h, uint32_t slot)
{
    if (slot < h->state.n_offsets) return slot % h->state.layout.n_heaps * h->state.layout.heap_units;
    uint32_t end = h->state.layout.n_heaps * h->state.layout.heap_units;
    return h->state.units - 1 - end >= 2 ? end : h->state.units - 1;
}

KDA_FN int circ_is_home(const kda_heap *h, uint32_t unit, int multi)
{
    if (unit == 0) return 1;
    if (!multi) return 0;
    return (unit < h->state.layout.n_heaps * h->state.layout.heap_units && unit % h->state.layout.heap_units == 0) || unit == circ_home(h, h->state.n_offsets);
}

/* Where the last growth's free chunk starts, 0: none (circ_grow); the entry
 * after the offsets. */
KDA_FN uint32_t *circ_grown_at(const kda_heap *h, int multi) { return &h->state.offsets[h->state.n_offsets + (multi ? 1u : 0u)]; }

/* ---- the pre-split layout (circular_layout.h): heaps, remainder, end marker ----
 * Chunk i (0-based) of a heap is C(i+1) = R / 2^floor(log2(i+1)) units:
 * level l holds 2^l chunks of R/2^l. */

KDA_FN uint32_t circ_layout_end(const kda_layout *l) { return l->n_heaps * l->heap_units; }

/* The remainder after the heaps is a chunk when it has room for one; else
 * the last heap chunk extends to the end marker. */
KDA_FN int circ_has_remainder(const kda_layout *l) { return l->units - 1 - circ_layout_end(l) >= 2; }

/* Writes the initial header of chunk `slot` of heap `heap`. */
KDA_FN void circ_init_chunk(const kda_heap *h, const kda_layout *l, uint32_t heap, uint32_t slot, int fused)
{
    uint32_t level = 0;
    while ((2u << level) <= slot + 1) level++;
    uint32_t size = l->root_units >> level;
    uint32_t offset = heap * l->heap_units + level * l->root_units + (slot + 1 - (1u << level)) * size;
    uint32_t next = offset + size;
    if (heap + 1 == l->n_heaps && slot + 1 == l->chunks && !circ_has_remainder(l)) next = l->units - 1;
    circ_write_header(h, offset, KDA_STATE_FREE, next, fused);
}

/* The remainder, the end marker and the starting offsets (SM s starts in
 * heap s mod n_heaps, large requests after the heaps); after every heap
 * chunk is written. */
KDA_FN void circ_init_finish(const kda_heap *h, const kda_layout *l, int fused, int multi)
{
    if (circ_has_remainder(l))
        circ_write_header(h, circ_layout_end(l), KDA_STATE_FREE, l->units - 1, fused);
    circ_write_header(h, l->units - 1, KDA_STATE_USED, 0, fused);
    for (uint32_t i = 0; i < h->state.n_offsets + (multi ? 1u : 0u); i++) kda_store32(&h->state.offsets[i], circ_home(h, i));
    kda_store32(circ_grown_at(h, multi), 0); /* no growth yet */
}

/* Growth, while no thread allocates: the end marker moves to the pool's new
 * last unit, and the memory between becomes free.  If the chunk the last
 * growth made is still free and still reaches the end marker, it is
 * extended over the new memory (so that successive growths add up to one
 * chunk, large enough for a request larger than each step); else the old
 * marker becomes a new free chunk (the chunk before it merges it in when
 * freed, as any free successor).  A header merged away shows used (the
 * merge locked it), so a free one is a live chunk, unless the merged chunk
 * was handed out and its payload happens to hold this chunk's tagged free
 * flag and the old end at exactly that place (two chosen 32-bit words; a
 * walk from unit 0 would rule it out, but costs a serial read of every
 * header of a full pool per growth step).  The homes stay chunks:
 * a growable pool always has a remainder chunk (kda_alloc_plan), so the
 * large requests' home is the remainder's start whatever the end. */
KDA_FN void circ_grow(const kda_heap *before, const kda_heap *after, int fused, int multi)
{
    uint32_t old_end = before->state.units - 1, end = after->state.units - 1;
    uint32_t last = kda_load32(circ_grown_at(after, multi)), free_flag = circ_tag(after, last) | KDA_STATE_FREE;
    int extend = last != 0 && kda_load32(circ_flag(after, last)) == free_flag &&
                 kda_load32(circ_next(after, last)) == old_end;
    circ_write_header(after, end, KDA_STATE_USED, 0, fused);
    kda_fence();
    if (extend) {
        circ_write_header(after, last, KDA_STATE_FREE, end, fused);
    } else {
        circ_write_header(after, old_end, KDA_STATE_FREE, end, fused);
        kda_store32(circ_grown_at(after, multi), old_end);
    }
}

/* ---- allocation ---- */

/* Where a walk stands: the chunk it is at, the one it came from (a
 * position that looked good a step ago), where this walk started, the
 * position it last failed at, and how far it has gone. */
typedef struct circ_walk {
    uint32_t c, prev, last_step, start, failed, restarts;
    uint32_t reads, lost_cas; /* counted for -DKDA_DIAG only */
    uint32_t home_circles; /* circles begun at home (a walk that circ_recover
                            * sends home counts from its next circle) */
    uint64_t walked;
} circ_walk;

#define CIRC_NONE 0xffffffffu

/* The walk read a stale position.  Step back to where it came from and read
 * that chunk's successor again (it has changed if its owner merged the
 * stale chunk away).  If the walk has just stepped back, that chunk was
 * dead too: start a new walk, at the allocation offset if another thread
 * has moved it since this walk started, else at the offset's home.  A home
 * always starts a chunk (see the invariants), and a live chunk's `next`
 * always leads to a live chunk (or one its owner is merging away), so a
 * walk from there meets a dead header only through a race, which the tag
 * and `failed` checks catch.  Once in its circles from home (see
 * circ_malloc), a walk starts anew at home only. */
KDA_FN void circ_recover(const kda_heap *h, uint32_t slot, circ_walk *w)
{
    w->restarts++;
    if (w->prev != CIRC_NONE) {
        w->failed = w->c;
        w->c = w->prev;
        w->walked -= w->last_step;
        w->prev = CIRC_NONE;
        return;
    }
    uint32_t hint = kda_load32(&h->state.offsets[slot]);
    w->c = w->start = !w->home_circles && hint != w->start && hint < h->state.units ? hint : circ_home(h, slot);
    w->failed = CIRC_NONE;
    w->walked = 0;
}

/* Moves the walk on to `next`, read from the current chunk's header; a
 * value that cannot be the following chunk means the position was stale,
 * and so does the position the walk failed at, read again right after
 * stepping back. */
KDA_FN void circ_step(const kda_heap *h, uint32_t slot, circ_walk *w, uint32_t next)
{
    uint32_t step;
    if (w->prev == CIRC_NONE && next == w->failed) {
        circ_recover(h, slot, w);
        return;
    }
    if (next > w->c && next < h->state.units) step = next - w->c;
    else if (next == 0 && w->c == h->state.units - 1) step = 1; /* past the end marker */
    else {
        circ_recover(h, slot, w);
        return;
    }
    w->prev = w->c;
    w->last_step = step;
    w->walked += step;
    w->c = next;
}

/* Adds a finished walk to the -DKDA_DIAG statistics; `got`: it found a chunk. */
KDA_FN void circ_count_walk(const circ_walk *w, uint64_t size, long long started, int got)
{
#ifdef KDA_DIAG_DEVICE
    unsigned k = 0;
    while (k + 1 < KDA_SIZE_CLASSES && size > KDA_SIZE_CLASS_TOP(k)) k++;
    unsigned long long *s = kda_walk_stats[k];
    atomicAdd(&s[KDA_STAT_WALKS], 1ull);
    atomicAdd(&s[KDA_STAT_READS], (unsigned long long)w->reads);
    atomicAdd(&s[KDA_STAT_CYCLES], (unsigned long long)(clock64() - started));
    atomicMax(&s[KDA_STAT_MAX_READS], (unsigned long long)w->reads);
    atomicAdd(&s[KDA_STAT_RESTARTS], (unsigned long long)w->restarts);
    atomicAdd(&s[KDA_STAT_LOST_CAS], (unsigned long long)w->lost_cas);
    if (!got) atomicAdd(&s[KDA_STAT_NULLS], 1ull);
#else
    (void)w, (void)size, (void)started, (void)got;
#endif
}

/* malloc's NULL. */
KDA_FN void *circ_give_up(const circ_walk *w, uint64_t size, long long started)
{
    circ_count_walk(w, size, started, 0);
    return NULL;
}

KDA_FN void *circ_malloc(const kda_heap *h, uint64_t size, int fused, int multi)
{
    if (size == 0 || size >= (uint64_t)h->state.units * KDA_UNIT) return NULL;
    uint32_t need = (uint32_t)((size + KDA_UNIT - 1) / KDA_UNIT) + 1; /* payload + header unit */
    uint32_t slot = circ_slot(h, multi, need);
    int l1 = !fused; /* unfused: the offset and successors through L1 until a restart or a circle */
    uint32_t *offset = &h->state.offsets[slot];
    circ_walk w = {l1 ? kda_load32_l1(offset) : kda_load32(offset), CIRC_NONE, 0, 0, CIRC_NONE, 0, 0, 0, 0, 0};
    uint32_t next, home = circ_home(h, slot);
    uint64_t ahead = 0; /* fused: the header at ahead_c, read before this step's checks */
    uint32_t ahead_c = CIRC_NONE;
    long long started = KDA_DIAG_CLOCK();
    if (w.c >= h->state.units) w.c = home;
    w.start = w.c;
    w.home_circles = w.start == home;
    for (;;) {
        if (w.restarts > KDA_MAX_RESTARTS) return circ_give_up(&w, size, started);
        if (w.walked >= h->state.units) { /* one whole circle */
            if (w.home_circles >= KDA_HOME_CIRCLES) return circ_give_up(&w, size, started);
            w.home_circles++;
            w.c = w.start = home;
            w.prev = w.failed = CIRC_NONE;
            w.walked = 0;
            l1 = 0;
        }
        uint32_t c = w.c;
        w.reads++;
        if (fused) {
            uint64_t word = c == ahead_c ? ahead : kda_load64(circ_word(h, c));
            next = (uint32_t)(word >> 32);
            /* The successor's header is read now, while this one is checked:
             * most steps go on to it.  It is one read as any other (a stale
             * one is caught as any is); a walk that goes elsewhere reads anew. */
            ahead_c = next < h->state.units ? next : CIRC_NONE;
            if (ahead_c != CIRC_NONE) ahead = kda_load64(circ_word(h, next));
            if (((uint32_t)word & ~1u) != circ_tag(h, c)) { /* not a header (any more) */
                circ_recover(h, slot, &w);
                continue;
            }
            if ((word & 1u) == KDA_STATE_FREE && next > c && next - c >= need) {
                uint64_t got = kda_cas64(circ_word(h, c), word, word | KDA_STATE_USED);
                if (got == word) break;
                w.lost_cas++;
                /* It changed under us: look again.  One list (CFMalloc) looks
                 * at the word the CAS returned, as the authors' walk steps on
                 * with what its atomic returned; mostly a winner's lock, so the
                 * walk steps over the rest the winner splits off.  Per-SM heaps
                 * read the header again: the rest is where the SM's next
                 * requests fit, and stepping over it sends them into the heap's
                 * small chunks (docs/alloc.md, "A lost CAS"). */
                if (!multi) {
                    ahead_c = c;
                    ahead = got;
                }
                continue;
            }
        } else {
            uint32_t free_flag = circ_tag(h, c) | KDA_STATE_FREE;
            /* The successor is read while the CAS is in flight, not after
             * it: most visits find the chunk used and step on with it, one
             * round trip instead of two.  A chunk that is locked is read
             * again (its last owner may have merged its successor in).
             * Until the walk's first restart or first whole circle, the
             * successor comes through L1, as the authors' plain loads do.
             * A stale one that the tag or circ_step catches sends the walk
             * back (circ_recover); one they cannot catch (a chunk split
             * since, a dead header) only skips chunks ahead, which a circle
             * through L2 finds again: after either, every read is L2's. */
            next = l1 && !w.restarts ? kda_load32_l1(circ_next(h, c)) : kda_load32(circ_next(h, c));
            uint32_t old = kda_cas32(circ_flag(h, c), free_flag, free_flag | KDA_STATE_USED);
            if ((old & ~1u) != circ_tag(h, c)) {
                circ_recover(h, slot, &w);
                continue;
            }
            if (old == free_flag) { /* locked it */
                next = kda_load32(circ_next(h, c));
                if (next > c && next - c >= need) break;
                kda_store32(circ_flag(h, c), free_flag); /* too small: let go */
            }
        }
        circ_step(h, slot, &w, next);
    }
    uint32_t c = w.c;
    circ_count_walk(&w, size, started, 1);
    /* Chunk c is ours and spans [c, next). */
    KDA_ASSERT(next > c && next - c >= need && next < h->state.units,
               "the chunk taken ends ahead of its header, within the pool, and holds the request");
    uint32_t end = next;
    uint32_t size_units = next - c;
    if (size_units >= need + 2 && (uint64_t)size_units * KDA_MAX_FRAG_DEN >= (uint64_t)need * KDA_MAX_FRAG_NUM) {
        end = c + need;
        KDA_ASSERT(end - c >= 2 && next - end >= 2, "a split leaves both parts at least the minimum");
        circ_write_header(h, end, KDA_STATE_FREE, next, fused); /* the rest, a new free chunk */
        kda_fence();
        if (fused) kda_store64(circ_word(h, c), circ_pack(h, c, KDA_STATE_USED, end));
        else kda_store32(circ_next(h, c), end);
    }
    kda_store32(offset, end);
    return h->base + (uint64_t)(c + 1) * KDA_UNIT;
}

KDA_FN void circ_free(const kda_heap *h, void *ptr, int fused, int multi)
{
    if (!ptr) return;
    uint32_t c = (uint32_t)(((unsigned char *)ptr - h->base) / KDA_UNIT) - 1;
    kda_fence(); /* our payload stores land before the chunk is free */
    KDA_ASSERT(c < h->state.units - 1 && kda_load32(circ_flag(h, c)) == (circ_tag(h, c) | KDA_STATE_USED),
               "a freed block's header carries its tag and is used");
    if (fused) {
        uint32_t next = (uint32_t)(kda_load64(circ_word(h, c)) >> 32);
        uint32_t slot = circ_free_slot(h, multi, c);
        uint64_t w = kda_load64(circ_word(h, next));
        if (!circ_is_home(h, next, multi) && (uint32_t)w == (circ_tag(h, next) | KDA_STATE_FREE) &&
            kda_cas64(circ_word(h, next), w, w | KDA_STATE_USED) == w) {
            next = (uint32_t)(w >> 32); /* merge the free successor into c */
            KDA_ASSERT(next > c && next < h->state.units, "a merge moves the chunk's end forward, within the pool");
            kda_store32(&h->state.offsets[slot], next);
        }
        /* One store publishes the new end and the free state together. */
        kda_store64(circ_word(h, c), circ_pack(h, c, KDA_STATE_FREE, next));
    } else {
        uint32_t next = kda_load32(circ_next(h, c));
        uint32_t slot = circ_free_slot(h, multi, c);
        uint32_t free_flag = circ_tag(h, next) | KDA_STATE_FREE;
        if (!circ_is_home(h, next, multi) &&
            kda_cas32(circ_flag(h, next), free_flag, free_flag | KDA_STATE_USED) == free_flag) {
            next = kda_load32(circ_next(h, next)); /* merge the free successor into c */
            KDA_ASSERT(next > c && next < h->state.units, "a merge moves the chunk's end forward, within the pool");
            kda_store32(circ_next(h, c), next);
            kda_store32(&h->state.offsets[slot], next);
            kda_fence();
        }
        kda_store32(circ_flag(h, c), circ_tag(h, c) | KDA_STATE_FREE);
    }
}

/* Host side of the -DKDA_DIAG statistics, for the allocator code of the .cu
 * file that includes this header: zero them; print them by request size. */
#ifdef KDA_DIAG_DEVICE
#include <stdio.h>

static inline cudaError_t kda_walk_stats_reset(void)
{
    static const unsigned long long zero[KDA_SIZE_CLASSES][KDA_STATS] = {{0}};
    return cudaMemcpyToSymbol(kda_walk_stats, zero, sizeof zero);
}

static inline void kda_walk_stats_row(FILE *f, const char *what, const unsigned long long *c)
{
    double n = c[KDA_STAT_WALKS] ? (double)c[KDA_STAT_WALKS] : 1.0;
    fprintf(f, "  %-11s %9llu %6llu %9.1f %8llu %9.2f %9.3f %10.1f\n", what, c[KDA_STAT_WALKS], c[KDA_STAT_NULLS],
            c[KDA_STAT_READS] / n, c[KDA_STAT_MAX_READS], c[KDA_STAT_LOST_CAS] / n, c[KDA_STAT_RESTARTS] / n,
            c[KDA_STAT_CYCLES] / n / 1000.0);
}

static inline cudaError_t kda_walk_stats_print(FILE *f, const char *title)
{
    unsigned long long s[KDA_SIZE_CLASSES][KDA_STATS], all[KDA_STATS] = {0};
    cudaError_t e = cudaMemcpyFromSymbol(s, kda_walk_stats, sizeof s);
    if (e != cudaSuccess) return e;
    fprintf(f, "%s: malloc walks by request size (-DKDA_DIAG; headers read, lost CASes, restarts and\n"
               "clock cycles per malloc; longest: the most headers one walk read)\n"
               "  request       mallocs  NULLs   headers  longest  lost CAS  restarts  kilocycles\n", title);
    for (int k = 0; k < KDA_SIZE_CLASSES; k++) {
        if (!s[k][KDA_STAT_WALKS]) continue;
        unsigned long long top = k + 1 < KDA_SIZE_CLASSES ? KDA_SIZE_CLASS_TOP(k) : KDA_SIZE_CLASS_TOP(k - 1);
        char what[24];
        if (k + 1 == KDA_SIZE_CLASSES) snprintf(what, sizeof what, "> %llu KiB", top >> 10);
        else if (top < 1024) snprintf(what, sizeof what, "<= %llu B", top);
        else snprintf(what, sizeof what, "<= %llu KiB", top >> 10);
        kda_walk_stats_row(f, what, s[k]);
        for (int i = 0; i < KDA_STATS; i++)
            all[i] = i == KDA_STAT_MAX_READS ? (s[k][i] > all[i] ? s[k][i] : all[i]) : all[i] + s[k][i];
    }
    kda_walk_stats_row(f, "all", all);
    return cudaSuccess;
}
#endif

#endif
