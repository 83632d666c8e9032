/* survey.cu - the allocator tests of the later literature (Winter et al.,
 * "Are dynamic memory managers on GPUs slow?", PPoPP 2021; McCoy & Pandey,
 * Gallatin, PPoPP 2024), for the allocator compiled in, beside the paper's
 * own tests in allocbench.cu.  Unlike those, every block stays live until
 * a second kernel frees it, and malloc and free are timed apart:
 *
 *   live-warp    N warps (10^4, 10^5, 10^6), lane 0 of each allocates S bytes
 *                (16 B .. 8 KiB, powers of 4 and 8 KiB)
 *   live-thread  N threads (10^4, 10^5, 10^6) each allocate S bytes
 *                themselves (uncoalesced; 16 B .. 1 KiB)
 *   mixed        10^6 threads, each a seeded random size of 16 B .. 4 KiB
 *   exhaustion   lane 0 of each warp allocates 1 KiB (then mixed sizes)
 *                until its first NULL; the share of the pool handed out;
 *                everything checked and freed; then the same again, which
 *                must succeed as often (nothing leaked, nothing overlaps)
 *
 * A run: the pool is reset (untimed), the malloc kernel (timed), an untimed
 * kernel writes a pattern into every byte of every block and another reads
 * it back and counts mismatches, then the free kernel (timed, and, for
 * FDGMalloc, its warps' "end").  Times are medians of 5 runs after a
 * warm-up.  NULLs and mismatches are printed with each row and the sweep
 * goes on.  Rows (CSV on stdout):
 *   live-*, mixed: test,allocator,requesters,size,malloc_ms,free_ms,nulls,mismatches,pool_bytes
 *   exhaustion:    test,allocator,size,requests,second_round,share,mismatches,pool_bytes
 * (size 0: mixed sizes). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kdalloc/kdalloc.h"
#include "bench_util.cuh"
#include "survey.h"

#define RUNS 5
#define THREADS 256
#define MIXED_MAX 4096u


/* ---- device side ---- */

/* Requester r's size: `size`, or (size 0) a seeded random one of 16 B .. 4 KiB. */
static __device__ uint32_t sv_size(uint32_t size, uint32_t r)
{
    if (size) return size;
    uint32_t x = r * 0x9E3779B1u + 0x632BE5ABu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return 16 + x % (MIXED_MAX - 15);
}

static __device__ uint64_t sv_global_thread(void) { return blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; }

/* One requester per warp (its lane 0), or per thread. */
__global__ void sv_malloc(kda_heap h, uint32_t n, uint32_t size, int per_warp, void **ptrs)
{
    uint64_t t = sv_global_thread();
    uint64_t r = per_warp ? t / 32 : t;
    if (r >= n || (per_warp && (t & 31u))) return;
    ptrs[r] = kda_malloc(&h, sv_size(size, (uint32_t)r));
}

__global__ void sv_free(kda_heap h, uint32_t n, int per_warp, void **ptrs)
{
    uint64_t t = sv_global_thread();
    uint64_t r = per_warp ? t / 32 : t;
    if (r < n && (!per_warp || !(t & 31u))) kda_free(&h, ptrs[r]);
    kda_warp_done(&h); /* FDGMalloc's "end" for the warp */
}

/* Each warp writes (check = 0) or checks every byte of requesters' blocks. */
__global__ void sv_pattern(uint32_t n, uint32_t size, void *const *ptrs, int check, unsigned long long *bad,
                           unsigned long long *nulls)
{
    uint32_t lane = threadIdx.x & 31u;
    uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
    unsigned long long wrong = 0, missing = 0;
    for (uint64_t r = sv_global_thread() / 32; r < n; r += warps) {
        unsigned char *p = (unsigned char *)ptrs[r];
        if (!p) {
            missing += lane == 0;
            continue;
        }
        uint32_t bytes = sv_size(size, (uint32_t)r);
        for (uint32_t i = lane; i < bytes; i += 32) {
            unsigned char want = (unsigned char)bench_hash32((uint32_t)r * 8191u + i);
            if (check) wrong += p[i] != want;
            else p[i] = want;
        }
    }
    if (check && (wrong || missing)) {
        atomicAdd(bad, wrong);
        atomicAdd(nulls, missing);
    }
}

/* Exhaustion: lane 0 of each warp allocates until its first NULL (or until
 * the list is full), appending to the list. */
