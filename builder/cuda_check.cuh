/* cuda_check.cuh - one way to report a failed CUDA call, for the host code
 * of the GPU builder and ray caster: CHECK(call, what) writes
 * "what: CUDA's message" into err and jumps to the function's `fail:`. */
#ifndef KDA_CUDA_CHECK_CUH
#define KDA_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>

static inline int cuda_ok(cudaError_t e, const char *what, char *err, size_t errlen)
{
    if (e == cudaSuccess) return 1;
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    return 0;
}

#define CHECK(call, what)                                     \
    do {                                                      \
        if (!cuda_ok((call), (what), err, errlen)) goto fail; \
    } while (0)

#endif
