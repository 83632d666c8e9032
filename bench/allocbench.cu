/* allocbench.cu - the generic allocator tests of Vinkler & Havran (2015),
 * Sec. 6-8, on today's GPU, for the allocator compiled in:
 *
 *   ad         Alloc Dealloc: every warp allocates once and frees
 *              (payload 4 B .. 128 KiB)
 *   acd-size   Alloc Cycle Dealloc, 10 allocations per warp, then all freed
 *              (payload 4 B .. 128 KiB)
 *   acd-pool   the same with 4 B payloads for one pool size (--pool-bytes)
 *   acd-iters  10 .. 100 allocations per warp, 4 B payloads
 *   p          Probability: 10 kernel calls; a warp holding nothing allocates
 *              with p = 0.75, one holding a block frees it with p = 0.75;
 *              1 .. all blocks
 *   warps      100,000 warps, each allocating 1 KiB (then 8 KiB) once and
 *              freeing it
 *   regs       registers of a kernel doing one malloc and one free, plain and
 *              warp-coalesced (the paper's Table 1)
 *   frag       internal and external fragmentation after the AD test's
 *              allocations and frees, by a scan of the pool (CMalloc family)
 *              or of the page / slab table (ScatterAlloc, Halloc)
 * and the later literature's tests, every block live until a second kernel
 * frees it (survey.cu): live-warp, live-thread, mixed, exhaustion; and
 * examples/list_workload's GPU workload (list.cu): list.
 * FDGMalloc frees a warp's memory at the end of each AD and ACD kernel
 * (kda_warp_done, its paper's "end"); in P, blocks live across kernels and
 * its memory is given back by the pool's reset.
 *
 * As in the paper, lane 0 of each warp allocates (coalescing is measured by
 * `regs` only), requests are padded to 16 bytes, each time is the median of
 * 5 runs after a warm-up, measured with CUDA events around the kernel, and
 * the pool is reset (untimed) before every run.  The paper launched 120
 * blocks of 256 threads to fill a 15-SM GPU; here the block count is #SM x
 * the resident blocks per SM, which fills the GPU it runs on.
 * Output: CSV rows on stdout, a header first.  Built with -DKDA_DIAG in the
 * CUDA flags, `warps` also prints the circular allocators' walk statistics
 * (headers read per malloc, ...) on stderr; its times are then slowed by the
 * counting and are not comparable. */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdalloc/kdalloc.h"
#include "bench_util.cuh"
#include "stdout_status.h"
#include "survey.h"

#ifndef KDA_VERSION
#define KDA_VERSION "unknown"
#endif

#define THREADS 256
#define RUNS 5

static char err[512];


/* ---- kernels (lane 0 of each warp allocates) ---- */

static __device__ __forceinline__ uint32_t warp_id(void) { return (blockIdx.x * blockDim.x + threadIdx.x) >> 5; }

__global__ void ad_kernel(kda_heap h, uint32_t payload, unsigned long long *fails)
{
    if ((threadIdx.x & 31u) != 0) return;
    uint32_t *p = (uint32_t *)kda_malloc(&h, payload);
    if (!p) {
        atomicAdd(fails, 1ull);
        return;
    }
    p[0] = warp_id();
    kda_free(&h, p);
    kda_warp_done(&h); /* FDGMalloc's "end", as in its paper's tests */
}

#define ACD_MAX 100
__global__ void acd_kernel(kda_heap h, uint32_t payload, uint32_t iters, unsigned long long *fails)
{
    if ((threadIdx.x & 31u) != 0) return;
    void *held[ACD_MAX];
    for (uint32_t i = 0; i < iters; i++) {
        held[i] = kda_malloc(&h, payload);
        if (held[i]) *(uint32_t *)held[i] = i;
        else atomicAdd(fails, 1ull);
    }
    for (uint32_t i = 0; i < iters; i++) kda_free(&h, held[i]);
    kda_warp_done(&h);
}