__global__ void sv_exhaust(kda_heap h, uint32_t size, void **list, uint32_t *sizes, unsigned long long capacity,
                           unsigned long long *count)
{
    if (threadIdx.x & 31u) return;
    uint32_t w = (uint32_t)(sv_global_thread() / 32);
    for (uint32_t k = 0;; k++) {
        uint32_t bytes = sv_size(size, w * 7919u + k);
        void *p = kda_malloc(&h, bytes);
        if (!p) return;
        unsigned long long at = atomicAdd(count, 1ull);
        if (at >= capacity) { /* AWMalloc never says NULL: the list ends the test */
            kda_free(&h, p);
            return;
        }
        list[at] = p;
        sizes[at] = bytes;
    }
}

/* Writes or checks a list of blocks with their own sizes. */
__global__ void sv_list_pattern(unsigned long long n, void *const *list, const uint32_t *sizes, int check,
                                unsigned long long *bad)
{
    uint32_t lane = threadIdx.x & 31u;
    uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
    unsigned long long wrong = 0;
    for (uint64_t r = sv_global_thread() / 32; r < n; r += warps) {
        unsigned char *p = (unsigned char *)list[r];
        for (uint32_t i = lane; i < sizes[r]; i += 32) {
            unsigned char want = (unsigned char)bench_hash32((uint32_t)r * 131u + i);
            if (check) wrong += p[i] != want;
            else p[i] = want;
        }
    }
    if (wrong) atomicAdd(bad, wrong);
}

__global__ void sv_list_free(kda_heap h, unsigned long long n, void *const *list)
{
    for (uint64_t r = sv_global_thread(); r < n; r += (uint64_t)gridDim.x * blockDim.x) kda_free(&h, list[r]);
}

__global__ void sv_warps_done(kda_heap h) { kda_warp_done(&h); }

/* The soak: each thread holds up to SOAK_LIVE blocks and, `iters`
 * times, frees a random one after checking its pattern, or allocates a
 * random size (16 B .. 2 KiB; one in 64: 2 .. 16 KiB) and fills it with its
 * own pattern.  Counts: allocations, NULLs, mismatched words, and blocks
 * misaligned or outside the pool. */
#define SOAK_LIVE 4
/* Checks and frees one held block. */
static __device__ void sv_soak_free(kda_heap *h, uint32_t *block, uint32_t words, uint32_t key, unsigned long long *bad)
{
    for (uint32_t i = 0; i < words; i++) *bad += block[i] != (key ^ i);
    kda_free(h, block);
}

__global__ void sv_soak(kda_heap h, uint32_t iters, uint32_t seed, unsigned long long *counts)
{
    uint32_t t = (uint32_t)sv_global_thread();
    uint32_t *held[SOAK_LIVE] = {NULL}, words[SOAK_LIVE] = {0}, key[SOAK_LIVE] = {0};
    unsigned long long allocs = 0, nulls = 0, bad = 0, misplaced = 0;
    for (uint32_t it = 0; it < iters; it++) {
        uint32_t r = bench_hash32(seed ^ bench_hash32(t * 0x9E3779B1u + it)), k = r % SOAK_LIVE;
        if (held[k]) { /* a random lifetime ends */
            sv_soak_free(&h, held[k], words[k], key[k], &bad);
            held[k] = NULL;
            continue;
        }
        uint32_t bytes = (r >> 8) % 64 ? 16 + (r >> 14) % 2033 : 2048 + (r >> 14) % 14337;
        unsigned char *q = (unsigned char *)kda_malloc(&h, bytes);
        allocs++;
        if (!q) {
            nulls++;
            continue;
        }
        misplaced += (uintptr_t)q % KDA_UNIT != 0 || (KDA_ALLOC_IN_POOL && (q < h.base || q + bytes > h.base + h.bytes));
        held[k] = (uint32_t *)q;
        words[k] = bytes / 4;
        key[k] = bench_hash32(r + t);
        for (uint32_t i = 0; i < words[k]; i++) held[k][i] = key[k] ^ i;
    }
    for (uint32_t k = 0; k < SOAK_LIVE; k++)
        if (held[k]) sv_soak_free(&h, held[k], words[k], key[k], &bad);
    kda_warp_done(&h);
    atomicAdd(counts, allocs);
    atomicAdd(counts + 1, nulls);
    atomicAdd(counts + 2, bad);
    atomicAdd(counts + 3, misplaced);
}

/* ---- host side ---- */

