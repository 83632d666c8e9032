/* gpu_build.cu - host side of the GPU builder: device checks, scene upload,
 * the build's buffers and launches, retries when an array was too small,
 * growing the pool when a build parks, timing with CUDA events,
 * statistics, and the tree's download. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.cuh"
#include "gpu_build.h"
#include "gpu_kernel.cuh"

#define MAX_ATTEMPTS 8  /* builds rerun after growing an array */

/* ------------------------------------------------------------------------
 * Device
 * ------------------------------------------------------------------------ */

extern "C" int gpu_device_check(char *why, size_t why_len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(why, why_len, "no usable CUDA device (%s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        cudaGetLastError();
        return -1;
    }
    cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, build_kernel);
    if (e != cudaSuccess) {
        int dev = 0, major = 0, minor = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        snprintf(why, why_len,
                 "the GPU is sm_%d%d but this kdalloc has no code for it (%s); rebuild with "
                 "-DCMAKE_CUDA_ARCHITECTURES=%d%d",
                 major, minor, cudaGetErrorString(e), major, minor);
        cudaGetLastError();
        return -1;
    }
    return 0;
}

extern "C" void gpu_device_name(char *out, size_t len)
{
    int dev = 0;
    cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        snprintf(out, len, "unknown GPU");
        return;
    }
    snprintf(out, len, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
}

/* ------------------------------------------------------------------------
 * Scene and tree transfers
 * ------------------------------------------------------------------------ */

extern "C" int gpu_scene_upload(const scene *s, gpu_scene *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    size_t vbytes = (size_t)s->n_vertices * 3 * sizeof(float), tbytes = (size_t)s->n_triangles * 3 * sizeof(uint32_t);
    CHECK(cudaMalloc(&g->positions, vbytes ? vbytes : 4), "allocating the scene on the GPU");
    CHECK(cudaMalloc(&g->triangles, tbytes ? tbytes : 4), "allocating the scene on the GPU");
    CHECK(cudaMemcpy(g->positions, s->positions, vbytes, cudaMemcpyHostToDevice), "uploading the scene");
    CHECK(cudaMemcpy(g->triangles, s->triangles, tbytes, cudaMemcpyHostToDevice), "uploading the scene");
    g->n_vertices = s->n_vertices;
    g->n_triangles = s->n_triangles;
    memcpy(g->lo, s->lo, sizeof g->lo);
    memcpy(g->hi, s->hi, sizeof g->hi);
    return 0;
fail:
    gpu_scene_free(g);
    return -1;
}

extern "C" void gpu_scene_free(gpu_scene *g)
{
    cudaFree(g->positions);
    cudaFree(g->triangles);
    memset(g, 0, sizeof *g);
}

extern "C" int gpu_tree_download(const gpu_tree *g, kdtree *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->nodes = (kdtree_node *)malloc((size_t)g->n_nodes * sizeof *t->nodes + 1);
    t->refs = (uint32_t *)malloc((size_t)g->n_refs * sizeof *t->refs + 1);
    if (!t->nodes || !t->refs) {
        kdtree_free(t);
        snprintf(err, errlen, "out of host memory for a tree of %u nodes", g->n_nodes);
        return -1;
    }
    CHECK(cudaMemcpy(t->nodes, g->nodes, (size_t)g->n_nodes * sizeof *t->nodes, cudaMemcpyDeviceToHost),
          "downloading the tree");
    CHECK(cudaMemcpy(t->refs, g->refs, (size_t)g->n_refs * sizeof *t->refs, cudaMemcpyDeviceToHost),
          "downloading the tree");
    t->n_nodes = g->n_nodes;
    t->n_refs = g->n_refs;
    memcpy(t->lo, g->lo, sizeof t->lo);
    memcpy(t->hi, g->hi, sizeof t->hi);
    return 0;
fail:
    kdtree_free(t);
    return -1;
}

extern "C" int gpu_tree_upload(const kdtree *t, gpu_tree *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    CHECK(cudaMalloc(&g->nodes, (size_t)t->n_nodes * sizeof *g->nodes + 1), "allocating the tree on the GPU");
    CHECK(cudaMalloc(&g->refs, (size_t)t->n_refs * sizeof *g->refs + 1), "allocating the tree on the GPU");
    CHECK(cudaMemcpy(g->nodes, t->nodes, (size_t)t->n_nodes * sizeof *g->nodes, cudaMemcpyHostToDevice),
          "uploading the tree");
    CHECK(cudaMemcpy(g->refs, t->refs, (size_t)t->n_refs * sizeof *g->refs, cudaMemcpyHostToDevice),
          "uploading the tree");
    g->n_nodes = t->n_nodes;
    g->n_refs = t->n_refs;
    memcpy(g->lo, t->lo, sizeof g->lo);
    memcpy(g->hi, t->hi, sizeof g->hi);
    return 0;
fail:
    gpu_tree_free(g);
    return -1;
}

