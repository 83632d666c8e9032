/* heapfault.cu - kdalloc-heapfault: CUDA's device heap alone (malloc and
 * free in kernels, no kdalloc code), in the reuse test's pattern, to show
 * that the reuse test's GPU errors on CudaMalloc and FDGMalloc are the
 * heap's (docs/experiments/allocators.md, "The reuse test's GPU errors").
 *
 *   kdalloc-heapfault [ROUNDS]      (1 to 1000, default 3; a round is 24 cases)
 *
 * A case, on a 256 MiB heap (the reuse test's pool):
 *   fill     lane 0 of each warp mallocs S bytes until its first NULL
 *            (the addresses, sorted on the host, must not overlap)
 *   thin     a pattern into every block; every block but one in K freed
 *   refill   blocks of S2 bytes until NULL or as many bytes as were freed
 *            (the live blocks' addresses must not overlap)
 *   check    patterns into the new blocks, then every live block checked
 *   free     everything
 * for S in 1 KiB, 2 KiB, 512 B; K in 2, 4, 16, 64; S2 = S and 64 B.
 * Every block is written only within its S bytes and each listed block is
 * freed once, yet on an H200 with driver 580.159 and CUDA 13.0 a free ends
 * now and then (results/h200/notes.md counts the runs) in "unspecified
 * launch failure"; under memcheck one run reported "Device-side double
 * free" in the thinning: malloc had handed out a live block twice.
 *
 * Prints a line per case; exits 1 at the first CUDA error (naming the step
 * and the case on stderr) or where host memory runs out, 2 on a bad
 * argument, 3 where live blocks overlapped or a block's pattern was broken
 * (a block handed out twice), 0 when every round passed. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stdout_status.h"

#define HEAP_BYTES (256ull << 20)
#define THREADS 256

typedef struct hf_case {
    unsigned size, k, refill;
    int round;
} hf_case;

/* A CUDA error ends the program: the step, and the case where one runs
 * (size 0 before the first). */
static void hf_check(cudaError_t e, const char *step, const hf_case *c)
{
    if (e == cudaSuccess) return;
    fflush(stdout);
    if (c->size)
        fprintf(stderr, "kdalloc-heapfault: %s: %s (S %u K %u S2 %u round %d)\n", step, cudaGetErrorString(e),
                c->size, c->k, c->refill, c->round);
    else
        fprintf(stderr, "kdalloc-heapfault: %s: %s\n", step, cudaGetErrorString(e));
    exit(1);
}

/* Lane 0 of each warp: blocks of `size` until NULL or `cap` in the list. */
__global__ void hf_fill(unsigned size, void **list, unsigned long long cap, unsigned long long *count)
{
    if (threadIdx.x & 31u) return;
    for (;;) {
        void *p = malloc(size);
        if (!p) return;
        unsigned long long at = atomicAdd(count, 1ull);
        if (at >= cap) {
            free(p);
            return;
        }
        list[at] = p;
    }
}

/* Writes (check 0) or checks a pattern over whole blocks, a warp a block;
 * kept_only: only the blocks r with r % k == 0. */
__global__ void hf_pattern(unsigned long long n, void *const *list, unsigned size, unsigned seed, unsigned k,
                           int kept_only, int check, unsigned long long *bad)
{
    unsigned lane = threadIdx.x & 31u;
    unsigned long long warps = (unsigned long long)gridDim.x * blockDim.x / 32;
    for (unsigned long long r = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
        if (kept_only && r % k) continue;
        unsigned *p = (unsigned *)list[r];
        for (unsigned i = lane; i < size / 4; i += 32) {
            unsigned want = seed * 2654435761u ^ (unsigned)r * 40503u ^ i;
            if (!check) p[i] = want;
            else if (p[i] != want) atomicAdd(bad, 1ull);
        }
    }
}

/* Frees every block (k 0), the kept ones (r % k == 0: kept) or the others. */
__global__ void hf_free(unsigned long long n, void *const *list, unsigned k, int kept)
{
    for (unsigned long long r = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; r < n;
         r += (unsigned long long)gridDim.x * blockDim.x)
        if (k == 0 || (kept ? r % k == 0 : r % k != 0)) free(list[r]);
}

