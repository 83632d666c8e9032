/* gpu_build.cu - the GPU builder's entry points (gpu_build.h): the device
 * check and name, and gpu_build, which makes the pool that
 * kda_pool_plan_for sizes (pool/pool_plan.c: the policy is the library's),
 * sizes the grid and the arrays, runs the warm-up build (whose statistics
 * are reported) and the timed builds, and hands the tree over.
 *
 * This is the one translation unit that holds the build's device code:
 * the build kernel (gpu_kernel.cuh and what it includes), the setup
 * kernels (gpu_setup_kernels.cuh) and every file that launches them are
 * included here:
 *
 *   gpu_build_buffers.cuh  the device arrays of a build, grown on overflow
 *   gpu_setup_kernels.cuh  the kernels before and between launches
 *   gpu_build_run.cuh      one build: launches, pool growth, watchdog
 *   gpu_build_report.cuh   failure messages, repeatability, diagnostics
 *
 * gpu_transfer.cu (the scene's and trees' transfers) is host code apart.
 *
 * The allocator's state needs no such unit: it lives in the pool and its
 * state block, which every kernel reaches through the kda_heap it is
 * passed (pool/device_pool.cu, another library, runs the reset and grow
 * kernels on it).  Only the -DKDA_DIAG walk counters (circular.h,
 * scatteralloc_diag.h) are static __device__ variables, one copy per
 * translation unit: those printed after the warm-up build are this unit's,
 * which counts the setup kernels' and the build kernel's mallocs.
 *
 * Invariants.  Every block of the grid is resident at once (persistent
 * warps): the grid is as many blocks as both kernels (timed and warm-up)
 * keep on an SM, times the SMs.  The warm-up build runs first and alone
 * collects statistics; every timed build must repeat it exactly
 * (builds_differ), and a build stopped by a full array is rerun after that
 * array grew.  A failure names its cause and sizes (stats->pool_short),
 * never a command-line option: advice is the caller's. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.cuh"
#include "gpu_build.h"
#include "gpu_build_buffers.cuh"
#include "gpu_build_report.cuh"
#include "gpu_build_run.cuh"
#include "gpu_kernel.cuh"
#include "gpu_setup_kernels.cuh"

/* ------------------------------------------------------------------------
 * Device
 * ------------------------------------------------------------------------ */

/* A device to build on (kda_gpu_usable: no driver, an old one, no GPU),
 * and code in this binary for its architecture. */
