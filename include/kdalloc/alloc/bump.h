/* bump.h - AtomicMalloc and AWMalloc (Vinkler & Havran 2015, Sec. 4.1, 5.1):
 * a single shared offset advanced with atomicAdd.  Neither keeps headers,
 * and free() does nothing: they are not full allocators, the paper's lower
 * bounds for speed.
 *
 * AtomicMalloc never reuses memory.  Once a request runs past the end of
 * the pool it returns NULL, and so does every request after it: the offset
 * stays past the end (documented behaviour, not a leak to repair).
 *
 * AWMalloc treats the pool as a ring: a request that would run past the end
 * wraps to the start with atomicCAS (the paper's Algorithm 2).  Memory is
 * reused by overwriting whatever was there, so it is only correct when every
 * block is dead before the ring comes round again.  It returns NULL only
 * for a request larger than the pool.  Repair: Algorithm 2 as printed can
 * return the range just below the current offset (someone else's) when that
 * offset sits within one request of the end; here a block is only ever the
 * range that this thread's own atomicAdd or atomicCAS reserved.
 */
#ifndef KDA_BUMP_H
#define KDA_BUMP_H

#include <stddef.h>

#include "kdalloc/detail/port.h"

/* The state: one 64-bit offset, in a state block of its own. */
typedef struct kda_state {
    uint64_t *counter; /* bytes handed out so far (past the end once a request failed) */
} kda_state;

#include "kdalloc/detail/heap.h"

KDA_FN uint64_t bump_padded(uint64_t size) { return (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1); }

/* The counter's fetch-and-add.  Lanes of a warp that ask together for the
 * same size on the same counter share one add of their sum, each lane's
 * range after the lower lanes': what nvcc emits for the authors' 32-bit
 * atomicAdd to one address, written out because it leaves our 64-bit one
 * alone (a million threads asking at once took 24x as long, docs/alloc.md).
 * Lanes of different sizes add one by one: a scan for them made the build
 * kernel spill registers, and its builds 2-7% slower (H200).  A lane that
 * asks alone, as in the builder, adds directly. */
KDA_FN uint64_t bump_add(uint64_t *counter, uint64_t need)
{
#ifdef __CUDACC__
    unsigned lanes = __activemask();
    if (lanes & (lanes - 1)) {
        int same;
        lanes = __match_any_sync(lanes, (unsigned long long)counter);
        __match_all_sync(lanes, (unsigned long long)need, &same);
        if (same) {
            unsigned lane = kda_lane_id(), leader = (unsigned)__ffs(lanes) - 1;
            uint64_t old = 0;
            if (lane == leader) old = kda_add64(counter, need * (unsigned)__popc(lanes));
            return __shfl_sync(lanes, old, (int)leader) + need * (unsigned)__popc(lanes & ((1u << lane) - 1));
        }
    }
#endif
    return kda_add64(counter, need);
}

KDA_FN void *atomic_malloc(const kda_heap *h, uint64_t size)
{
    uint64_t need = bump_padded(size);
    if (need == 0 || need > h->bytes) return NULL;
    uint64_t offset = bump_add(h->state.counter, need);
    if (offset + need > h->bytes) return NULL;
    KDA_ASSERT(offset % KDA_UNIT == 0, "the counter moves by whole units: blocks stay 16-byte aligned");
    return h->base + offset;
}

KDA_FN void *aw_malloc(const kda_heap *h, uint64_t size)
{
    uint64_t need = bump_padded(size);
    if (need == 0 || need > h->bytes) return NULL;
    for (uint64_t offset = bump_add(h->state.counter, need);; offset = kda_add64(h->state.counter, need)) {
        KDA_ASSERT(offset % KDA_UNIT == 0, "the counter moves by whole units: blocks stay 16-byte aligned");
        if (offset + need <= h->bytes) return h->base + offset;
        /* Past the end: try to restart the ring with our block at 0. */
        uint64_t seen = offset + need;
        for (;;) {
            uint64_t prev = kda_cas64(h->state.counter, seen, need);
            if (prev == seen) return h->base;
            if (prev + need <= h->bytes) break; /* someone else wrapped: add again */
            seen = prev;                        /* the end moved on; wrap at it */
        }
    }
}

#endif