typedef struct survey {
    kda_pool *pool;
    unsigned long long *counters; /* bad, nulls, count */
    cudaEvent_t e[4]; /* around the malloc kernel, around the free kernel */
    unsigned blocks_full; /* a grid that fills the GPU, for the pattern kernels */
} survey;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void reset(survey *s)
{
    char err[256];
    if (kda_pool_reset(s->pool, err, sizeof err)) {
        fprintf(stderr, "kdalloc-allocbench: %s\n", err);
        exit(1);
    }
    CUDA(cudaMemset(s->counters, 0, 3 * sizeof *s->counters), "cudaMemset");
}

/* One live test: n requesters of `size` (0: mixed), per warp or per thread. */
static void live(survey *s, const char *test, uint32_t n, uint32_t size, int per_warp)
{
    void **ptrs;
    CUDA(cudaMalloc(&ptrs, (size_t)n * sizeof *ptrs), "allocating the pointers");
    uint64_t threads = per_warp ? (uint64_t)n * 32 : n;
    unsigned grid = (unsigned)((threads + THREADS - 1) / THREADS);
    float malloc_ms[RUNS], free_ms[RUNS];
    unsigned long long bad = 0, nulls = 0, counters[2];
    for (int run = -1; run < RUNS; run++) {
        reset(s);
        CUDA(cudaMemset(ptrs, 0, (size_t)n * sizeof *ptrs), "cudaMemset");
        if (run == RUNS - 1) stats_reset(); /* -DKDA_DIAG: the walks of the last run */
        CUDA(cudaEventRecord(s->e[0]), "cudaEventRecord");
        sv_malloc<<<grid, THREADS>>>(s->pool->heap, n, size, per_warp, ptrs);
        CUDA(cudaGetLastError(), "launching the malloc kernel");
        CUDA(cudaEventRecord(s->e[1]), "cudaEventRecord");
        sv_pattern<<<s->blocks_full, THREADS>>>(n, size, ptrs, 0, s->counters, s->counters + 1);
        CUDA(cudaGetLastError(), "launching the write kernel");
        sv_pattern<<<s->blocks_full, THREADS>>>(n, size, ptrs, 1, s->counters, s->counters + 1);
        CUDA(cudaGetLastError(), "launching the check kernel");
        CUDA(cudaEventRecord(s->e[2]), "cudaEventRecord");
        sv_free<<<grid, THREADS>>>(s->pool->heap, n, per_warp, ptrs);
        CUDA(cudaGetLastError(), "launching the free kernel");
        CUDA(cudaEventRecord(s->e[3]), "cudaEventRecord");
        CUDA(cudaEventSynchronize(s->e[3]), "running the malloc, check and free kernels");
        CUDA(cudaMemcpy(counters, s->counters, sizeof counters, cudaMemcpyDeviceToHost), "cudaMemcpy");
        if (run < 0) continue;
        CUDA(cudaEventElapsedTime(&malloc_ms[run], s->e[0], s->e[1]), "cudaEventElapsedTime");
        CUDA(cudaEventElapsedTime(&free_ms[run], s->e[2], s->e[3]), "cudaEventElapsedTime");
        bad += counters[0];
        nulls = counters[1] > nulls ? counters[1] : nulls;
    }
    stats_print(test, size);
    cudaFree(ptrs);
    qsort(malloc_ms, RUNS, sizeof *malloc_ms, cmp_float);
    qsort(free_ms, RUNS, sizeof *free_ms, cmp_float);
    printf("%s,%s,%u,%u,%.4f,%.4f,%llu,%llu,%llu\n", test, kda_allocator_name(), n, size, malloc_ms[RUNS / 2],
           free_ms[RUNS / 2], nulls, bad, (unsigned long long)s->pool->heap.bytes);
    fflush(stdout);
}

/* One exhaustion round: how many requests succeeded, their bytes, and
 * mismatches after writing and checking them all; then frees them. */