extern "C" int gpu_device_check(char *why, size_t why_len)
{
    if (kda_gpu_usable(why, why_len)) return -1;
    cudaFuncAttributes attr;
    cudaError_t e = cudaFuncGetAttributes(&attr, build_kernel);
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
 * The builds: warm-up, then timed
 * ------------------------------------------------------------------------ */

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
    /* The pool kda_pool_plan_for sizes: the root array is the unit, and a
     * pool that grows is capped at the GPU's free memory. */
    uint64_t root_bytes = (uint64_t)n * sizeof(uint32_t);
    kda_pool_ask ask;
    memset(&ask, 0, sizeof ask);
    ask.unit_bytes = root_bytes;
    ask.factor = opt->pool_factor;
    ask.bytes = opt->pool_bytes;
    ask.grow = opt->pool_auto;
    ask.start_factor = opt->pool_start;
    ask.limit = opt->pool_limit;
    if (opt->pool_auto) {
        size_t free_bytes = 0, total_bytes = 0;
        if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
            snprintf(err, errlen, "reading the GPU's free memory: %s", cudaGetErrorString(cudaGetLastError()));
            return -1;
        }
        ask.free_bytes = free_bytes;
        kda_pool_growth_supported(&ask.device_cannot_grow);
    }
    const kda_traits traits = kda_allocator_traits();
    const kda_pool_sizing sizing = kda_pool_plan_for(&traits, &ask);
    uint64_t pool_bytes = sizing.start;

    kda_pool pool;
    memset(&pool, 0, sizeof pool);
    build_buffers b;
    memset(&b, 0, sizeof b);
    float *times = NULL;
    uint32_t repeat = opt->repeat ? opt->repeat : 1;
    build_state st, warm;
    launch_shape shape;
    pool_growth grew;
    memset(&grew, 0, sizeof grew);

    if (sizing.grows) { /* addresses for as much as the GPU has free; memory as it is needed */
        if (kda_pool_create_growable(&pool, sizing.start, sizing.limit, err, errlen)) return -1;
        stats->pool_grows = 1;
        stats->pool_start_bytes = pool.start_bytes;
    } else {
        stats->pool_fixed_why = sizing.fixed_why;
        stats->pool_raised = sizing.raised;
        if (kda_pool_create(&pool, pool_bytes, err, errlen)) return -1;
    }

    /* The grid: as many blocks as stay resident at once. */
    int device = 0, sms = 0, per_sm = 0, stats_per_sm = 0; /* stats: the warm-up build kernel's */
    cudaFuncAttributes attr;
    CHECK(cudaGetDevice(&device), "cudaGetDevice");
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    shape.kernel = pool.plan.limit_bytes ? build_kernel_parking : build_kernel; /* as make_params's can_park */
    shape.stats_kernel = pool.plan.limit_bytes ? build_kernel_parking_stats : build_kernel_stats;
    CHECK(cudaFuncGetAttributes(&attr, shape.kernel), "reading the build kernel's attributes");
    /* every block must be resident in both kernels (persistent warps) */
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shape.kernel, KDA_BUILD_WARPS_PER_BLOCK * 32, 0),
          "computing the build kernel's occupancy");
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&stats_per_sm, shape.stats_kernel, KDA_BUILD_WARPS_PER_BLOCK * 32, 0),
          "computing the warm-up build kernel's occupancy");
    if (stats_per_sm < per_sm) per_sm = stats_per_sm;
    shape.threads = KDA_BUILD_WARPS_PER_BLOCK * 32;
    shape.blocks = (uint32_t)(per_sm > 0 ? per_sm : 1) * (uint32_t)sms;
    b.warps = shape.blocks * KDA_BUILD_WARPS_PER_BLOCK;

    /* First guesses; an overflow grows the array and reruns the build. */
    b.node_capacity = (uint32_t)((8ull * n + 4096) < KDTREE_MAX_COUNT ? 8ull * n + 4096 : KDTREE_MAX_COUNT);
    {
        uint64_t refs = 24ull * n + (uint64_t)OUT_BATCH * shape.blocks * KDA_BUILD_WARPS_PER_BLOCK;
        b.refs_capacity = (uint32_t)(refs < UINT32_MAX ? refs : UINT32_MAX);
    }
    b.queue_capacity = pow2_at_least(opt->queue_capacity ? opt->queue_capacity : 65536 + n / 8);

    /* The warm-up build collects the statistics; grown arrays rerun it.
     * Built with -DKDA_DIAG, it also prints the allocator's walks. */
    for (int attempt = 0;; attempt++) {
        float ms;
#if defined(KDA_DIAG) && defined(KDA_ALLOC_HAS_WALK_STATS)
        CHECK(kda_walk_stats_reset(), "resetting the walk statistics");
#endif
        if (alloc_buffers(&b, n, err, errlen)) goto fail;
        int rc = run_build(g, &pool, &b, shape, 1, opt, &ms, &st, &grew, err, errlen);
        if (rc == GPU_BUILD_STALLED) return rc; /* freeing would wait for the stuck kernel */
        if (rc) goto fail;
        if (st.error.v == BUILD_OK) break;
        if (attempt + 1 >= MAX_ATTEMPTS || !grow_full_array(&b, st.error.v)) {
            describe_failure(&st, pool_bytes, &stats->pool_short, err, errlen);
            goto fail;
        }
    }
#if defined(KDA_DIAG) && defined(KDA_ALLOC_HAS_WALK_STATS)
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
    stats->pool_wrapped = traits.wraps && st.alloc_bytes > pool_bytes;
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
            if (builds_differ(&warm, &st, stats->pool_wrapped, err, errlen)) {
                if (stats->pool_wrapped) stats->pool_short = GPU_POOL_WRAPPED;
                goto fail;
            }
            r++;
        } else if (++attempt >= MAX_ATTEMPTS || !grow_full_array(&b, st.error.v)) {
            describe_failure(&st, pool_bytes, &stats->pool_short, err, errlen);
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
    if (grew.stuck) stats->pool_short = GPU_POOL_AT_LIMIT;
    if (stats->pool_short) { /* the pool it ran short with */
        stats->pool_bytes = pool.heap.bytes;
        stats->n_alloc = st.n_alloc;
    }
    free(times);
    free_buffers(&b);
    kda_pool_destroy(&pool);
    return -1;
}
