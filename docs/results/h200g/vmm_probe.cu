/* vmm_probe.cu - can a CUDA virtual address range grow while a persistent
 * kernel runs on it, and the kernel then use the new memory?  (issue 15's
 * first question: park the warps in place, or end the kernel and relaunch.)
 *
 * A range of RESERVE bytes is reserved; one granule is mapped.  A kernel of
 * every SM x BLOCKS_PER_SM blocks (as the builder launches) writes its
 * share of the mapped part, then block 0 asks the host for more (a flag in
 * pinned host memory) and every block waits.  The host maps GROW granules
 * more at the end (cuMemCreate, cuMemMap, cuMemSetAccess), timing each
 * call, and answers.  The kernel then writes and reads back a pattern over
 * the whole grown range.  A watchdog thread releases the kernel after 10 s
 * if the host's mapping calls block while the kernel runs.
 * Usage: vmm_probe [GRANULES [each]]
 *   nvcc -O2 -arch=sm_90 vmm_probe.cu -lcuda -lpthread -o vmm_probe */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); fprintf(stderr, "%s: %s\n", #x, s_); exit(1); } } while (0)
#define RT(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* flags[0]: the kernel's request (1); flags[1]: the host's answer (1 grown, 2 gave up) */
__global__ void probe(unsigned *pool, unsigned long long first_words, unsigned long long all_words,
                      volatile unsigned *flags, unsigned long long *bad)
{
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long n = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = tid; i < first_words; i += n) pool[i] = (unsigned)(i * 2654435761u);
    __threadfence_system();
    if (tid == 0) flags[0] = 1;
    if (threadIdx.x == 0)
        while (flags[1] == 0) __nanosleep(1000);
    __syncthreads();
    if (flags[1] != 1) return;
    for (unsigned long long i = tid; i < all_words; i += n)
        if (i >= first_words) pool[i] = (unsigned)(i * 2654435761u);
    __threadfence();
    /* each thread reads back its own words: no other thread's are ordered before */
    unsigned long long wrong = 0;
    for (unsigned long long i = tid; i < all_words; i += n) wrong += pool[i] != (unsigned)(i * 2654435761u);
    if (wrong) atomicAdd(bad, wrong);
}

static volatile unsigned *g_flags;
static volatile int g_mapped;
static void *watchdog(void *arg)
{
    (void)arg;
    double t0 = now_ms();
    while (!g_mapped && now_ms() - t0 < 10000) usleep(1000);
    if (!g_mapped) {
        fprintf(stderr, "watchdog: the mapping calls did not return within 10 s while the kernel ran; releasing it\n");
        g_flags[1] = 2;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int grow = argc > 1 ? atoi(argv[1]) : 64; /* granules to add */
    RT(cudaFree(0));
    CUdevice dev;
    CU(cuCtxGetDevice(&dev));
    int sms;
    RT(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran;
    CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t reserve = (size_t)64 << 30;
    CUdeviceptr va;
    double t = now_ms();
    CU(cuMemAddressReserve(&va, reserve, 0, 0, 0));
    printf("granularity %zu bytes; reserved %zu GiB in %.3f ms\n", gran, reserve >> 30, now_ms() - t);
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUmemGenericAllocationHandle h0;
    t = now_ms();
    CU(cuMemCreate(&h0, gran, &prop, 0));
    CU(cuMemMap(va, gran, 0, h0, 0));
    double m = now_ms();
    CU(cuMemSetAccess(va, gran, &access, 1));
    printf("no kernel running: the first granule mapped in %.3f ms (cuMemSetAccess %.3f ms)\n", now_ms() - t, now_ms() - m);
    { /* the same for 64 granules at the far end of the range, idle, then unmapped again */
        CUmemGenericAllocationHandle hx;
        CUdeviceptr at = va + reserve - 64 * gran;
        t = now_ms();
        CU(cuMemCreate(&hx, 64 * gran, &prop, 0));
        CU(cuMemMap(at, 64 * gran, 0, hx, 0));
        m = now_ms();
        CU(cuMemSetAccess(at, 64 * gran, &access, 1));
        printf("no kernel running: 64 granules mapped in %.3f ms (cuMemSetAccess %.3f ms)\n", now_ms() - t, now_ms() - m);
        CU(cuMemUnmap(at, 64 * gran));
        CU(cuMemRelease(hx));
    }

    unsigned *flags;
    RT(cudaHostAlloc((void **)&flags, 2 * sizeof(unsigned), cudaHostAllocMapped));
    flags[0] = flags[1] = 0;
    g_flags = flags;
    unsigned *dflags;
    RT(cudaHostGetDevicePointer((void **)&dflags, flags, 0));
    unsigned long long *bad;
    RT(cudaMalloc(&bad, sizeof *bad));
    RT(cudaMemset(bad, 0, sizeof *bad));
    cudaStream_t s;
    RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    size_t all = gran * (size_t)(1 + grow);
    probe<<<sms * 3, 256, 0, s>>>((unsigned *)va, gran / 4, all / 4, (volatile unsigned *)dflags, bad);
    RT(cudaGetLastError());
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    double t0 = now_ms();
    while (flags[0] == 0 && now_ms() - t0 < 10000) usleep(100);
    printf("kernel asked for memory after %.3f ms\n", now_ms() - t0);
    double create = 0, map = 0, set = 0;
    double g0 = now_ms();
    int calls = argc > 2 ? grow : 1; /* "each": one granule a call; default: the whole step in one call each */
    size_t step = gran * (size_t)(grow / calls);
    for (int i = 0; i < calls; i++) {
        CUmemGenericAllocationHandle hi;
        t = now_ms();
        CU(cuMemCreate(&hi, step, &prop, 0));
        create += now_ms() - t;
        t = now_ms();
        CU(cuMemMap(va + gran + step * (size_t)i, step, 0, hi, 0));
        map += now_ms() - t;
        t = now_ms();
        CU(cuMemSetAccess(va + gran + step * (size_t)i, step, &access, 1));
        set += now_ms() - t;
        CU(cuMemRelease(hi)); /* the mapping keeps it */
    }
    double grew = now_ms() - g0;
    g_mapped = 1;
    int kernel_running = cudaStreamQuery(s) == cudaErrorNotReady;
    printf("mapped %d granules (%.1f MiB) in %d calls each, %.3f ms while the kernel %s: cuMemCreate %.3f, cuMemMap %.3f, cuMemSetAccess %.3f ms in all\n",
           grow, grow * (double)gran / 1048576.0, calls, grew, kernel_running ? "was still running" : "had ended", create, map, set);
    __sync_synchronize();
    if (flags[1] == 0) flags[1] = 1;
    RT(cudaStreamSynchronize(s));
    pthread_join(wd, NULL);
    unsigned long long nbad;
    RT(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
    printf("kernel %s; %llu of %zu words wrong\n", flags[1] == 1 ? "used the grown range" : "was released by the watchdog", nbad, all / 4);
    return flags[1] == 1 && nbad == 0 ? 0 : 1;
}