__global__ void p_kernel(kda_heap h, void **held, uint32_t call, uint32_t payload, unsigned long long *fails)
{
    if ((threadIdx.x & 31u) != 0) return;
    uint32_t w = warp_id();
    float u = (float)(bench_hash32(w * 7919u + call * 104729u) >> 8) * (1.0f / 16777216.0f);
    if (u >= 0.75f) return;
    if (held[w]) {
        kda_free(&h, held[w]);
        held[w] = NULL;
    } else {
        held[w] = kda_malloc(&h, payload);
        if (!held[w]) atomicAdd(fails, 1ull);
    }
}

/* The fragmentation snapshot: allocations held until the next kernel. */
__global__ void hold_kernel(kda_heap h, void **held, uint32_t payload, unsigned long long *fails)
{
    if ((threadIdx.x & 31u) != 0) return;
    held[warp_id()] = kda_malloc(&h, payload);
    if (!held[warp_id()]) atomicAdd(fails, 1ull);
}

__global__ void release_kernel(kda_heap h, void **held)
{
    if ((threadIdx.x & 31u) == 0) kda_free(&h, held[warp_id()]);
}

/* Table 1: one malloc and one free, plain and warp-coalesced. */
__global__ void regs_plain(kda_heap h, uint32_t size, void **out)
{
    void *p = kda_malloc(&h, size);
    out[threadIdx.x] = p;
    kda_free(&h, p);
}

__global__ void regs_coalesced(kda_heap h, uint32_t size, void **out)
{
    void *p = kda_malloc_warp(&h, size, 0xffffffffu);
    out[threadIdx.x] = p;
    kda_free_warp(&h, p, 0xffffffffu);
}

/* ---- timing ---- */

typedef struct bench {
    kda_pool pool;
    uint32_t blocks; /* #SM x resident blocks per SM */
    unsigned long long *fails;
    cudaEvent_t e0, e1;
} bench;