extern "C" void gpu_tree_free(gpu_tree *g)
{
    cudaFree(g->nodes);
    cudaFree(g->refs);
    memset(g, 0, sizeof *g);
}

/* ------------------------------------------------------------------------
 * Setup kernels
 * ------------------------------------------------------------------------ */

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
    root.depth = 0;
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

#ifndef ROOT_FILL_BLOCKS
#define ROOT_FILL_BLOCKS 1024 /* fill_root's blocks at most: each adds up to BIN_WORDS words to the slot's bins */
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
        st->slots_free.v = SLOTS;
        st->q_head.v = 0;
        st->q_tail.v = spilled;
        st->pending.v = spilled;
        st->hungry.v = 0;
        st->park.v = 0;
        st->spilled.v = 0;
    }
}

/* ------------------------------------------------------------------------
 * Buffers of one build
 * ------------------------------------------------------------------------ */

typedef struct build_buffers {
    tri_box *boxes;
    build_state *state;
    task *cells, *spill;
    uint2 *out_left; /* one per warp of the grid */
    uint32_t warps;
    uint32_t *queue_seq;
    big_slot *slots;
    kdtree_node *nodes;
    uint32_t *refs_out;
    uint32_t queue_capacity, node_capacity, refs_capacity;
} build_buffers;

static void free_buffers(build_buffers *b)
{
    cudaFree(b->boxes);
    cudaFree(b->state);
    cudaFree(b->cells);
    cudaFree(b->spill);
    cudaFree(b->out_left);
    cudaFree(b->queue_seq);
    cudaFree(b->slots);
    cudaFree(b->nodes);
    cudaFree(b->refs_out);
    memset(b, 0, sizeof *b);
}

/* (Re)allocates what a capacity change invalidated; everything on first use. */
static int alloc_buffers(build_buffers *b, uint32_t n, char *err, size_t errlen)
{
    if (!b->boxes) {
        CHECK(cudaMalloc(&b->boxes, (size_t)n * sizeof(tri_box)), "allocating triangle boxes on the GPU");
        CHECK(cudaMalloc(&b->state, sizeof(build_state)), "allocating the build state");
        CHECK(cudaMalloc(&b->slots, SLOTS * sizeof(big_slot)), "allocating big-node slots");
        CHECK(cudaMalloc(&b->out_left, (size_t)b->warps * sizeof(uint2)), "allocating the build state");
    }
    if (!b->cells) {
        CHECK(cudaMalloc(&b->cells, (size_t)b->queue_capacity * sizeof(task)), "allocating the task queue");
        CHECK(cudaMalloc(&b->spill, (size_t)b->queue_capacity * sizeof(task)), "allocating the task queue");
        CHECK(cudaMalloc(&b->queue_seq, (size_t)b->queue_capacity * sizeof(uint32_t)), "allocating the task queue");
    }
    if (!b->nodes)
        CHECK(cudaMalloc(&b->nodes, (size_t)b->node_capacity * sizeof(kdtree_node)), "allocating the node array");
    if (!b->refs_out)
        CHECK(cudaMalloc(&b->refs_out, (size_t)b->refs_capacity * sizeof(uint32_t)), "allocating the leaf references");
    return 0;
fail:
    return -1;
}

static uint32_t pow2_at_least(uint64_t v)
{
    uint32_t p = 1;
    while (p < v && p < (1u << 31)) p <<= 1;
    return p;
}

static uint32_t grow(uint32_t cap, uint32_t limit) { return cap >= limit / 2 ? limit : cap * 2; }

/* Grows the array whose overflow stopped a build (its buffer is freed, and
 * alloc_buffers allocates it anew at the larger size); 0 when the build
 * stopped for another reason. */
