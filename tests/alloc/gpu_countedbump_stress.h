/* gpu_countedbump_stress.h - the GPU side of test_gpu_countedbump
 * (gpu_countedbump_stress.cu). */
#ifndef KDA_GPU_COUNTEDBUMP_STRESS_H
#define KDA_GPU_COUNTEDBUMP_STRESS_H

#include <stddef.h>
#include <stdint.h>

#include "kdalloc/kdalloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Who asks: lane 0 of each warp for the warp (as the builder does), every
 * lane for itself (the lanes of a warp ask together), or half the warps
 * each way. */
enum { CB_ASK_LANE0 = 0, CB_ASK_EVERY_LANE = 1, CB_ASK_MIXED = 2 };

typedef struct cb_stress_result {
    uint64_t allocations, nulls;
    uint64_t corrupt;    /* words that did not hold their owner's pattern */
    uint64_t twice;      /* units found held by another block when claimed, or not held when given back */
    uint64_t misaligned; /* pointers not 16-byte aligned */
    uint64_t outside;    /* blocks reaching outside the pool */
} cb_stress_result;

/* 0 when a GPU that can run the allocator is there, else -1 with why. */
int cb_gpu_usable(char *why, size_t whylen);

/* Lays the pool out again with `slots` slots (fewer than the GPU's SMs:
 * the others share them), every chunk free. */
int cb_gpu_set_slots(kda_pool *pool, uint32_t slots, char *err, size_t errlen);

/* `warps` warps each ask `iterations` times for blocks of min_size ..
 * max_size bytes (uniform in log2), holding up to 2 at a time (per lane
 * where every lane asks).  Each block's 16-byte units are claimed in a
 * bitmap when it is handed out and given back before it is freed; every
 * word is filled with its owner's pattern and checked before the free. */
int cb_gpu_stress(kda_pool *pool, uint32_t warps, uint32_t iterations, uint32_t min_size, uint32_t max_size, int ask,
                  cb_stress_result *res, char *err, size_t errlen);

/* Copies the allocator's state (pool->plan.state_bytes) to host memory. */
int cb_gpu_state_copy(const kda_pool *pool, void *host, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
