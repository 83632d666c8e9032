/* halloc.h - Halloc (Adinetz & Pleiter 2014, as Vinkler & Havran 2015,
 * Sec. 4.5 describe it), written from those descriptions.
 *
 * Pool.  Three quarters of the pool (whole slabs of HA_SLAB bytes) are
 * slabs from the pool's start; the last quarter is CUDA's device heap
 * (the system allocator), which serves every request above 3 KiB, as
 * published.  The pool must be at least 256 MiB (the paper's minimum with
 * the default slab size); kda_pool_create refuses a smaller one.
 *
 * Slabs.  A slab serves blocks of one size class (16, 32, 48, 64, 96, 128,
 * ..., 2048, 3072 bytes: two classes an octave, multiples of 16), assigned
 * when a class takes a free slab and dropped when the slab empties, so that
 * it can serve another class.  Each class has a head slab, where its
 * requests go; when the head passes HA_BUSY of its blocks, the class moves
 * its head to a slab of the class below HA_ROOMY, or to a free slab (an
 * empty head of another class counts as free), or (none left) to any slab
 * of the class that is not full.
 *
 * State, outside the pool (kda_state):
 *   word[slab]   64 bits: class + 1 and a head flag (high half; 0: free),
 *                allocated blocks (low half)
 *   bits[slab]   one bit per block (up to HA_SLAB / 16 bits)
 *   head[class]  the class's head slab + 1 (0: none yet)
 *   lock[class]  held by the one thread moving the class's head
 *
 * Invariants.
 *   - A slab's class changes only while it holds no block and is no head:
 *     by one CAS of its word (free -> class and head; class -> free).
 *   - A reservation is one atomicAdd on the word, so it sees the class it
 *     reserved under; a block's bit is set only under a reservation and
 *     cleared before it is given back.  An empty slab has no bit set.
 *
 * malloc(S): S > 3 KiB goes to the system allocator.  Else the class's
 * head: reserve (atomicAdd), then hash the thread and the slab's count to
 * a block and take the first free bit from there with atomicOr (bit-field
 * words that are full are passed in one read).  A full head, or one of
 * another class, sends the thread to move the head.  NULL when no slab is
 * left for the class and the head is full.
 * free(p): a pointer outside the slabs goes to the system allocator; else
 * clear the bit, give back the reservation, and the thread that empties a
 * slab which is no head frees the slab.
 */
#ifndef KDA_HALLOC_H
#define KDA_HALLOC_H

#include <stdio.h>

#define KDA_ALLOC_NAME "Halloc"
#define KDA_ALLOC_NO_GROW_WHY "its slabs, bitmaps and the device heap's share are laid out over the whole pool: more memory means a new layout"
#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 0 /* requests above 3 KiB come from the system allocator */
#define KDA_ALLOC_SYS_HEAP KDA_SYS_HEAP_SOME
#define KDA_ALLOC_REUSES_HOLES 1
#define KDA_ALLOC_SPACE_RESTORED 1 /* an emptied slab is free again */
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#define KDA_ALLOC_MIN_POOL (256ull << 20)

#define HA_SLAB (4u << 20)   /* bytes a slab */
#define HA_LARGE 3072u       /* larger requests go to the system allocator */
#define HA_CLASSES 15u
#define HA_BITS_WORDS (HA_SLAB / 16 / 32) /* bit-field words a slab */
#define HA_BUSY_NUM 835u     /* a head of more than 83.5% used blocks is moved */
#define HA_ROOMY_NUM 600u    /* a slab below 60% may become a head again */
#define HA_HEAD_FLAG (1ull << 63)