static int grow_full_array(build_buffers *b, uint32_t error)
{
    switch (error) {
    case BUILD_QUEUE_FULL:
        b->queue_capacity = grow(b->queue_capacity, 1u << 30); /* positions are compared as int32_t */
        cudaFree(b->cells), cudaFree(b->spill), cudaFree(b->queue_seq);
        b->cells = NULL, b->spill = NULL, b->queue_seq = NULL;
        return 1;
    case BUILD_NODES_FULL:
        b->node_capacity = grow(b->node_capacity, KDTREE_MAX_COUNT);
        cudaFree(b->nodes);
        b->nodes = NULL;
        return 1;
    case BUILD_REFS_FULL:
        b->refs_capacity = grow(b->refs_capacity, UINT32_MAX);
        cudaFree(b->refs_out);
        b->refs_out = NULL;
        return 1;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------------
 * One build
 * ------------------------------------------------------------------------ */

typedef void (*build_kernel_fn)(const build_params);

typedef struct launch_shape {
    uint32_t blocks, threads;
    build_kernel_fn kernel;       /* build_kernel, or build_kernel_parking for a growable pool */
    build_kernel_fn stats_kernel; /* the same, profiled: the warm-up build's */
} launch_shape;

static build_params make_params(const build_buffers *b, const kda_pool *pool, uint32_t n)
{
    build_params p;
    memset(&p, 0, sizeof p);
    p.heap = pool->heap;
    p.boxes = b->boxes;
    p.state = b->state;
    p.cells = b->cells;
    p.spill = b->spill;
    p.out_left = b->out_left;
    p.can_park = pool->limit_bytes != 0;
    p.queue.seq = b->queue_seq;
    p.queue.capacity = b->queue_capacity;
    p.queue.head = &b->state->q_head.v;
    p.queue.tail = &b->state->q_tail.v;
    p.slots = b->slots;
    p.nodes = b->nodes;
    p.node_capacity = b->node_capacity;
    p.refs_out = b->refs_out;
    p.refs_capacity = b->refs_capacity;
    p.n_triangles = n;
    p.chunk = CHUNK_MIN;
    while (p.chunk < CHUNK_MAX && (uint64_t)p.chunk * CHUNK_SHARE < n) p.chunk *= 2;
    p.big_node = BIG_CHUNKS * p.chunk > BIG_NODE_MIN ? BIG_CHUNKS * p.chunk : BIG_NODE_MIN;
    p.max_depth = (uint32_t)kdtree_max_depth(n);
    return p;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for the build kernel (event `done`) while watching its progress:
 * the node count, tasks pending, the queue's counters and the references
 * written.  If none of them moves for `limit_s` seconds, the kernel is
 * stuck: GPU_BUILD_STALLED with the state in err.  The counters are read
 * on a stream of their own that does not wait for the kernel; if that
 * reading fails, or limit_s is not positive (no watchdog), this simply
 * waits for the kernel. */
static int wait_for_build(cudaEvent_t done, const build_state *dev, double limit_s, int parking, char *err,
                          size_t errlen)
{
    cudaStream_t watch = NULL;
    if (limit_s <= 0 || cudaStreamCreateWithFlags(&watch, cudaStreamNonBlocking) != cudaSuccess) watch = NULL;
    cudaGetLastError(); /* a failed stream creation is not the build's error */
    uint32_t key[5] = {0};
    double moved = seconds_now();
    for (unsigned polls = 1; watch; polls++) {
        cudaError_t e = cudaEventQuery(done);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) CHECK(e, "running the build kernel");
        /* A parked launch waits for this poll before the pool grows: poll it
         * 5x as often (the watchdog reads the counters every ~13 ms either way). */
        struct timespec pause = {0, parking ? 20000 : 100000};
        nanosleep(&pause, NULL);
        if (polls % (parking ? 640 : 128)) continue;
        build_state now;
        if (cudaMemcpyAsync(&now, dev, sizeof now, cudaMemcpyDeviceToHost, watch) != cudaSuccess ||
            cudaStreamSynchronize(watch) != cudaSuccess) {
            cudaGetLastError(); /* no watchdog for this build: just wait */
            break;
        }
        uint32_t k[5] = {now.n_nodes.v, now.pending.v, now.q_head.v, now.q_tail.v, now.refs_out.v};
        if (memcmp(k, key, sizeof k)) {
            memcpy(key, k, sizeof k);
            moved = seconds_now();
        } else if (seconds_now() - moved > limit_s) {
            snprintf(err, errlen,
                     "the build made no progress for %.0f s: %s or the builder is stuck (%u nodes done, %u tasks "
                     "pending, %d waiting in the global queue; %.1f MiB in live arrays%s); the kernel is left "
                     "running until this process ends",
                     limit_s, kda_allocator_name(), now.n_nodes.v, now.pending.v,
                     (int)(now.q_tail.v - now.q_head.v) > 0 ? (int)(now.q_tail.v - now.q_head.v) : 0,
                     (double)now.live_bytes / (1 << 20), now.live_bytes ? "" : ", counted in the warm-up build");
            return GPU_BUILD_STALLED; /* no further CUDA call: the caller ends the process */
        }
    }
    if (watch) cudaStreamDestroy(watch);
    CHECK(cudaEventSynchronize(done), "running the build kernel");
    return 0;
fail:
    if (watch) cudaStreamDestroy(watch);
    return -1;
}

/* How a growable pool grew during one build. */
typedef struct pool_growth {
    uint32_t steps; /* growth steps (each a parked launch, grown, resumed) */
    double ms;      /* host time in kda_pool_grow */
} pool_growth;

/* Runs one build; the counters it ends with land in *out.  With a growable
 * pool, each launch that parks is followed by a growth step (the pool
 * doubles) and a launch that resumes it, until the tree is done; the time
 * in *ms spans them all.  GPU_BUILD_STALLED if the kernel stopped making
 * progress (nothing is freed then). */
static int run_build(const gpu_scene *g, kda_pool *pool, build_buffers *b, launch_shape shape, int collect_stats,
                     const gpu_build_options *opt, float *ms, build_state *out, pool_growth *grew, char *err,
                     size_t errlen)
{
    double watchdog_s = opt->watchdog_s;
    int rc;
    cudaEvent_t start = NULL, stop = NULL;
    if (kda_pool_reset(pool, err, errlen)) return -1; /* before the parameters: it changes the heap */
    build_params p = make_params(b, pool, g->n_triangles);
    build_state zero;
    memset(&zero, 0, sizeof zero);
    for (uint32_t w = 0; w < SLOT_WORDS; w++) zero.slot_free[w] = ~0u; /* every big-node slot free */
    zero.slots_free.v = SLOTS;
    uint32_t n = g->n_triangles;
    unsigned fill_blocks = (n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096;

    CHECK(cudaMemcpy(b->state, &zero, sizeof zero, cudaMemcpyHostToDevice), "resetting the build state");
    CHECK(cudaMemset(b->out_left, 0, (size_t)b->warps * sizeof(uint2)), "resetting the build state");
    reset_rings<<<256, 256>>>(p);
    CHECK(cudaGetLastError(), "launching reset_rings");
    CHECK(cudaEventCreate(&start), "cudaEventCreate");
    CHECK(cudaEventCreate(&stop), "cudaEventCreate");

    CHECK(cudaEventRecord(start), "cudaEventRecord");
    triangle_boxes<<<fill_blocks, 256>>>(g->positions, g->triangles, n, b->boxes);
    CHECK(cudaGetLastError(), "launching triangle_boxes");
    memset(grew, 0, sizeof *grew);
    for (int has_root = 0;;) {
        if (!has_root) { /* the first launch, or a pool too small for the root's array */
            root_setup<<<1, 32>>>(p, make_float3(g->lo[0], g->lo[1], g->lo[2]),
                                  make_float3(g->hi[0], g->hi[1], g->hi[2]), collect_stats);
            CHECK(cudaGetLastError(), "launching root_setup");
            fill_root<<<fill_blocks < ROOT_FILL_BLOCKS ? fill_blocks : ROOT_FILL_BLOCKS, 256>>>(
                p, make_float3(g->lo[0], g->lo[1], g->lo[2]), make_float3(g->hi[0], g->hi[1], g->hi[2]));
            CHECK(cudaGetLastError(), "launching fill_root");
        }
        (collect_stats ? shape.stats_kernel : shape.kernel)<<<shape.blocks, shape.threads>>>(p);
        CHECK(cudaGetLastError(), "launching build_kernel");
        CHECK(cudaEventRecord(stop), "cudaEventRecord");
        rc = wait_for_build(stop, b->state, watchdog_s == 0 ? 10.0 : watchdog_s, p.can_park, err, errlen);
        if (rc == GPU_BUILD_STALLED) return rc;
        if (rc) goto fail;
        CHECK(cudaMemcpy(out, b->state, sizeof *out, cudaMemcpyDeviceToHost), "reading the build state");
        if (!p.can_park || out->error.v != BUILD_OK || !out->park.v) break;
        /* Parked: the pool ran out.  Double it and resume. */
        double t0 = seconds_now();
        uint64_t had = pool->heap.bytes;
        if (kda_pool_grow(pool, opt->pool_step ? had + opt->pool_step : 2 * had, err, errlen)) {
            char why[256];
            snprintf(why, sizeof why, "%s", err);
            snprintf(err, errlen, "pool exhausted after %llu allocations at %.1f MiB: %s",
                     (unsigned long long)out->n_alloc, (double)had / (1 << 20), why);
            goto fail;
        }
        grew->ms += 1e3 * (seconds_now() - t0);
        grew->steps++;
        p.heap = pool->heap;
        has_root = out->root_refs != NULL;
        resume_queue<<<256, 256>>>(p, out->spilled.v);
        CHECK(cudaGetLastError(), "launching resume_queue");
    }
    CHECK(cudaEventElapsedTime(ms, start, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return 0;
fail:
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return -1;
}

#ifdef KDA_TIMELINE
/* A build's timeline (the warm-up build's; with KDA_TIMELINE_TIMED also
 * the last timed build's), on stderr: per bucket the warps with work at
 * its end, and the nodes and chunks finished in it. */
static void timeline_print(const build_state *st)
{
    int last = 0, busy = 0;
    for (int i = 0; i < TIMELINE_BUCKETS; i++)
        for (int k = 0; k < TL_SERIES; k++)
            if (st->timeline[i][k]) last = i;
    fprintf(stderr, "timeline (per %d us): t_us busy_warps nodes chunks\n", TIMELINE_NS / 1000);
    for (int i = 0; i <= last; i++) {
        busy += st->timeline[i][TL_BUSY];
        fprintf(stderr, "timeline %6d %5d %6d %6d\n", i * (TIMELINE_NS / 1000), busy, st->timeline[i][TL_NODES],
                st->timeline[i][TL_CHUNKS]);
    }
}
#endif

#ifdef KDA_PROBE
/* The warm-up build's cycles in the parts of big nodes' chunks, per chunk
 * (lane 0's clock64; the last chunk's work per big node), the single-warp
 * nodes' donations, and the exact split's candidates and cycles by the
 * node's size, on stderr. */
static void probe_print(const build_state *st)
{
    const unsigned long long *q = st->probe;
    double bins = q[PROBE_BIN_CHUNKS] ? (double)q[PROBE_BIN_CHUNKS] : 1.0;
    double scatters = q[PROBE_SCATTER_CHUNKS] ? (double)q[PROBE_SCATTER_CHUNKS] : 1.0;
    double splits = q[PROBE_BIG_SPLITS] ? (double)q[PROBE_BIG_SPLITS] : 1.0;
    fprintf(stderr,
            "probe: %llu BIN chunks, cycles each: set-up %.0f, zeroing the bins and binning %.0f, merging %.0f, "
            "hand-over %.0f\n", q[PROBE_BIN_CHUNKS], q[PROBE_BIN_SETUP] / bins, q[PROBE_BIN_BINNING] / bins,
            q[PROBE_BIN_MERGE] / bins, q[PROBE_BIN_HANDOVER] / bins);
    fprintf(stderr, "probe: after the last BIN chunk of each of %llu big nodes split, cycles each: reading the bins "
            "and choosing %.0f, allocating %.0f, the slot and pushing the SCATTER chunks %.0f\n",
            q[PROBE_BIG_SPLITS], q[PROBE_SPLIT_CHOOSE] / splits, q[PROBE_SPLIT_ALLOC] / splits,
            q[PROBE_BIN_SPLIT] / splits);
    fprintf(stderr,
            "probe: %llu SCATTER chunks, cycles each: set-up %.0f, classifying %.0f, reserving %.0f, writing %.0f, "
            "hand-over %.0f; taking the children after the last, each: %.0f\n",
            q[PROBE_SCATTER_CHUNKS], q[PROBE_SCATTER_SETUP] / scatters, q[PROBE_SCATTER_CLASSIFY] / scatters,
            q[PROBE_SCATTER_RESERVE] / scatters, q[PROBE_SCATTER_WRITE] / scatters, q[PROBE_SCATTER_HANDOVER] / scatters,
            q[PROBE_SCATTER_CHILDREN] / splits);
    fprintf(stderr, "probe: a chunk entry waited %.2f us on average from the start of its push to its pop (%llu "
            "entries), %.2f us of them until the push was published (%.2f us until its cells were reserved and "
            "checked)\n",
            q[PROBE_QUEUED] ? q[PROBE_QUEUE_NS] / 1e3 / (double)q[PROBE_QUEUED] : 0.0, q[PROBE_QUEUED],
            q[PROBE_QUEUED] ? q[PROBE_PUBLISH_NS] / 1e3 / (double)q[PROBE_QUEUED] : 0.0,
            q[PROBE_QUEUED] ? q[PROBE_CHECKED_NS] / 1e3 / (double)q[PROBE_QUEUED] : 0.0);
    fprintf(stderr, "probe: %llu nodes done by one warp; %llu tasks given to the block's idle warps, %llu to the queue\n",
            q[PROBE_NODES], q[PROBE_DONATES_BLOCK], q[PROBE_DONATES_GLOBAL]);
    fprintf(stderr, "probe: exact splits: %llu candidate planes, %llu inside their node's box; passes of 32: %llu, "
            "%llu for those inside\n", q[PROBE_CANDIDATES], q[PROBE_CANDIDATES_INSIDE], q[PROBE_PASSES],
            q[PROBE_PASSES_INSIDE]);
    static const int up_to[4] = {8, 16, 32, 64};
    for (int i = 0; i < 4; i++)
        fprintf(stderr, "probe: exact splits of at most %d references: %llu, %.0f cycles each\n", up_to[i],
                q[PROBE_EXACTS_8 + i], q[PROBE_EXACTS_8 + i] ? q[PROBE_EXACT_8 + i] / (double)q[PROBE_EXACTS_8 + i] : 0.0);
}
#endif

/* The message for a build that stopped with an error other than a full
 * array (those are grown and the build rerun). */
static void describe_failure(const build_state *st, const gpu_build_options *opt, uint64_t pool_bytes, char *err,
                             size_t errlen)
{
    char hint[64];
    if (opt->pool_bytes)
        snprintf(hint, sizeof hint, "rerun with --pool-mb > %llu", (unsigned long long)(opt->pool_bytes >> 20));
    else
        snprintf(hint, sizeof hint, "rerun with --pool-factor > %g", opt->pool_factor);
    double mib = (double)pool_bytes / (1 << 20);
    if (st->error.v == BUILD_POOL_EXHAUSTED)
        snprintf(err, errlen, "pool exhausted after %llu allocations (%s pool of %.1f MiB); %s",
                 (unsigned long long)st->n_alloc, kda_allocator_name(), mib, hint);
    else if (st->error.v == BUILD_CORRUPT)
        snprintf(err, errlen, "the build read overwritten memory: %s reused live arrays of its %.1f MiB pool; %s",
                 kda_allocator_name(), mib, hint);
    else if (st->error.v >= BUILD_QUEUE_FULL && st->error.v <= BUILD_REFS_FULL)
        snprintf(err, errlen, "the build's arrays kept overflowing after %d attempts", MAX_ATTEMPTS);
    else
        snprintf(err, errlen, "the build kernel stopped with unknown error %u", st->error.v);
}

/* Builds of one scene are repeatable: the same nodes and the same
 * requests, whoever does them (docs/builder.md).  So a timed build that
 * differs from the warm-up build, whose statistics are reported, read
 * memory that changed under it; 0 when they agree. */
static int builds_differ(const build_state *warm, const build_state *st, int wrapped, char *err, size_t errlen)
{
    if (st->n_alloc == warm->n_alloc && st->alloc_bytes == warm->alloc_bytes && st->alloc_sq == warm->alloc_sq &&
        st->n_nodes.v == warm->n_nodes.v)
        return 0;
    int n = snprintf(err, errlen, "two builds of this scene differ (%llu and %llu requests, %u and %u nodes): ",
                     (unsigned long long)warm->n_alloc, (unsigned long long)st->n_alloc, warm->n_nodes.v,
                     st->n_nodes.v);
    if (n < 0 || (size_t)n >= errlen) return -1;
    if (wrapped)
        snprintf(err + n, errlen - (size_t)n, "%s wrapped around its pool and overwrote live arrays; rerun with a "
                 "larger --pool-factor or --pool-mb", kda_allocator_name());
    else
        snprintf(err + n, errlen - (size_t)n, "a builder or %s bug, please report it with the scene",
                 kda_allocator_name());
    return -1;
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

extern "C" int gpu_build(const gpu_scene *g, const gpu_build_options *opt, gpu_tree *out, gpu_build_stats *stats,
                         char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    memset(stats, 0, sizeof *stats);
    const char *why;
    if (!kda_allocator_builds(&why)) {
        snprintf(err, errlen, "%s cannot serve the k-d tree build: %s", kda_allocator_name(), why);
        return -1;
    }
    uint32_t n = g->n_triangles;
    if (n == 0) {
        snprintf(err, errlen, "cannot build a tree over an empty scene");
        return -1;
    }
    if (n > KDTREE_MAX_COUNT) {
        snprintf(err, errlen, "%u triangles: the tree layout holds at most %u", n, KDTREE_MAX_COUNT);
        return -1;
    }
    uint64_t root_bytes = (uint64_t)n * sizeof(uint32_t);
    uint64_t pool_bytes = opt->pool_bytes ? opt->pool_bytes : (uint64_t)(opt->pool_factor * (double)root_bytes);
    pool_bytes = (pool_bytes + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    /* An allocator's minimum pool (Halloc's) is taken where the factor asks
     * for less, as the paper did; an explicit size below it is refused. */
    if (!opt->pool_bytes && pool_bytes < kda_allocator_min_pool()) {
        pool_bytes = kda_allocator_min_pool();
        stats->pool_raised = 1;
    }

    kda_pool pool;
    memset(&pool, 0, sizeof pool);
    build_buffers b;
    memset(&b, 0, sizeof b);
    float *times = NULL;
    uint32_t repeat = opt->repeat ? opt->repeat : 1;
    build_state st, warm;
    launch_shape shape;
    pool_growth grew;

    const char *why_fixed = NULL;
    if (opt->pool_auto && kda_allocator_grows(&why_fixed) && kda_pool_growth_supported(&why_fixed)) {
        /* Addresses for as much as the GPU has free; memory as it is needed. */
        size_t free_bytes = 0, total_bytes = 0;
        /* An allocator that never reuses memory must hold every request:
         * 12-70x the root array on the shared scenes, so it starts at 32x
         * instead of growing five times from 2x (each growth step costs a
         * relaunch, docs/builder.md). */
        double factor = opt->pool_start > 0 ? opt->pool_start : kda_allocator_frees() ? 2.0 : 32.0;
        double start = factor * (double)root_bytes;
        if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
            snprintf(err, errlen, "reading the GPU's free memory: %s", cudaGetErrorString(cudaGetLastError()));
            return -1;
        }
        uint64_t limit = opt->pool_limit && opt->pool_limit < free_bytes ? opt->pool_limit : free_bytes;
        if (kda_pool_create_growable(&pool, (uint64_t)start, limit, err, errlen)) return -1;
        stats->pool_grows = 1;
        stats->pool_start_bytes = pool.start_bytes;
    } else {
        stats->pool_fixed_why = opt->pool_auto ? why_fixed : NULL;
        if (kda_pool_create(&pool, pool_bytes, err, errlen)) return -1;
    }

    /* The grid: as many blocks as stay resident at once. */
    int device = 0, sms = 0, per_sm = 0, stats_per_sm = 0; /* stats: the warm-up build kernel's */
    cudaFuncAttributes attr;
    CHECK(cudaGetDevice(&device), "cudaGetDevice");
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    shape.kernel = pool.limit_bytes ? build_kernel_parking : build_kernel; /* as make_params's can_park */
    shape.stats_kernel = pool.limit_bytes ? build_kernel_parking_stats : build_kernel_stats;
    CHECK(cudaFuncGetAttributes(&attr, shape.kernel), "reading the build kernel's attributes");
    /* every block must be resident in both kernels (persistent warps) */
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shape.kernel, WARPS_PER_BLOCK * 32, 0),
          "computing the build kernel's occupancy");
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&stats_per_sm, shape.stats_kernel, WARPS_PER_BLOCK * 32, 0),
          "computing the warm-up build kernel's occupancy");
    if (stats_per_sm < per_sm) per_sm = stats_per_sm;
    shape.threads = WARPS_PER_BLOCK * 32;
    shape.blocks = (uint32_t)(per_sm > 0 ? per_sm : 1) * (uint32_t)sms;
    b.warps = shape.blocks * WARPS_PER_BLOCK;

    /* First guesses; an overflow grows the array and reruns the build. */
    b.node_capacity = (uint32_t)((8ull * n + 4096) < KDTREE_MAX_COUNT ? 8ull * n + 4096 : KDTREE_MAX_COUNT);
    {
        uint64_t refs = 24ull * n + (uint64_t)OUT_BATCH * shape.blocks * WARPS_PER_BLOCK;
        b.refs_capacity = (uint32_t)(refs < UINT32_MAX ? refs : UINT32_MAX);
    }
    b.queue_capacity = pow2_at_least(opt->queue_capacity ? opt->queue_capacity : 65536 + n / 8);

    /* The warm-up build collects the statistics; grown arrays rerun it.
     * Built with -DKDA_DIAG, it also prints the allocator's walks. */
    for (int attempt = 0;; attempt++) {
        float ms;
#if defined(KDA_DIAG) && defined(KDA_ALLOCATOR_IS_CIRCULAR)
        CHECK(kda_walk_stats_reset(), "resetting the walk statistics");
#endif
        if (alloc_buffers(&b, n, err, errlen)) goto fail;
        int rc = run_build(g, &pool, &b, shape, 1, opt, &ms, &st, &grew, err, errlen);
        if (rc == GPU_BUILD_STALLED) return rc; /* freeing would wait for the stuck kernel */
        if (rc) goto fail;
        if (st.error.v == BUILD_OK) break;
        if (attempt + 1 >= MAX_ATTEMPTS || !grow_full_array(&b, st.error.v)) {
            describe_failure(&st, opt, pool_bytes, err, errlen);
            goto fail;
        }
    }
#if defined(KDA_DIAG) && defined(KDA_ALLOCATOR_IS_CIRCULAR)
    CHECK(kda_walk_stats_print(stderr, "warm-up build"), "reading the walk statistics");
#endif
    stats->n_alloc = st.n_alloc;
    if (st.n_alloc) {
        double mean = (double)st.alloc_bytes / (double)st.n_alloc;
        double var = (double)st.alloc_sq / (double)st.n_alloc - mean * mean;
        stats->alloc_mean = mean;
        stats->alloc_sigma = sqrt(var > 0.0 ? var : 0.0);
    }
#ifdef KDA_TIMELINE
    timeline_print(&st);
#endif
#ifdef KDA_PROBE
    probe_print(&st);
#endif
    stats->peak_pool_bytes = st.peak_bytes;
    stats->cycles_idle = (double)st.profile[PROF_IDLE];
    stats->cycles_node = (double)st.profile[PROF_NODE];
    stats->cycles_alloc = (double)st.profile[PROF_ALLOC];
    stats->cycles_free = (double)st.profile[PROF_FREE];
    stats->cycles_chunk = (double)st.profile[PROF_CHUNK];
    stats->nodes_by_warps = st.profile[PROF_NODES];
    stats->chunks = st.profile[PROF_CHUNKS];
    stats->queue_pops = st.profile[PROF_POPS];
    stats->tasks_shared = st.profile[PROF_SHARED];
#if defined(KDA_ALLOCATOR_AWMALLOC)
    stats->pool_wrapped = st.alloc_bytes > pool_bytes;
#endif
    warm = st;

    times = (float *)malloc(repeat * sizeof *times);
    if (!times) {
        snprintf(err, errlen, "out of host memory");
        goto fail;
    }
    /* The same build can fail anew (its allocations and its work sharing
     * race): a full array is grown and that build repeated. */
    for (uint32_t r = 0, attempt = 0; r < repeat;) {
        if (alloc_buffers(&b, n, err, errlen)) goto fail;
        int rc = run_build(g, &pool, &b, shape, 0, opt, &times[r], &st, &grew, err, errlen);
        if (rc == GPU_BUILD_STALLED) return rc;
        if (rc) goto fail;
        if (st.error.v == BUILD_OK) {
            if (builds_differ(&warm, &st, stats->pool_wrapped, err, errlen)) goto fail;
            r++;
        } else if (++attempt >= MAX_ATTEMPTS || !grow_full_array(&b, st.error.v)) {
            describe_failure(&st, opt, pool_bytes, err, errlen);
            goto fail;
        }
    }
#if defined(KDA_TIMELINE) && defined(KDA_TIMELINE_TIMED)
    fprintf(stderr, "the last timed build (%.3f ms):\n", times[repeat - 1]);
    timeline_print(&st);
#endif
    qsort(times, repeat, sizeof *times, compare_float);
    stats->tree.build_ms = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
    stats->ms_min = times[0];
    stats->ms_max = times[repeat - 1];
    stats->builds_timed = repeat;
    if (stats->pool_grows) { /* what the last timed build mapped */
        pool_bytes = pool.heap.bytes;
        stats->grow_steps = grew.steps;
        stats->grow_ms = grew.ms;
    }
    stats->pool_bytes = pool_bytes;
    stats->pool_factor = (double)pool_bytes / (double)root_bytes;
    stats->registers = attr.numRegs;
    stats->blocks = shape.blocks;
    stats->threads_per_block = shape.threads;
    stats->allocator = kda_allocator_name();

    out->nodes = b.nodes;
    out->refs = b.refs_out;
    out->n_nodes = st.n_nodes.v;
    out->n_refs = st.refs_out.v;
    memcpy(out->lo, g->lo, sizeof out->lo);
    memcpy(out->hi, g->hi, sizeof out->hi);
    b.nodes = NULL; /* now the tree's */
    b.refs_out = NULL;
    free(times);
    free_buffers(&b);
    kda_pool_destroy(&pool);
    return 0;
fail:
    free(times);
    free_buffers(&b);
    kda_pool_destroy(&pool);
    return -1;
}