typedef struct hf_block {
    uintptr_t at;
    unsigned size;
} hf_block;

static int hf_by_address(const void *a, const void *b)
{
    uintptr_t x = ((const hf_block *)a)->at, y = ((const hf_block *)b)->at;
    return x < y ? -1 : x > y;
}

/* Live blocks that overlap another, found on the host: the n blocks of
 * `list` (size bytes each; with k, only those r with r % k == 0, the kept
 * ones) and the m of `more` (more_size each), sorted by address, each
 * checked against the next.  Any overlap is a live block handed out twice. */
static unsigned long long hf_overlaps(void *const *list, unsigned long long n, unsigned size, unsigned k,
                                      void *const *more, unsigned long long m, unsigned more_size, const hf_case *c)
{
    if (n + m == 0) return 0;
    void **host = (void **)malloc((size_t)(n + m) * sizeof *host);
    hf_block *b = (hf_block *)malloc((size_t)(n + m) * sizeof *b);
    if (!host || !b) {
        fprintf(stderr, "kdalloc-heapfault: out of host memory for %llu addresses\n", n + m);
        exit(1);
    }
    hf_check(cudaMemcpy(host, list, (size_t)n * sizeof *host, cudaMemcpyDeviceToHost), "reading the list", c);
    if (m) hf_check(cudaMemcpy(host + n, more, (size_t)m * sizeof *host, cudaMemcpyDeviceToHost), "reading the list", c);
    unsigned long long live = 0, overlaps = 0;
    for (unsigned long long r = 0; r < n + m; r++)
        if (r >= n || k == 0 || r % k == 0) {
            b[live].at = (uintptr_t)host[r];
            b[live++].size = r < n ? size : more_size;
        }
    qsort(b, (size_t)live, sizeof *b, hf_by_address);
    for (unsigned long long i = 0; i + 1 < live; i++) overlaps += b[i].at + b[i].size > b[i + 1].at;
    free(host);
    free(b);
    return overlaps;
}

static unsigned long long hf_read(const unsigned long long *d, const hf_case *c)
{
    unsigned long long v;
    hf_check(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost), "reading a counter", c);
    return v;
}

/* One case; returns the mismatches it found. */
static unsigned long long hf_run(const hf_case *c, unsigned blocks, void **first, void **again,
                                 unsigned long long *counters)
{
    unsigned long long cap = HEAP_BYTES / c->size;
    hf_check(cudaMemset(counters, 0, 2 * sizeof *counters), "cudaMemset", c);
    hf_fill<<<blocks, THREADS>>>(c->size, first, cap, counters);
    hf_check(cudaGetLastError(), "launching the fill", c);
    hf_check(cudaDeviceSynchronize(), "fill", c);
    unsigned long long n = hf_read(counters, c);
    if (n > cap) n = cap;
    unsigned long long twice = hf_overlaps(first, n, c->size, 0, NULL, 0, 0, c);
    hf_pattern<<<blocks, THREADS>>>(n, first, c->size, 1, c->k, 0, 0, counters + 1);
    hf_free<<<blocks, THREADS>>>(n, first, c->k, 0);
    hf_check(cudaGetLastError(), "launching the thinning", c);
    hf_check(cudaDeviceSynchronize(), "thin", c);
    unsigned long long most = (n - (n + c->k - 1) / c->k) * c->size / c->refill;
    hf_check(cudaMemset(counters, 0, sizeof *counters), "cudaMemset", c);
    hf_fill<<<blocks, THREADS>>>(c->refill, again, most, counters);
    hf_check(cudaGetLastError(), "launching the refill", c);
    hf_check(cudaDeviceSynchronize(), "refill", c);
    unsigned long long m = hf_read(counters, c);
    if (m > most) m = most;
    twice += hf_overlaps(first, n, c->size, c->k, again, m, c->refill, c);
    hf_pattern<<<blocks, THREADS>>>(m, again, c->refill, 2, 1, 0, 0, counters + 1);
    hf_pattern<<<blocks, THREADS>>>(n, first, c->size, 1, c->k, 1, 1, counters + 1);
    hf_pattern<<<blocks, THREADS>>>(m, again, c->refill, 2, 1, 0, 1, counters + 1);
    hf_check(cudaGetLastError(), "launching the checks", c);
    hf_check(cudaDeviceSynchronize(), "check", c);
    hf_free<<<blocks, THREADS>>>(n, first, c->k, 1);
    hf_free<<<blocks, THREADS>>>(m, again, 0, 0);
    hf_check(cudaGetLastError(), "launching the frees", c);
    hf_check(cudaDeviceSynchronize(), "free", c);
    unsigned long long bad = hf_read(counters + 1, c);
    printf("%s S %u K %u S2 %u round %d: %llu blocks, %llu again, %llu mismatches, %llu overlaps\n",
           bad || twice ? "MISMATCH" : "ok", c->size, c->k, c->refill, c->round, n, m, bad, twice);
    fflush(stdout);
    return bad + twice;
}

