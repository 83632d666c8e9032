/* gpu_queue.cuh - the builder's work queue: a bounded multi-producer,
 * multi-consumer ring (Vyukov's design) in device memory.
 *
 * Cell i carries a sequence number.  Position p (a 32-bit counter that only
 * grows) lives in cell p mod capacity:
 *   seq == p          the cell is free for the producer of position p;
 *   seq == p + 1      it holds the entry of position p, ready to be taken;
 *   seq == p + cap    its entry was taken and read: free for position p + cap.
 * A producer reserves positions with one atomicAdd on `tail` (several at
 * once for a bulk push), checks that the ring cannot overflow, waits until
 * each of its cells is free (its previous entry has been read and
 * released), writes the entry and releases the sequence number.  A
 * consumer takes a ticket, the next position, with one atomicAdd on `head`
 * and waits until the entry of that position is published (ring_ticket,
 * ring_ready): under contention an atomicAdd always succeeds where claiming
 * the head with atomicCAS mostly fails, so tickets hand out entries many
 * times faster; `head` may then run ahead of `tail`.
 * It reads the entry and releases the cell.  Stores of the entry are
 * ordered before the sequence number by st.release, and loads after it by
 * ld.acquire (a warp's bulk push: by fences, ring_wait_free_bulk).
 *
 * Once the build has failed, a position may stay unpublished or untaken for
 * good (a reservation refused for overflow still moved `tail`; a seeker
 * leaves its ticket), and with tickets `head` can pass it: a producer that
 * waits for a cell therefore gives up when the build's error flag is set.
 */
#ifndef KDA_GPU_QUEUE_CUH
#define KDA_GPU_QUEUE_CUH

#include <stdint.h>

static __device__ __forceinline__ uint32_t ld_acquire_u32(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* atomicAnd with acquire semantics: what the location's releasing writer
 * did before (a fence and its atomicOr) happens before what follows. */
static __device__ __forceinline__ uint32_t atom_and_acquire_u32(uint32_t *p, uint32_t v)
{
    uint32_t old;
    asm volatile("atom.acquire.gpu.global.and.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

static __device__ __forceinline__ void st_release_u32(uint32_t *p, uint32_t v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ uint32_t ld_relaxed_u32(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void st_relaxed_u32(uint32_t *p, uint32_t v)
{
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

typedef struct ring {
    uint32_t *seq;     /* capacity sequence numbers */
    uint32_t capacity; /* a power of two */
    uint32_t *head;    /* next position to take (alone in its cache line) */
    uint32_t *tail;    /* next position to fill (likewise) */
} ring;

/* Reserves `count` positions; returns the first, or UINT32_MAX when the
 * ring would overflow (the caller reports it: nothing was published, but
 * `tail` has moved past the positions). */
static __device__ __forceinline__ uint32_t ring_reserve(const ring *r, uint32_t count)
{
    uint32_t pos = atomicAdd(r->tail, count);
    uint32_t head = ld_relaxed_u32(r->head);
    if ((int32_t)(pos + count - head) > (int32_t)r->capacity) return UINT32_MAX; /* head may be ahead: signed */
    return pos;
}

/* Waits until the cell of position pos may be written: 0, or -1 when
 * *stop became non-zero first. */
static __device__ __forceinline__ int ring_wait_free(const ring *r, uint32_t pos, const uint32_t *stop)
{
    const uint32_t *s = &r->seq[pos & (r->capacity - 1)];
    while (ld_acquire_u32(s) != pos) {
        if (ld_relaxed_u32(stop)) return -1;
        __nanosleep(32);
    }
    return 0;
}

/* Makes the entry of position pos visible to consumers. */
static __device__ __forceinline__ void ring_publish(const ring *r, uint32_t pos)
{
    st_release_u32(&r->seq[pos & (r->capacity - 1)], pos + 1);
}

/* A warp produces positions pos .. pos + count - 1 at once (a bulk
 * reservation): each lane takes every 32nd.  A cell is almost always free
 * long since, so the lanes read all their cells' sequence numbers with
 * their loads in flight together, and wait cell by cell only when one is
 * not; a fence then orders those reads before the entries' writes (the
 * acquire half).  One fence and one store per cell make the entries
 * visible (ring_publish_bulk).  Per cell, ring_wait_free and ring_publish
 * would cost two round trips for every 32 entries.  0, or -1 (every lane)
 * when *stop became non-zero first. */
static __device__ __forceinline__ int ring_wait_free_bulk(const ring *r, uint32_t pos, uint32_t count, uint32_t lane,
                                                         const uint32_t *stop)
{
    uint32_t late = 0, failed = 0;
#pragma unroll 4
    for (uint32_t i = lane; i < count; i += 32) /* volatile: relaxed loads the compiler may issue together */
        late |= *(volatile const uint32_t *)&r->seq[(pos + i) & (r->capacity - 1)] ^ (pos + i);
    if (__any_sync(0xffffffffu, late != 0))
#pragma unroll 1
        for (uint32_t i = lane; i < count && !failed; i += 32) failed = ring_wait_free(r, pos + i, stop) != 0;
    if (__any_sync(0xffffffffu, failed)) return -1;
    __threadfence();
    return 0;
}

/* Makes entries pos .. pos + count - 1, written by the warp, visible,
 * with whatever else any lane stored before (big nodes' slots: lane 0
 * writes the node, every lane zeroes bins): every lane's fence comes
 * before any lane's release. */
static __device__ __forceinline__ void ring_publish_bulk(const ring *r, uint32_t pos, uint32_t count, uint32_t lane)
{
    __threadfence();
    __syncwarp();
#pragma unroll 1
    for (uint32_t i = lane; i < count; i += 32) st_relaxed_u32(&r->seq[(pos + i) & (r->capacity - 1)], pos + i + 1);
}

/* Takes the next position to consume, whether or not its entry is there. */
static __device__ __forceinline__ uint32_t ring_ticket(const ring *r) { return atomicAdd(r->head, 1u); }

/* Whether the entry of a ticket's position has been published. */
static __device__ __forceinline__ int ring_ready(const ring *r, uint32_t pos)
{
    return ld_acquire_u32(&r->seq[pos & (r->capacity - 1)]) == pos + 1;
}

/* After the claimed entry was read: frees its cell for a later round. */
static __device__ __forceinline__ void ring_release(const ring *r, uint32_t pos)
{
    st_release_u32(&r->seq[pos & (r->capacity - 1)], pos + r->capacity);
}

#endif
