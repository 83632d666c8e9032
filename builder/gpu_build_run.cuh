/* gpu_build_run.cuh - one build on the host's side (included by
 * gpu_build.cu): its parameters, its launches (setup kernels, then the
 * build kernel, and after each launch that parked a growth of the pool and
 * a launch that resumes), the watchdog that waits for the kernel, and the
 * timing with CUDA events.
 *
 * Invariants.  The pool is reset before the parameters are made (the reset
 * changes the heap), and every launch of one build sees the same
 * parameters but for the heap after a growth.  A launch parks only with a
 * growable pool (p.can_park), and then the pool grows in place: the arrays
 * allocated so far stay where they are and nothing is copied.  The events
 * time the whole build, growth steps included.  On GPU_BUILD_STALLED the
 * kernel still runs, so nothing is freed and no further CUDA call is made:
 * the caller ends the process. */
#ifndef KDA_GPU_BUILD_RUN_CUH
#define KDA_GPU_BUILD_RUN_CUH

#include <string.h>
#include <time.h>

#include "cuda_check.cuh"
#include "gpu_build.h"
#include "gpu_build_buffers.cuh"
#include "gpu_setup_kernels.cuh"

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
    p.can_park = pool->plan.limit_bytes != 0;
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
    p.chunk = KDA_BUILD_CHUNK_MIN;
    while (p.chunk < CHUNK_MAX && (uint64_t)p.chunk * KDA_BUILD_CHUNK_SHARE < n) p.chunk *= 2;
    p.big_node = KDA_BUILD_BIG_CHUNKS * p.chunk > KDA_BUILD_BIG_NODE_MIN ? KDA_BUILD_BIG_CHUNKS * p.chunk : KDA_BUILD_BIG_NODE_MIN;
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
    int stuck;      /* the build failed because the pool could not grow */
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
    zero.slots_free.v = KDA_BUILD_SLOTS;
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
            fill_root<<<fill_blocks < KDA_BUILD_ROOT_FILL_BLOCKS ? fill_blocks : KDA_BUILD_ROOT_FILL_BLOCKS, 256>>>(
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
            snprintf(err, errlen, "pool exhausted after %llu allocation%s at %.1f MiB: %s",
                     (unsigned long long)out->n_alloc, out->n_alloc == 1 ? "" : "s", (double)had / (1 << 20), why);
            grew->stuck = 1;
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

#endif