/* ROUNDS from the command line: 1 .. 1000, or -1 where it is none. */
static int hf_rounds(const char *arg)
{
    char *end;
    long v = strtol(arg, &end, 10);
    return *arg >= '0' && *arg <= '9' && !*end && v >= 1 && v <= 1000 ? (int)v : -1;
}

int main(int argc, char **argv)
{
    static const unsigned sizes[] = {1024, 2048, 512}, ks[] = {2, 4, 16, 64};
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: kdalloc-heapfault [ROUNDS]\n\n"
               "CUDA's device malloc and free alone (a 256 MiB heap), in the reuse test's pattern:\n"
               "fill, free all blocks but one in K, refill, check, free; 24 cases a round.  Prints a\n"
               "line per case; exits 1 at the first CUDA error, 2 on a bad argument, 3 where live\n"
               "blocks overlap or a pattern mismatches.  Needs a CUDA GPU (docs/experiments/allocators.md).\n\n"
               "  ROUNDS              rounds to run, 1 to 1000 (default 3)\n"
               "  -h, --help          this help\n"
               "  --version           print the version\n");
        return stdout_status("kdalloc-heapfault", 0);
    }
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("kdalloc-heapfault %s\n", KDA_VERSION);
        return stdout_status("kdalloc-heapfault", 0);
    }
    int rounds = argc > 1 ? hf_rounds(argv[1]) : 3;
    if (argc > 2) {
        fprintf(stderr, "kdalloc-heapfault: one argument at most, got %d (see kdalloc-heapfault --help)\n", argc - 1);
        return 2;
    }
    if (rounds < 0) {
        fprintf(stderr, "kdalloc-heapfault: '%s' is not a number of rounds from 1 to 1000 (see kdalloc-heapfault --help)\n",
                argv[1]);
        return 2;
    }
    hf_case c = {0, 0, 0, 0};
    int device = 0, sms = 0, count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "kdalloc-heapfault: no usable CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "the CUDA driver found no GPU");
        return 1;
    }
    hf_check(cudaDeviceSetLimit(cudaLimitMallocHeapSize, HEAP_BYTES), "sizing the device heap", &c);
    hf_check(cudaGetDevice(&device), "cudaGetDevice", &c);
    hf_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count", &c);
    void **first, **again;
    unsigned long long *counters, bad = 0;
    hf_check(cudaMalloc((void **)&first, HEAP_BYTES / 16 * sizeof *first), "allocating the lists", &c);
    hf_check(cudaMalloc((void **)&again, HEAP_BYTES / 16 * sizeof *again), "allocating the lists", &c);
    hf_check(cudaMalloc((void **)&counters, 2 * sizeof *counters), "allocating the counters", &c);
    for (int round = 0; round < rounds; round++)
        for (unsigned s = 0; s < 3; s++)
            for (unsigned j = 0; j < 4; j++)
                for (int other = 0; other < 2; other++) {
                    c.round = round, c.size = sizes[s], c.k = ks[j], c.refill = other ? 64 : sizes[s];
                    bad += hf_run(&c, (unsigned)sms * 8, first, again, counters);
                }
    cudaFree(first);
    cudaFree(again);
    cudaFree(counters);
    return bad ? 3 : 0;
}