/* Class k holds blocks of 16 * {1, 2, 3, 4, 6, 8, 12, ..., 128, 192} bytes. */
KDA_HD uint32_t ha_class_bytes(uint32_t k)
{
    if (k == 0) return 16u;
    return (k % 2 ? 16u : 24u) << ((k + 1) / 2); /* 32, 48, 64, 96, ... */
}
KDA_HD uint32_t ha_class_of(uint64_t size)
{
    uint32_t k = 0;
    while (ha_class_bytes(k) < size) k++;
    return k;
}
KDA_HD uint32_t ha_blocks(uint32_t k) { return HA_SLAB / ha_class_bytes(k); }
KDA_HD uint32_t ha_busy(uint32_t k) { return (uint32_t)((uint64_t)ha_blocks(k) * HA_BUSY_NUM / 1000); }

#include "kdalloc/detail/port.h"

/* The state (kda_alloc_bind lays it out in the state block). */
typedef struct kda_state {
    uint64_t *word;  /* [slabs] class + 1 and head flag << 32 | allocated blocks */
    uint32_t *bits;  /* [slabs][HA_BITS_WORDS] one bit per block */
    uint32_t *head;  /* [HA_CLASSES] the class's head slab + 1 (0: none yet) */
    uint32_t *lock;  /* [HA_CLASSES] held by the thread moving the class's head */
    uint32_t slabs;  /* in the pool's first three quarters */
} kda_state;

#include "kdalloc/detail/heap.h"

KDA_HD uint64_t *ha_word(const kda_heap *h, uint32_t slab) { return h->state.word + slab; }
KDA_HD uint32_t *ha_bits(const kda_heap *h, uint32_t slab, uint32_t word)
{
    return h->state.bits + (uint64_t)slab * HA_BITS_WORDS + word;
}
KDA_HD uint32_t *ha_head(const kda_heap *h, uint32_t k) { return h->state.head + k; }
KDA_HD uint32_t *ha_lock(const kda_heap *h, uint32_t k) { return h->state.lock + k; }

KDA_HD uint64_t ha_owner(uint32_t k) { return (uint64_t)(k + 1) << 32; }
KDA_HD uint32_t ha_count(uint64_t word) { return (uint32_t)word; }
KDA_HD uint32_t ha_class_in(uint64_t word) { return (uint32_t)((word & ~HA_HEAD_FLAG) >> 32); } /* k + 1, 0 free */

/* Gives back one reservation; the thread that empties a slab which is no
 * head frees it for any class. */
KDA_FN void ha_unreserve(const kda_heap *h, uint32_t slab)
{
    uint64_t old = kda_add64(ha_word(h, slab), ~(uint64_t)0);
    KDA_ASSERT(ha_count(old) >= 1, "a reservation given back was taken: the count is >= 1");
    if (ha_count(old) == 1 && !(old & HA_HEAD_FLAG) && ha_class_in(old))
        kda_cas64(ha_word(h, slab), old - 1, 0);
}

/* Moves class k's head away from `stale` (a slab + 1; 0: none yet) unless
 * another thread did.  Returns 0 when there is no slab to move to and the
 * stale head is full (or there was none). */
