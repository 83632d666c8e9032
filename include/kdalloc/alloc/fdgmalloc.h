/* fdgmalloc.h - FDGMalloc (Widmer, Wodniok, Weber, Goesele 2013, Sec. 3-4;
 * Vinkler & Havran 2015, Sec. 4.4), written from the paper's description.
 *
 * Each warp has a header (WarpHeader): its current superblock and how much
 * of it is used, and a list of every block it got from the system
 * allocator (CUDA's device malloc; the C library's on the host).  The
 * header, its lists and its superblocks all come from the system
 * allocator; the pool's size is the size of CUDA's device heap.
 *
 * malloc: the lanes that call together vote; the highest one is the
 * worker (the paper's bfind of the ballot).  Each lane's request is padded
 * to 16 bytes and placed after the lower lanes' (a prefix sum with
 * shuffles), so the warp's requests are one contiguous region.  The worker
 * creates the header on the warp's first request ("start": the header, a
 * list, the first superblock), then serves the total from the superblock
 * without any atomic operation, or from a new superblock when it does not
 * fit, or straight from the system allocator when it is larger than a
 * superblock; every block from the system allocator is registered in the
 * list (a full list is replaced by a new one that links to it).
 * free: does nothing; memory is released all at once per warp by
 * kda_warp_done, the paper's second strategy ("end": every registered
 * block, the lists and the header).  A pool reset ends every warp.
 *
 * The header of warp w (kda_warp_slot) is slot w of a table in the state
 * (kda_state), FDG_WARPS slots: the paper keeps it in a register that the
 * kernel passes around, which kda_malloc's signature has no room for.
 *
 * Departures (docs/alloc.md):
 *   - Lanes that no longer fit the superblock go to a new one as a group,
 *     not lane by lane (the rest of the old one is left unused).
 *   - The worker holds a lock word in the header while it changes it: on
 *     GPUs since Volta, lanes of one warp that diverged can call at the
 *     same time, which the 2013 SIMD model ruled out.  It is never
 *     contended by other warps.
 *   - For the same reason "end" takes the header out of its slot with a
 *     CAS: diverged groups of one warp each have a highest lane, and two of
 *     them ending at once freed every block twice (an illegal address in
 *     the survey's live-thread test at 10^6 threads on an H200).
 */
#ifndef KDA_FDGMALLOC_H
#define KDA_FDGMALLOC_H

#include <stdio.h>

#define KDA_ALLOC_NAME "FDGMalloc"
#define KDA_ALLOC_NO_GROW_WHY "its pool is a fixed array of per-warp superblocks"
#define KDA_ALLOC_FREES 0
#define KDA_ALLOC_IN_POOL 0
#define KDA_ALLOC_SYS_HEAP KDA_SYS_HEAP_ALL
#define KDA_ALLOC_SPACE_KNOWN 0
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 0
#define KDA_ALLOC_NO_BUILD_WHY                                                                                   \
    "it frees only all of a warp's memory at once, never one array, and the build frees each node's array in " \
    "whichever warp takes the node (the paper left it out of the builds for this reason)"
#define KDA_ALLOC_MIN_POOL 0
#define KDA_ALLOC_WARP_DONE 1

#define FDG_SUPERBLOCK (8u << 10) /* bytes a superblock */
#define FDG_LIST 127u             /* blocks a list registers (entry 0 links to the previous list) */
#define FDG_WARPS (1u << 20)      /* warps of a grid that can have a header */

typedef struct fdg_warp {
    unsigned char *superblock; /* the current one */
    uint64_t used;             /* its bytes handed out */
    void **list;               /* the current list: [0] the previous list, [1..count] blocks */
    uint32_t count;
    uint32_t lock;
} fdg_warp;

#include "kdalloc/detail/port.h"

/* The state: the warps' header table. */
typedef struct kda_state {
    fdg_warp **warps; /* [n_warps] warp w's header, or NULL */
    uint32_t n_warps; /* FDG_WARPS */
} kda_state;

#include "kdalloc/detail/heap.h"

KDA_FN fdg_warp **fdg_cell(const kda_heap *h, uint32_t slot) { return h->state.warps + slot; }

/* Registers a block from the system allocator; -1 when no list can be had. */
KDA_FN int fdg_register(fdg_warp *w, void *block)
{
    KDA_ASSERT(w->count <= FDG_LIST, "a list registers at most FDG_LIST blocks");
    if (w->count == FDG_LIST) {
        void **list = (void **)kda_sys_malloc((FDG_LIST + 1) * sizeof(void *));
        if (!list) return -1;
        list[0] = w->list;
        w->list = list;
        w->count = 0;
    }
    w->list[1 + w->count++] = block;
    return 0;
}

/* A system block of `bytes`, registered; NULL when there is none. */
KDA_FN void *fdg_system_block(fdg_warp *w, uint64_t bytes)
{
    void *p = kda_sys_malloc(bytes);
    if (p && fdg_register(w, p)) {
        kda_sys_free(p);
        p = NULL;
    }
    return p;
}

