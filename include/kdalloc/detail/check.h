/* check.h - KDA_ASSERT(cond, what): the invariants that the allocators' and
 * the builder's comments state, checked where they must hold, in a check
 * build (cmake -DKDA_CHECK=ON defines KDA_CHECK=1 for C and CUDA).
 *
 * A broken invariant prints file:line, the condition and `what` (which
 * invariant) and stops: on the host to stderr, then abort(); on the device
 * with printf, then __trap().  Without KDA_CHECK the macro is ((void)0):
 * `cond` is not evaluated, and the code compiles as if the line were not
 * there.  The checks are O(1) (no scans), so a check build keeps the
 * allocators' fast paths fast enough for the host tests.
 */
#ifndef KDA_CHECK_H
#define KDA_CHECK_H

#if defined(KDA_CHECK) && KDA_CHECK

#include <stdio.h>
#include <stdlib.h>

#ifdef __CUDACC__
static inline __host__ __device__ __noinline__ void kda_check_failed(const char *file, int line, const char *cond,
                                                                     const char *what)
{
#ifdef __CUDA_ARCH__
    printf("%s:%d: invariant broken: %s (%s)\n", file, line, what, cond);
    __trap();
#else
    fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", file, line, what, cond);
    abort();
#endif
}
#else
static inline void kda_check_failed(const char *file, int line, const char *cond, const char *what)
{
    fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", file, line, what, cond);
    abort();
}
#endif

#define KDA_ASSERT(cond, what) ((cond) ? (void)0 : kda_check_failed(__FILE__, __LINE__, #cond, what))

#else

#define KDA_ASSERT(cond, what) ((void)0)

#endif

#endif