KDA_FN int ha_move_head(const kda_heap *h, uint32_t k, uint32_t stale, int wait)
{
    if (kda_cas32(ha_lock(h, k), 0, 1) != 0) {
        if (!wait) return 1;
        while (kda_load32(ha_head(h, k)) == stale && kda_load32(ha_lock(h, k))) kda_pause();
        return 1; /* moved, or the mover gave up: the caller looks again */
    }
    int ok = 1;
    if (kda_load32(ha_head(h, k)) == stale) {
        uint32_t found = 0, n = h->state.slabs, start = (kda_sm_id() * 7919u + k * 104729u) % n;
        /* A roomy slab of the class first, then a free one, then any of the
         * class that is not full. */
        for (int pass = 0; pass < 3 && !found; pass++)
            for (uint32_t i = 0; i < n && !found; i++) {
                uint32_t s = (start + i) % n;
                if (s + 1 == stale) continue;
                uint64_t w = kda_load64(ha_word(h, s));
                uint32_t room = pass == 2 ? 1000 : HA_ROOMY_NUM;
                /* pass 1: a free slab, or another class's empty head */
                int empty_head = (w & HA_HEAD_FLAG) && ha_count(w) == 0 && ha_class_in(w) != k + 1;
                int fits = pass == 1 ? w == 0 || empty_head
                                     : (!(w & HA_HEAD_FLAG) && ha_class_in(w) == k + 1 &&
                                        (uint64_t)ha_count(w) * 1000 < (uint64_t)ha_blocks(k) * room);
                if (fits && kda_cas64(ha_word(h, s), w, pass == 1 ? ha_owner(k) | HA_HEAD_FLAG : w | HA_HEAD_FLAG) == w) {
                    found = s + 1;
                    if (pass == 1 && empty_head) /* that class finds no head and takes another */
                        kda_cas32(ha_head(h, ha_class_in(w) - 1), s + 1, 0);
                }
            }
        if (found) {
            kda_store32(ha_head(h, k), found);
            /* The old head is an ordinary slab now (unless another class
             * took it, empty, meanwhile); empty, it is freed. */
            uint64_t w = stale ? kda_load64(ha_word(h, stale - 1)) : 0;
            while (ha_class_in(w) == k + 1 && (w & HA_HEAD_FLAG)) {
                uint64_t seen = kda_cas64(ha_word(h, stale - 1), w, w & ~HA_HEAD_FLAG);
                if (seen == w) {
                    if (ha_count(w) == 0) kda_cas64(ha_word(h, stale - 1), w & ~HA_HEAD_FLAG, 0);
                    break;
                }
                w = seen;
            }
        } else {
            ok = stale && ha_count(kda_load64(ha_word(h, stale - 1))) < ha_blocks(k);
        }
    }
    kda_fence();
    kda_store32(ha_lock(h, k), 0);
    return ok;
}

/* Takes a free block's bit in `slab` of class k (the caller holds a
 * reservation, so one is free). */
KDA_FN uint32_t ha_take_block(const kda_heap *h, uint32_t slab, uint32_t k, uint32_t seed)
{
    uint32_t blocks = ha_blocks(k), words = (blocks + 31) / 32;
    uint32_t x = seed * 0x9E3779B1u;
    x ^= x >> 15;
    uint32_t w = x % words;
    for (uint32_t tries = 0;; tries++, w = (w + 1) % words) {
        uint32_t n = w + 1 < words ? 32 : blocks - 32 * w;
        uint32_t all = n == 32 ? ~0u : (1u << n) - 1;
        uint32_t *bits = ha_bits(h, slab, w);
        uint32_t seen = kda_load32(bits);
        while ((seen & all) != all) {
            uint32_t bit = (uint32_t)kda_ffs32(~seen & all) - 1;
            uint32_t old = kda_or32(bits, 1u << bit);
            if (!(old & (1u << bit))) return 32 * w + bit;
            seen = old;
        }
        if (tries >= 2 * words) kda_pause();
    }
}

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    if (size == 0 || size > h->bytes) return NULL;
    if (size > HA_LARGE) return kda_sys_malloc((size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1));
    uint32_t k = ha_class_of(size);
    for (;;) {
        uint32_t head = kda_load32(ha_head(h, k));
        if (!head) {
            if (!ha_move_head(h, k, 0, 1)) return NULL;
            continue;
        }
        uint64_t old = kda_add64(ha_word(h, head - 1), 1);
        if (ha_class_in(old) != k + 1 || ha_count(old) >= ha_blocks(k)) { /* not ours any more, or full */
            ha_unreserve(h, head - 1);
            if (!ha_move_head(h, k, head, 1)) return NULL;
            continue;
        }
        if (ha_count(old) + 1 >= ha_busy(k)) ha_move_head(h, k, head, 0); /* if nobody is at it */
        uint32_t block = ha_take_block(h, head - 1, k, kda_warp_slot() * 32 + kda_lane_id() + ha_count(old));
        KDA_ASSERT(block < ha_blocks(k), "a block's bit lies within its slab's class");
        return h->base + (uint64_t)(head - 1) * HA_SLAB + (uint64_t)block * ha_class_bytes(k);
    }
}