static unsigned long long exhaust_round(survey *s, uint32_t size, void **list, uint32_t *sizes,
                                        unsigned long long capacity, uint64_t *bytes, unsigned long long *bad)
{
    unsigned long long c[3];
    CUDA(cudaMemset(s->counters, 0, 3 * sizeof *s->counters), "cudaMemset");
    sv_exhaust<<<s->blocks_full, THREADS>>>(s->pool->heap, size, list, sizes, capacity, s->counters + 2);
    CUDA(cudaGetLastError(), "launching the exhaustion kernel");
    CUDA(cudaDeviceSynchronize(), "running the exhaustion kernel");
    CUDA(cudaMemcpy(c, s->counters, sizeof c, cudaMemcpyDeviceToHost), "cudaMemcpy");
    unsigned long long n = c[2] < capacity ? c[2] : capacity;
    sv_list_pattern<<<s->blocks_full, THREADS>>>(n, list, sizes, 0, s->counters);
    sv_list_pattern<<<s->blocks_full, THREADS>>>(n, list, sizes, 1, s->counters);
    CUDA(cudaGetLastError(), "launching the pattern kernels");
    uint32_t *host_sizes = (uint32_t *)malloc(n ? n * sizeof *host_sizes : 1);
    if (!host_sizes) bench_die("out of host memory", cudaErrorMemoryAllocation);
    CUDA(cudaMemcpy(host_sizes, sizes, n * sizeof *host_sizes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    *bytes = 0;
    for (unsigned long long i = 0; i < n; i++) *bytes += host_sizes[i];
    free(host_sizes);
    CUDA(cudaMemcpy(c, s->counters, sizeof c, cudaMemcpyDeviceToHost), "cudaMemcpy");
    *bad += c[0];
    if (n) sv_list_free<<<s->blocks_full, THREADS>>>(s->pool->heap, n, list);
    sv_warps_done<<<s->blocks_full, THREADS>>>(s->pool->heap);
    CUDA(cudaGetLastError(), "launching the free kernel");
    CUDA(cudaDeviceSynchronize(), "freeing the blocks");
    return n;
}

static void exhaustion(survey *s, uint32_t size)
{
    unsigned long long capacity = s->pool->heap.bytes / 16 + 1;
    void **list;
    uint32_t *sizes;
    CUDA(cudaMalloc(&list, capacity * sizeof *list), "allocating the block list");
    CUDA(cudaMalloc(&sizes, capacity * sizeof *sizes), "allocating the block list");
    reset(s);
    uint64_t bytes, again_bytes;
    unsigned long long bad = 0;
    unsigned long long first = exhaust_round(s, size, list, sizes, capacity, &bytes, &bad);
    unsigned long long second = exhaust_round(s, size, list, sizes, capacity, &again_bytes, &bad);
    printf("exhaustion,%s,%u,%llu,%llu,%.4f,%llu,%llu\n", kda_allocator_name(), size, first, second,
           (double)bytes / (double)s->pool->heap.bytes, bad, (unsigned long long)s->pool->heap.bytes);
    fflush(stdout);
    cudaFree(list);
    cudaFree(sizes);
}

/* The soak's last check: that the allocator lost no block.  It reads the
 * allocator's own state where it can: the circular allocators' chunk list,
 * walked in a copy of the pool (the payload bytes in used chunks: 0 when
 * every block came back, and the list must be well formed); the free bytes
 * that ScatterAlloc, Halloc and CountedBump report from a copy of their
 * state.  For CUDA's malloc, whose state is hidden, the pool's capacity for
 * 16 KiB blocks.  The soak prints the measure's name, and its value on the
 * fresh pool and after the soak. */
#if defined(KDA_ALLOC_HAS_CHUNK_LIST)
#define SOAK_CHECK "used bytes in the chunk list"
static unsigned long long soak_check(survey *s, int *well_formed)
{
    const kda_heap *h = &s->pool->heap;
    unsigned char *copy = (unsigned char *)malloc(h->bytes);
    if (!copy) bench_die("out of host memory for a copy of the pool", cudaErrorMemoryAllocation);
    CUDA(cudaMemcpy(copy, h->base, h->bytes, cudaMemcpyDeviceToHost), "copying the pool");
    kda_scan scan;
    kda_scan_circular(copy, h, &scan, NULL, NULL);
    free(copy);
    *well_formed = scan.well_formed;
    return scan.used_bytes;
}
#elif defined(KDA_ALLOC_HAS_BLOCK_BYTES)
#define SOAK_CHECK "free bytes in the state"
static unsigned long long soak_check(survey *s, int *well_formed)
{
    *well_formed = 1;
    return bench_space(s->pool).free_bytes;
}
#else
#define SOAK_CHECK "16 KiB blocks the pool holds"
static unsigned long long soak_check(survey *s, int *well_formed)
{
    unsigned long long capacity = s->pool->heap.bytes / 16384 + 1, bad = 0;
    void **list;
    uint32_t *sizes;
    uint64_t bytes;
    CUDA(cudaMalloc(&list, capacity * sizeof *list), "allocating the block list");
    CUDA(cudaMalloc(&sizes, capacity * sizeof *sizes), "allocating the block list");
    unsigned long long n = exhaust_round(s, 16384, list, sizes, capacity, &bytes, &bad);
    cudaFree(list);
    cudaFree(sizes);
    *well_formed = bad == 0;
    return n;
}
#endif

/* The soak: launches of sv_soak, `iters` steps per thread each, until at
 * least `target` allocations or `seconds` have passed (the row says how many
 * were reached), between two soak_checks.  One CSV row. */
static void soak(survey *s, uint32_t threads, unsigned long long target, unsigned seconds)
{
    if (!KDA_ALLOC_FREES) {
        printf("soak,%s,skipped: it frees no single blocks\n", kda_allocator_name());
        return;
    }
    const uint32_t iters = 32;
    unsigned long long *counts, c[4], total[4] = {0};
    CUDA(cudaMalloc(&counts, sizeof c), "cudaMalloc");
    reset(s);
    int fresh_ok, after_ok;
    unsigned long long fresh = soak_check(s, &fresh_ok);
    time_t start = time(NULL);
    cudaEventRecord(s->e[0]);
    for (uint32_t seed = 1; total[0] < target && difftime(time(NULL), start) < seconds; seed++) {
        CUDA(cudaMemset(counts, 0, sizeof c), "cudaMemset");
        sv_soak<<<(threads + THREADS - 1) / THREADS, THREADS>>>(s->pool->heap, iters, seed, counts);
        CUDA(cudaGetLastError(), "launching the soak kernel");
        CUDA(cudaMemcpy(c, counts, sizeof c, cudaMemcpyDeviceToHost), "running the soak kernel");
        for (int i = 0; i < 4; i++) total[i] += c[i];
    }
    cudaEventRecord(s->e[1]);
    cudaEventSynchronize(s->e[1]);
    float ms = 0;
    cudaEventElapsedTime(&ms, s->e[0], s->e[1]);
    unsigned long long after = soak_check(s, &after_ok);
    printf("soak,%s,%u,%llu,%llu,%llu,%llu,%s,%llu,%llu,%s,%.1f\n", kda_allocator_name(), threads, total[0],
           total[1], total[2], total[3], SOAK_CHECK, fresh, after, fresh_ok && after_ok ? "yes" : "no", ms);
    fflush(stdout);
    cudaFree(counts);
}

int survey_run(kda_pool *pool, const char *test, uint32_t requesters, uint32_t size, unsigned seconds)
{
    static const uint32_t counts[] = {10000, 100000, 1000000};
    static const uint32_t warp_sizes[] = {16, 64, 256, 1024, 4096, 8192};
    static const uint32_t thread_sizes[] = {16, 64, 256, 1024};
    int per_warp = !strcmp(test, "live-warp");
    int live_test = per_warp || !strcmp(test, "live-thread");
    if (!live_test && strcmp(test, "mixed") && strcmp(test, "exhaustion") && strcmp(test, "soak")) return -1;
    survey s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    CUDA(cudaMalloc(&s.counters, 3 * sizeof *s.counters), "cudaMalloc");
    for (int i = 0; i < 4; i++) CUDA(cudaEventCreate(&s.e[i]), "cudaEventCreate");
    int device = 0, sms = 0;
    CUDA(cudaGetDevice(&device), "cudaGetDevice");
    CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    s.blocks_full = (unsigned)sms * 8;
    if (live_test) { /* the sweep, or the one count and size asked for */
        const uint32_t *sizes = per_warp ? warp_sizes : thread_sizes;
        size_t n_counts = requesters ? 1 : 3, n_sizes = size ? 1 : per_warp ? 6 : 4;
        for (size_t c = 0; c < n_counts; c++)
            for (size_t k = 0; k < n_sizes; k++)
                live(&s, test, requesters ? requesters : counts[c], size ? size : sizes[k], per_warp);
    } else if (!strcmp(test, "soak")) {
        soak(&s, requesters ? requesters : s.blocks_full / 2 * THREADS, 100000000ull, seconds);
    } else if (!strcmp(test, "mixed")) {
        live(&s, test, requesters ? requesters : 1000000, 0, 0);
    } else {
        exhaustion(&s, size ? size : 1024);
        if (!size) exhaustion(&s, 0); /* mixed sizes */
    }
    for (int i = 0; i < 4; i++) cudaEventDestroy(s.e[i]);
    cudaFree(s.counters);
    return 0;
}
