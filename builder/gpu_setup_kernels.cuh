/* gpu_setup_kernels.cuh - the small kernels around the build kernel's
 * launches (included by gpu_build.cu; gpu_build_run.cuh launches them):
 * the triangles' boxes, the queue emptied, the root's array allocated,
 * filled and (for a big root) binned, and the queue refilled from the
 * spilled tasks after a launch that parked.
 *
 * Invariants.  They run on the build's stream, in order, before and
 * between the build kernel's launches, never beside one.  root_setup's
 * allocation is the pool's first, made through the same allocator code and
 * state as the build kernel's (and, built with -DKDA_DIAG, counted in this
 * translation unit's walk counters with them), and counts in the warm-up
 * build's statistics as the kernel's allocations do.  A root of more than p.big_node references is
 * queued as the one BIN entry of slot 0 with its bins already filled, so
 * the tree is the one its chunks would have binned. */
#ifndef KDA_GPU_SETUP_KERNELS_CUH
#define KDA_GPU_SETUP_KERNELS_CUH

#include "gpu_kernel.cuh"

__global__ void triangle_boxes(const float *positions, const uint32_t *triangles, uint32_t n, tri_box *boxes)
{
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
        float l[3], h[3];
        kdtree_triangle_box(positions, triangles, t, l, h);
        boxes[t].lo = make_float4(l[0], l[1], l[2], 0.0f);
        boxes[t].hi = make_float4(h[0], h[1], h[2], 0.0f);
    }
}

/* Empties the queue (the host's initial build state frees the slots). */
__global__ void reset_rings(build_params p)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.queue.capacity; i += stride) p.queue.seq[i] = i;
}

/* Lane 0 allocates the root's array (the pool's first allocation); fill_root
 * then writes 0 .. N-1 into it.  A root of more than p.big_node references
 * starts in slot 0 with its bins zeroed, and fill_root bins every
 * triangle's box into them, so that its BIN phase is one chunk entry of
 * no references: the warp that takes it goes straight to choosing the
 * split, with the bins the root's chunks would have made (the same bin_of
 * and scale).  A root's BIN phase cost a push of hundreds of chunk entries
 * and their trips through the queue at the start of every build, while
 * fill_root reads the boxes with the whole GPU.  A smaller root is pushed
 * as a task.  stats: the warm-up build, whose kernel counts the live bytes:
 * the root's array counts in them too, as its node's free takes it off
 * again. */
__global__ void root_setup(build_params p, float3 lo, float3 hi, int stats)
{
    __shared__ warp_smem sm; /* lane0_alloc records its time, lane0_count_array the array there */
    warp_ctx c;
    memset(&c, 0, sizeof c);
    c.p = &p;
    c.stats = stats;
    c.sm = &sm;
    c.lane = threadIdx.x & 31u;
    uint32_t *refs = NULL;
    if (c.lane == 0) {
        sm.alloc_stats[0] = sm.alloc_stats[1] = sm.alloc_stats[2] = 0;
        p.state->n_nodes.v = 1;
        refs = lane0_alloc(&c, p.n_triangles);
        if (!refs) { /* a growable pool grows, and this runs again */
            if (p.can_park) atomicExch(&p.state->park.v, 1u);
            else set_error(&p, BUILD_POOL_EXHAUSTED);
        } else {
            lane0_count_array(&c, p.n_triangles);
            p.state->root_refs = refs;
        }
    }
    refs = broadcast_ptr(refs);
    if (!refs) return;
    task root;
    root.lo[0] = lo.x, root.lo[1] = lo.y, root.lo[2] = lo.z;
    root.hi[0] = hi.x, root.hi[1] = hi.y, root.hi[2] = hi.z;
    root.refs = refs;
    root.n = p.n_triangles;
    root.node = 0;
    root.level = kdtree_level_root();
    root.slot = NO_SLOT;
    if (root.n > p.big_node) {
        uint32_t n_chunks = warp_fill_slot(&c, 0, &root); /* slot 0, taken before any warp looks at the free ones */
        if (c.lane == 0) {
            p.slots[0].n_chunks = 1; /* its BIN phase: the one entry below */
            p.state->slot_free[0] &= ~1u;
            p.state->slots_free.v -= 1u;
            task e = chunk_entry(PHASE_BIN, 0, n_chunks, push_stamp()); /* past the last chunk: no references */
            lane0_push(&c, &e);
        }
    } else if (c.lane == 0) {
        lane0_push(&c, &root);
    }
    if (c.lane == 0) {
        atomicAdd(&p.state->n_alloc, sm.alloc_stats[0]);
        atomicAdd(&p.state->alloc_bytes, sm.alloc_stats[1]);
        atomicAdd(&p.state->alloc_sq, sm.alloc_stats[2]);
    }
}

/* fill_root's blocks at most: each adds up to BIN_WORDS words to the
 * slot's bins (a tunable, as those of gpu_build_types.cuh). */
#ifndef KDA_BUILD_ROOT_FILL_BLOCKS
#define KDA_BUILD_ROOT_FILL_BLOCKS 1024
#endif

/* Writes 0 .. N-1 into the root's array and, for a root in slot 0 (see
 * root_setup), bins the triangles' boxes into its bins: each block into
 * its shared bins, then the words it touched into the slot's. */
__global__ void fill_root(build_params p, float3 lo, float3 hi)
{
    __shared__ uint32_t bins[2][3][GPU_BINS];
    uint32_t *refs = p.state->root_refs, n = p.n_triangles;
    if (!refs) return;
    int binned = n > p.big_node;
    float root_lo[3] = {lo.x, lo.y, lo.z}, extent[3] = {hi.x - lo.x, hi.y - lo.y, hi.z - lo.z}, scale[3];
    bin_scales(extent, scale);
    uint32_t *words = &bins[0][0][0];
    for (uint32_t j = threadIdx.x; j < BIN_WORDS; j += blockDim.x) words[j] = 0;
    __syncthreads();
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        refs[i] = i;
        if (!binned) continue;
        float tlo[3], thi[3];
        load_box(&p, i, tlo, thi);
        bin_box(bins, tlo, thi, root_lo, scale);
    }
    __syncthreads();
    if (!binned) return;
    uint32_t *slot_bins = &p.slots[0].bins[0][0][0];
    for (uint32_t j = threadIdx.x; j < BIN_WORDS; j += blockDim.x)
        if (words[j]) atomicAdd(&slot_bins[j], words[j]);
}

/* After a parked launch (gpu_node_work.cuh): the spilled tasks become the
 * queue's first entries, every big-node slot is free again (the drained
 * launch finished each big node it had started), and the counters of the
 * queue, of waiting warps and of parking start afresh.  The tree's
 * counters, the statistics and the live arrays carry on. */
__global__ void resume_queue(build_params p, uint32_t spilled)
{
    uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.queue.capacity; i += stride) {
        if (i < spilled) p.cells[i] = p.spill[i];
        p.queue.seq[i] = i < spilled ? i + 1 : i;
    }
    for (uint32_t w = blockIdx.x * blockDim.x + threadIdx.x; w < SLOT_WORDS; w += stride) p.state->slot_free[w] = ~0u;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        build_state *st = p.state;
        st->slots_free.v = KDA_BUILD_SLOTS;
        st->q_head.v = 0;
        st->q_tail.v = spilled;
        st->pending.v = spilled;
        st->hungry.v = 0;
        st->park.v = 0;
        st->spilled.v = 0;
    }
}

#endif
