/* minimal.c - the smallest use of an installed kdalloc (docs/library.md):
 * four host threads allocate, fill, check and free blocks in one pool of
 * CountedBump, the allocator its CMakeLists.txt links; then a pool on the
 * GPU is made and given back (kernels that allocate from it are CUDA code:
 * examples/list_workload).  Exits 1 when a block was not served or not
 * intact; a machine without a GPU only says so. */
#include <stdio.h>
#include <threads.h>

#include <kdalloc/kdalloc.h>

static kda_pool pool;

static int worker(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg, bad = 0;
    kda_host_set_sm(id); /* the "multiprocessor" this thread plays */
    for (uint32_t i = 0; i < 10000; i++) {
        uint32_t n = 1 + (i * 7919u + id) % 500;
        uint32_t *block = kda_malloc(&pool.heap, n * sizeof *block);
        if (!block) return 1;
        for (uint32_t k = 0; k < n; k++) block[k] = id ^ k;
        for (uint32_t k = 0; k < n; k++) bad += block[k] != (id ^ k);
        kda_free(&pool.heap, block);
    }
    return bad != 0;
}

int main(void)
{
    char err[256];
    if (kda_host_pool_create(&pool, 64u << 20, 4, err, sizeof err)) {
        fprintf(stderr, "minimal: %s\n", err);
        return 1;
    }
    thrd_t t[4];
    int failed = 0;
    for (uintptr_t i = 0; i < 4; i++) thrd_create(&t[i], worker, (void *)i);
    for (int i = 0; i < 4; i++) {
        int r;
        thrd_join(t[i], &r);
        failed |= r;
    }
    kda_space space;
    kda_host_pool_space(&pool, &space);
    printf("%s: 40000 blocks %s; %.1f of %.1f MiB free after\n", kda_allocator_name(), failed ? "FAILED" : "served and intact",
           (double)space.free_bytes / (1 << 20), (double)pool.heap.bytes / (1 << 20));
    kda_host_pool_destroy(&pool);
    kda_pool gpu;
    if (kda_pool_create(&gpu, 64u << 20, err, sizeof err) == 0) {
        printf("a 64 MiB pool on the GPU: made and given back\n");
        kda_pool_destroy(&gpu);
    } else {
        printf("no pool on the GPU: %s\n", err);
    }
    return failed;
}