static void reset_pool(bench *b)
{
    if (kda_pool_reset(&b->pool, err, sizeof err)) {
        fprintf(stderr, "kdalloc-allocbench: %s\n", err);
        exit(1);
    }
    CUDA(cudaMemset(b->fails, 0, sizeof *b->fails), "cudaMemset");
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef enum { RUN_AD, RUN_ACD, RUN_P } run_kind;

/* Median of RUNS timed runs after a warm-up; *fails of the last run. */
static float timed(bench *b, run_kind kind, uint32_t blocks, uint32_t payload, uint32_t iters,
                   unsigned long long *fails)
{
    float ms[RUNS];
    void **held = NULL;
    if (kind == RUN_P) CUDA(cudaMalloc(&held, (size_t)blocks * (THREADS / 32) * sizeof *held), "cudaMalloc");
    for (int r = -1; r < RUNS; r++) {
        reset_pool(b);
        if (held) CUDA(cudaMemset(held, 0, (size_t)blocks * (THREADS / 32) * sizeof *held), "cudaMemset");
        CUDA(cudaEventRecord(b->e0), "cudaEventRecord");
        if (kind == RUN_AD) ad_kernel<<<blocks, THREADS>>>(b->pool.heap, payload, b->fails);
        else if (kind == RUN_ACD) acd_kernel<<<blocks, THREADS>>>(b->pool.heap, payload, iters, b->fails);
        else
            for (uint32_t call = 0; call < iters; call++)
                p_kernel<<<blocks, THREADS>>>(b->pool.heap, held, call, payload, b->fails);
        CUDA(cudaGetLastError(), "launching a benchmark kernel");
        CUDA(cudaEventRecord(b->e1), "cudaEventRecord");
        CUDA(cudaEventSynchronize(b->e1), "running a benchmark kernel");
        if (r >= 0) CUDA(cudaEventElapsedTime(&ms[r], b->e0, b->e1), "cudaEventElapsedTime");
    }
    CUDA(cudaMemcpy(fails, b->fails, sizeof *fails, cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(held);
    qsort(ms, RUNS, sizeof ms[0], compare_float);
    return ms[RUNS / 2];
}

static void row(const char *test, const bench *b, uint32_t blocks, uint64_t warps, uint32_t payload, uint32_t iters,
                float ms, unsigned long long fails)
{
    printf("%s,%s,%u,%llu,%u,%u,%llu,%.4f,%llu\n", test, kda_allocator_name(), blocks, (unsigned long long)warps,
           payload, iters, (unsigned long long)b->pool.heap.bytes, ms, fails);
    fflush(stdout);
}

static const uint32_t payloads[] = {4, 16, 64, 256, 1024, 4096, 16384, 65536, 131072};
#define N_PAYLOADS (sizeof payloads / sizeof payloads[0])

static void test_ad(bench *b, const char *name, uint32_t iters)
{
    for (size_t i = 0; i < N_PAYLOADS; i++) {
        unsigned long long fails;
        float ms = timed(b, iters ? RUN_ACD : RUN_AD, b->blocks, payloads[i], iters, &fails);
        row(name, b, b->blocks, (uint64_t)b->blocks * 8, payloads[i], iters ? iters : 1, ms, fails);
    }
}

static void test_acd_iters(bench *b)
{
    for (uint32_t iters = 10; iters <= ACD_MAX; iters += 10) {
        unsigned long long fails;
        float ms = timed(b, RUN_ACD, b->blocks, 4, iters, &fails);
        row("acd-iters", b, b->blocks, (uint64_t)b->blocks * 8, 4, iters, ms, fails);
    }
}

static void test_p(bench *b)
{
    uint32_t steps[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        uint32_t blocks = steps[i] < b->blocks ? steps[i] : b->blocks;
        unsigned long long fails;
        float ms = timed(b, RUN_P, blocks, 4, 10, &fails);
        row("p", b, blocks, (uint64_t)blocks * 8, 4, 10, ms, fails);
        if (blocks == b->blocks) break;
    }
}

static void test_warps(bench *b)
{
    uint32_t blocks = 100000 / (THREADS / 32); /* 100,000 warps */
    uint32_t sizes[] = {1024, 8192};
    for (int i = 0; i < 2; i++) {
        unsigned long long fails;
        stats_reset();
        float ms = timed(b, RUN_AD, blocks, sizes[i], 1, &fails);
        stats_print("warps", sizes[i]);
        row("warps", b, blocks, (uint64_t)blocks * 8, sizes[i], 1, ms, fails);
    }
}

static void test_regs(void)
{
    cudaFuncAttributes plain, coalesced;
    CUDA(cudaFuncGetAttributes(&plain, regs_plain), "cudaFuncGetAttributes");
    CUDA(cudaFuncGetAttributes(&coalesced, regs_coalesced), "cudaFuncGetAttributes");
    printf("regs,%s,%d,%d\n", kda_allocator_name(), plain.numRegs, coalesced.numRegs);
}

#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
typedef struct frag_sum {
    double internal;
    uint64_t used;
    uint32_t request;
} frag_sum;

static void add_internal(void *ctx, uint32_t unit, uint32_t size_units, int used)
{
    frag_sum *f = (frag_sum *)ctx;
    (void)unit;
    if (!used) return;
    double size = (double)(size_units - 1) * KDA_UNIT; /* payload bytes */
    f->internal += (size - f->request) / size;
    f->used++;
}

static void scan_pool(const bench *b, unsigned char *copy, kda_scan *s, frag_sum *f)
{
    CUDA(cudaMemcpy(copy, b->pool.heap.base, b->pool.heap.bytes, cudaMemcpyDeviceToHost), "copying the pool");
    kda_scan_circular(copy, &b->pool.heap, s, add_internal, f);
}

static void test_frag(bench *b)
{
    void **held;
    uint64_t warps = (uint64_t)b->blocks * 8;
    unsigned char *copy = (unsigned char *)malloc(b->pool.heap.bytes);
    if (!copy) {
        fprintf(stderr, "kdalloc-allocbench: out of host memory for a pool copy\n");
        exit(1);
    }
    CUDA(cudaMalloc(&held, warps * sizeof *held), "cudaMalloc");
    for (size_t i = 0; i < N_PAYLOADS; i++) {
        reset_pool(b);
        hold_kernel<<<b->blocks, THREADS>>>(b->pool.heap, held, payloads[i], b->fails);
        CUDA(cudaDeviceSynchronize(), "running the allocation kernel");
        kda_scan s;
        frag_sum f = {0.0, 0, payloads[i]};
        scan_pool(b, copy, &s, &f);
        release_kernel<<<b->blocks, THREADS>>>(b->pool.heap, held);
        CUDA(cudaDeviceSynchronize(), "running the free kernel");
        kda_scan after;
        frag_sum unused = {0.0, 0, payloads[i]};
        scan_pool(b, copy, &after, &unused);
        double internal = f.used ? f.internal / (double)f.used : 0.0;
        double external = after.free_bytes ? 1.0 - (double)after.largest_free / (double)after.free_bytes : 0.0;
        printf("frag,%s,%u,%.6f,%.6f,%llu,%d\n", kda_allocator_name(), payloads[i], internal, external,
               (unsigned long long)after.chunks, s.well_formed && after.well_formed);
    }
    cudaFree(held);
    free(copy);
}
#elif defined(KDA_ALLOC_HAS_BLOCK_BYTES)
/* ScatterAlloc, Halloc, CountedBump: the same measures from a copy of their state.
 * Internal: of the blocks held, (bytes serving it - request) / bytes;
 * external, after the frees: 1 - the largest block one request could get
 * / the free bytes (kda_alloc_space).  "chunks" is the count of blocks
 * that the internal measure read. */
static void test_frag(bench *b)
{
    void **held;
    uint64_t warps = (uint64_t)b->blocks * 8;
    unsigned char *state = (unsigned char *)calloc(1, b->pool.plan.state_bytes);
    void **ptrs = (void **)malloc(warps * sizeof *ptrs);
    if (!state || !ptrs) {
        fprintf(stderr, "kdalloc-allocbench: out of host memory for a state copy\n");
        exit(1);
    }
    CUDA(cudaMalloc(&held, warps * sizeof *held), "cudaMalloc");
    for (size_t i = 0; i < N_PAYLOADS; i++) {
        reset_pool(b);
        hold_kernel<<<b->blocks, THREADS>>>(b->pool.heap, held, payloads[i], b->fails);
        CUDA(cudaGetLastError(), "launching the allocation kernel");
        CUDA(cudaDeviceSynchronize(), "running the allocation kernel");
        kda_heap view;
        bench_state_view(&b->pool, state, &view);
        CUDA(cudaMemcpy(ptrs, held, warps * sizeof *ptrs, cudaMemcpyDeviceToHost), "copying the blocks");
        double internal = 0.0;
        uint64_t counted = 0;
        for (uint64_t w = 0; w < warps; w++) {
            if (!ptrs[w]) continue;
            uint64_t bytes = kda_alloc_block_bytes(&view, (uint64_t)((unsigned char *)ptrs[w] - view.base));
            uint32_t padded = (payloads[i] + KDA_UNIT - 1) / KDA_UNIT * KDA_UNIT;
            if (!bytes || bytes < padded) continue;
            internal += (double)(bytes - payloads[i]) / (double)bytes;
            counted++;
        }
        release_kernel<<<b->blocks, THREADS>>>(b->pool.heap, held);
        CUDA(cudaGetLastError(), "launching the free kernel");
        CUDA(cudaDeviceSynchronize(), "running the free kernel");
        kda_space space = bench_space(&b->pool);
        double external = space.free_bytes ? 1.0 - (double)space.largest_block / (double)space.free_bytes : 0.0;
        printf("frag,%s,%u,%.6f,%.6f,%llu,%d\n", kda_allocator_name(), payloads[i],
               counted ? internal / (double)counted : 0.0, external, (unsigned long long)counted, 1);
    }
    cudaFree(held);
    free(ptrs);
    free(state);
}
#endif

/* The help, on stdout (--help). */
static void usage(void)
{
    fprintf(stdout,
            "usage: kdalloc-allocbench --test TEST [--pool-bytes N] [--header] [--requesters N] [--size S]\n"
            "                          [--seconds T]\n"
            "  the paper's tests:  ad acd-size acd-pool acd-iters p warps regs frag\n"
            "  the survey's tests: live-warp live-thread mixed exhaustion (bench/survey.cu);\n"
            "                      --requesters and --size pick one point of their sweep\n"
            "  list: examples/list_workload's GPU workload (bench/list.cu; --requesters: threads,\n"
            "        default 16384 and 100000; a pool of 4 GiB)\n"
            "  reuse: fill the pool, free all but one block in every K, allocate again; the share\n"
            "         of the freed bytes served again (bench/reuse.cu; --size: one block size)\n"
            "  soak: 10^8 random allocations and frees, every block pattern-checked, then the\n"
            "        allocator's state (or capacity) against a fresh pool's (--requesters: threads;\n"
            "        --seconds: stop sooner, default 600; the row says how many were reached)\n"
            "  --help: this help; --version: the version and the allocator compiled in\n");
    exit(stdout_status("kdalloc-allocbench", 0));
}

/* A usage error: one line naming it, and where the help is. */
static void usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "kdalloc-allocbench: %s%s%s%s (see kdalloc-allocbench --help)\n", what, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "");
    exit(2);
}

static int is_survey_test(const char *test)
{
    return !strcmp(test, "live-warp") || !strcmp(test, "live-thread") || !strcmp(test, "mixed") ||
           !strcmp(test, "exhaustion") || !strcmp(test, "soak") || !strcmp(test, "reuse") || !strcmp(test, "list");
}

static int is_paper_test(const char *test)
{
    static const char *const names[] = {"ad", "acd-size", "acd-pool", "acd-iters", "p", "warps", "regs", "frag"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(test, names[i])) return 1;
    return 0;
}

/* A positive number argument (digits only: "-1" or 10^30 do not wrap), or
 * a one-line error. */
static unsigned long long positive(const char *flag, const char *text, unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno == ERANGE || v == 0 || v > max) {
        fprintf(stderr, "kdalloc-allocbench: %s: '%s' is not a number from 1 to %llu\n", flag, text, max);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    const char *test = NULL;
    unsigned long long pool_bytes = 0, requesters = 0, size = 0, seconds = 0;
    int header = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* each row as it is measured, into a pipe too */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) usage();
        if (!strcmp(argv[i], "--version")) {
            printf("kdalloc-allocbench %s, allocator %s\n", KDA_VERSION, kda_allocator_name());
            return stdout_status("kdalloc-allocbench", 0);
        }
    }
    for (int i = 1; i < argc; i++) {
        int valued = !strcmp(argv[i], "--test") || !strcmp(argv[i], "--pool-bytes") ||
                     !strcmp(argv[i], "--requesters") || !strcmp(argv[i], "--size") || !strcmp(argv[i], "--seconds");
        if (valued && i + 1 == argc) usage_error("a value is missing after", argv[i]);
        if (!strcmp(argv[i], "--test")) test = argv[++i];
        else if (!strcmp(argv[i], "--pool-bytes")) {
            pool_bytes = positive("--pool-bytes", argv[++i], ~0ull);
            if (pool_bytes < 4096) {
                fprintf(stderr, "kdalloc-allocbench: --pool-bytes: at least 4096\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--requesters")) {
            requesters = positive("--requesters", argv[++i], 1u << 26);
        } else if (!strcmp(argv[i], "--size")) {
            size = positive("--size", argv[++i], 1u << 30);
        } else if (!strcmp(argv[i], "--seconds")) {
            seconds = positive("--seconds", argv[++i], 86400);
        } else if (!strcmp(argv[i], "--header")) header = 1;
        else usage_error("unknown argument", argv[i]);
    }
    if (!test) usage_error("no --test given", NULL);
    if (!is_survey_test(test) && !is_paper_test(test)) usage_error("unknown test", test);
    if (is_survey_test(test)) {
        /* all blocks live at once: 10^6 warps x 8 KiB is 8 GiB.  The tests that
         * fill the pool take 256 MiB (Halloc's minimum), or the allocator's
         * smallest pool where that is more (Gallatin's 1 GiB); the rows say
         * which. */
        int filling = !strcmp(test, "exhaustion") || !strcmp(test, "reuse");
        if (!pool_bytes) {
            pool_bytes = filling ? 256ull << 20 : !strcmp(test, "soak") || !strcmp(test, "list") ? 4ull << 30 : 16ull << 30;
            if (filling && pool_bytes < kda_allocator_min_pool()) pool_bytes = kda_allocator_min_pool();
        }
        if (!strcmp(test, "reuse") && size % 16) {
            fprintf(stderr, "kdalloc-allocbench: reuse: --size must be a multiple of 16\n");
            return 2;
        }
        if (size > pool_bytes) {
            fprintf(stderr, "kdalloc-allocbench: --size %llu is larger than the pool (%llu bytes)\n", size, pool_bytes);
            return 2;
        }
        if (header && !strcmp(test, "soak"))
            printf("test,allocator,threads,allocations,nulls,mismatches,misplaced,check,fresh,after,well_formed,ms\n");
        else if (header && !strcmp(test, "list"))
            printf("test,allocator,threads,rounds,allocations,failures,bad_blocks,ms,pool_bytes\n");
        else if (header && !strcmp(test, "reuse"))
            printf("test,allocator,size,k,refill_size,filled,served,mismatches,pool_bytes\n");
        else if (header && strcmp(test, "exhaustion"))
            printf("test,allocator,requesters,size,malloc_ms,free_ms,nulls,mismatches,pool_bytes\n");
        else if (header)
            printf("test,allocator,size,requests,second_round,share,mismatches,pool_bytes\n");
        kda_pool pool;
        if (kda_pool_create(&pool, pool_bytes, err, sizeof err)) {
            fprintf(stderr, "kdalloc-allocbench: %s\n", err);
            return 1;
        }
        if (!strcmp(test, "reuse")) reuse_run(&pool, (uint32_t)size);
        else if (!strcmp(test, "list")) list_run(&pool, (uint32_t)requesters);
        else survey_run(&pool, test, (uint32_t)requesters, (uint32_t)size, seconds ? (unsigned)seconds : 600);
        kda_pool_destroy(&pool);
        return 0;
    }
    if (requesters || size || seconds) /* names one of them given */
        usage_error(requesters ? "--requesters is for the survey's tests, not"
                    : size     ? "--size is for the survey's tests, not"
                               : "--seconds is for the survey's tests, not",
                    test);
    if (!pool_bytes) pool_bytes = 2ull << 30; /* the paper's 2 GB heap */
    if (header) printf("test,allocator,blocks,warps,payload,iterations,pool_bytes,ms,failures\n");
    if (!strcmp(test, "regs")) {
        test_regs();
        return 0;
    }
    bench b;
    memset(&b, 0, sizeof b);
    if (kda_pool_create(&b.pool, pool_bytes, err, sizeof err)) {
        fprintf(stderr, "kdalloc-allocbench: %s\n", err);
        return 1;
    }
    int device = 0, sms = 0, per_sm = 0;
    CUDA(cudaGetDevice(&device), "cudaGetDevice");
    CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, acd_kernel, THREADS, 0), "occupancy");
    b.blocks = (uint32_t)sms * (uint32_t)(per_sm > 0 ? per_sm : 1);
    CUDA(cudaMalloc(&b.fails, sizeof *b.fails), "cudaMalloc");
    CUDA(cudaEventCreate(&b.e0), "cudaEventCreate");
    CUDA(cudaEventCreate(&b.e1), "cudaEventCreate");
    if (!strcmp(test, "ad")) test_ad(&b, "ad", 0);
    else if (!strcmp(test, "acd-size")) test_ad(&b, "acd-size", 10);
    else if (!strcmp(test, "acd-pool")) {
        unsigned long long fails;
        float ms = timed(&b, RUN_ACD, b.blocks, 4, 10, &fails);
        row("acd-pool", &b, b.blocks, (uint64_t)b.blocks * 8, 4, 10, ms, fails);
    } else if (!strcmp(test, "acd-iters")) test_acd_iters(&b);
    else if (!strcmp(test, "p")) test_p(&b);
    else if (!strcmp(test, "warps")) test_warps(&b);
#if defined(KDA_ALLOC_HAS_CHUNK_LIST) || defined(KDA_ALLOC_HAS_BLOCK_BYTES)
    else if (!strcmp(test, "frag")) test_frag(&b);
#else
    else if (!strcmp(test, "frag")) /* no rows: bench/compare keeps it so */
        fprintf(stderr, "kdalloc-allocbench: frag: %s keeps no state to measure\n", kda_allocator_name());
#endif
    else { /* is_paper_test names a test this chain does not run */
        fprintf(stderr, "kdalloc-allocbench: %s: no such paper test in this program\n", test);
        kda_pool_destroy(&b.pool);
        return 1;
    }
    kda_pool_destroy(&b.pool);
    return 0;
}