KDA_FN void kda_free(const kda_heap *h, void *ptr)
{
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr;
    if (p < h->base || p >= h->base + (uint64_t)h->state.slabs * HA_SLAB) {
        kda_sys_free(ptr);
        return;
    }
    uint64_t offset = (uint64_t)(p - h->base);
    uint32_t slab = (uint32_t)(offset / HA_SLAB);
    uint32_t k = ha_class_in(kda_load64(ha_word(h, slab))) - 1;
    KDA_ASSERT(k < HA_CLASSES, "a freed block's slab holds blocks, so it has a class");
    uint32_t block = (uint32_t)(offset % HA_SLAB / ha_class_bytes(k));
    kda_fence(); /* our stores to the block land before it is free */
    kda_and32(ha_bits(h, slab, block / 32), ~(1u << block % 32));
    ha_unreserve(h, slab);
}

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_state *s = &h->state;
    kda_carver c = {block, 0};
    s->word = (uint64_t *)kda_carve(&c, (uint64_t)s->slabs * sizeof *s->word);
    s->bits = (uint32_t *)kda_carve(&c, (uint64_t)s->slabs * HA_BITS_WORDS * sizeof *s->bits);
    s->head = (uint32_t *)kda_carve(&c, HA_CLASSES * sizeof *s->head);
    s->lock = (uint32_t *)kda_carve(&c, HA_CLASSES * sizeof *s->lock);
    return c.used;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    (void)n_sms;
    uint64_t slabs = bytes / 4 * 3 / HA_SLAB;
    if (slabs > UINT32_MAX / 2) {
        snprintf(err, errlen, "a Halloc pool of %.1f GiB has too many slabs", (double)bytes / (1u << 30));
        return -1;
    }
    h->state.slabs = (uint32_t)slabs;
    plan->sys_heap_bytes = bytes - slabs * HA_SLAB;
    plan->state_bytes = plan->clear_bytes = kda_alloc_bind(h, NULL);
    return 0;
}

/* From a host copy of the state: the slabs' free bytes and the largest
 * block one request could get from them (CUDA's heap, which serves the
 * rest, cannot be read); and the bytes of the block serving `offset` (0:
 * not a slab's). */
static inline void kda_alloc_space(const kda_heap *h, kda_space *space)
{
    uint64_t *free_bytes = &space->free_bytes, *largest = &space->largest_block;
    *free_bytes = *largest = 0;
    space->known = 1;
    for (uint32_t s = 0; s < h->state.slabs; s++) {
        uint64_t word = *ha_word(h, s);
        uint32_t k1 = ha_class_in(word), count = ha_count(word);
        if (!k1) {
            *free_bytes += HA_SLAB;
            if (HA_LARGE > *largest) *largest = HA_LARGE;
        } else if (count < ha_blocks(k1 - 1)) {
            *free_bytes += (uint64_t)(ha_blocks(k1 - 1) - count) * ha_class_bytes(k1 - 1);
            if (ha_class_bytes(k1 - 1) > *largest) *largest = ha_class_bytes(k1 - 1);
        }
    }
}
#define KDA_ALLOC_HAS_BLOCK_BYTES 1
static inline uint64_t kda_alloc_block_bytes(const kda_heap *h, uint64_t offset)
{
    if (offset >= (uint64_t)h->state.slabs * HA_SLAB) return 0;
    uint32_t k1 = ha_class_in(*ha_word(h, (uint32_t)(offset / HA_SLAB)));
    return k1 ? ha_class_bytes(k1 - 1) : 0;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }

#endif