/* "start": the warp's header with a list and a first superblock. */
KDA_FN fdg_warp *fdg_start(const kda_heap *h, uint32_t slot)
{
    fdg_warp *w = *(fdg_warp *volatile *)fdg_cell(h, slot);
    if (w) return w;
    w = (fdg_warp *)kda_sys_malloc(sizeof *w);
    void **list = (void **)kda_sys_malloc((FDG_LIST + 1) * sizeof(void *));
    unsigned char *sb = (unsigned char *)kda_sys_malloc(FDG_SUPERBLOCK);
    if (!w || !list || !sb) {
        kda_sys_free(w);
        kda_sys_free(list);
        kda_sys_free(sb);
        return NULL;
    }
    list[0] = NULL;
    list[1] = sb;
    w->superblock = sb;
    w->used = 0;
    w->list = list;
    w->count = 1;
    w->lock = 0;
    kda_fence();
    uint64_t *cell = (uint64_t *)fdg_cell(h, slot);
    uint64_t seen = kda_cas64(cell, 0, (uint64_t)(uintptr_t)w);
    if (seen) { /* lanes of the warp that diverged started it too */
        kda_sys_free(sb);
        kda_sys_free(list);
        kda_sys_free(w);
        w = (fdg_warp *)(uintptr_t)seen;
    }
    return w;
}

/* The worker's part: `total` bytes for the lanes that called together. */
KDA_FN unsigned char *fdg_serve(const kda_heap *h, uint32_t slot, uint64_t total)
{
    fdg_warp *w = fdg_start(h, slot);
    if (!w) return NULL;
    while (kda_cas32(&w->lock, 0, 1) != 0) kda_pause();
    unsigned char *block;
    if (total > FDG_SUPERBLOCK) {
        block = (unsigned char *)fdg_system_block(w, total);
    } else {
        if (w->used + total > FDG_SUPERBLOCK) {
            unsigned char *sb = (unsigned char *)fdg_system_block(w, FDG_SUPERBLOCK);
            if (sb) {
                w->superblock = sb;
                w->used = 0;
            }
        }
        block = w->used + total <= FDG_SUPERBLOCK ? w->superblock + w->used : NULL;
        if (block) w->used += total;
        KDA_ASSERT(w->used <= FDG_SUPERBLOCK, "a superblock hands out at most its bytes");
    }
    kda_fence();
    kda_store32(&w->lock, 0);
    return block;
}

/* "end": gives back every block the warp registered, its lists and header. */
KDA_FN void fdg_end(const kda_heap *h, uint32_t slot)
{
    /* Claimed with a CAS: lanes of one warp that diverged can each reach
     * their end with a different highest lane, and only one may free. */
    uint64_t *cell = (uint64_t *)fdg_cell(h, slot);
    uint64_t seen = *(volatile uint64_t *)cell;
    if (!seen || kda_cas64(cell, seen, 0) != seen) return;
    fdg_warp *w = (fdg_warp *)(uintptr_t)seen;
    for (void **list = w->list; list;) {
        void **previous = (void **)list[0];
        for (uint32_t i = 1; i <= (list == w->list ? w->count : FDG_LIST); i++) kda_sys_free(list[i]);
        kda_sys_free(list);
        list = previous;
    }
    kda_sys_free(w);
}

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    uint32_t slot = kda_warp_slot();
    uint64_t need = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    if (slot >= h->state.n_warps || size == 0 || size > h->bytes) need = 0; /* this lane gets NULL */
#ifdef __CUDACC__
    unsigned lanes = __activemask(), lane = kda_lane_id();
    int worker = 31 - __clz(lanes);
    uint64_t before, total; /* bytes of the lower lanes, of all lanes */
    kda_warp_sums(lanes, need, &before, &total);
    unsigned char *block = NULL;
    if ((int)lane == worker && total && slot < h->state.n_warps) block = fdg_serve(h, slot, total);
    block = (unsigned char *)__shfl_sync(lanes, (unsigned long long)block, worker);
    return block && need ? block + before : NULL;
#else
    return need ? fdg_serve(h, slot, need) : NULL;
#endif
}

KDA_FN void kda_free(const kda_heap *h, void *p) { (void)h, (void)p; }

KDA_FN void kda_warp_done(const kda_heap *h)
{
    uint32_t slot = kda_warp_slot();
    if (slot >= h->state.n_warps) return;
#ifdef __CUDACC__
    unsigned lanes = __activemask();
    if ((int)kda_lane_id() != 31 - __clz(lanes)) return;
#endif
    fdg_end(h, slot);
}

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_carver c = {block, 0};
    h->state.warps = (fdg_warp **)kda_carve(&c, (uint64_t)h->state.n_warps * sizeof(fdg_warp *));
    return c.used;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    (void)n_sms, (void)err, (void)errlen;
    h->state.n_warps = FDG_WARPS;
    plan->sys_heap_bytes = bytes;
    plan->state_bytes = kda_alloc_bind(h, NULL);
    plan->reset_items = FDG_WARPS;
    return 0;
}

/* A reset ends every warp that has a header. */
KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { fdg_end(h, (uint32_t)i); }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }

/* Its memory is CUDA's device heap, which cannot be read. */
static inline void kda_alloc_space(const kda_heap *view, kda_space *space)
{
    (void)view;
    space->free_bytes = space->largest_block = 0;
    space->known = 0;
}

#endif
