/* gpu_alloc_stress.h - the GPU side of test_gpu_alloc (gpu_alloc_stress.cu). */
#ifndef KDA_GPU_ALLOC_STRESS_H
#define KDA_GPU_ALLOC_STRESS_H

#include <stddef.h>
#include <stdint.h>

#include "kdalloc/kdalloc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gpu_stress_result {
    uint64_t allocations, nulls;
    uint64_t corrupt;    /* checks that found another owner's pattern */
    uint64_t misaligned; /* pointers not 16-byte aligned */
    uint64_t outside;    /* blocks reaching outside the pool */
    uint64_t split;      /* kda_malloc_warp requests that gave some lanes NULL, not all */
} gpu_stress_result;

/* Who asks: lane 0 for its warp (kda_malloc); every lane for its own size
 * through kda_malloc_warp; every lane for itself through kda_malloc, all at
 * once (one size across the warp every other round, a size a lane in the
 * others), each lane then freeing its own block. */
typedef enum gpu_stress_mode { GPU_STRESS_LANE0, GPU_STRESS_WARP, GPU_STRESS_LANES } gpu_stress_mode;

/* `warps` warps each allocate `iterations` blocks of 16 B .. max_size
 * (`iterations` a lane with GPU_STRESS_LANES), holding up to 4 at a time;
 * a block outside the pool or misaligned is counted and left alone. */
int gpu_alloc_stress(kda_pool *pool, uint32_t warps, uint32_t iterations, uint32_t max_size, gpu_stress_mode mode,
                     gpu_stress_result *res, char *err, size_t errlen);

/* `warps` warps each allocate blocks of 16 B .. max_size until their first
 * NULL, holding all of them, then check and free them: where every block
 * lies in the pool, exactly one NULL a warp. */
int gpu_alloc_fill(kda_pool *pool, uint32_t warps, uint32_t max_size, gpu_stress_result *res, char *err,
                   size_t errlen);

/* Copies the whole pool to host memory (pool->heap.bytes bytes). */
int gpu_pool_copy(const kda_pool *pool, void *host, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
