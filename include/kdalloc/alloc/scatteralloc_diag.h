/* scatteralloc_diag.h - ScatterAlloc's walk statistics, for diagnosis only:
 * built with -DKDA_DIAG (CUDA), every malloc counts the steps of the
 * paper's alloc it took, and adds them, with a few atomics, to totals for
 * requests of at most a page and for larger ones.  Diagnosed runs are
 * slower and their times not comparable.  kda_walk_stats_print prints the
 * totals per request: `kdalloc-allocbench --test warps`, the survey's
 * tests and the warm-up build of `kdalloc build` do.  Without KDA_DIAG the
 * counting compiles to nothing (SA_COUNT discards it, and the counts are
 * never read).
 *
 * The steps (per malloc): super blocks tried; regions entered (their fill
 * check read) and of those skipped as full; page entries read; free pages
 * split for the size; pages of a chunk size that does not fit; pages
 * skipped at their fill level; reservations (tryUsePage's atomicAdd) and
 * of those given back (the page was full or re-split); atomicOr tries of
 * the bit search; for larger requests the page entries read under the lock
 * and the spins waiting for it; and clock cycles. */
#ifndef KDA_SCATTERALLOC_DIAG_H
#define KDA_SCATTERALLOC_DIAG_H

enum {
    SA_D_SUPER_BLOCKS,
    SA_D_REGIONS,
    SA_D_REGIONS_FULL,
    SA_D_PAGES,
    SA_D_SPLITS,
    SA_D_SIZE_MISSES,
    SA_D_FILL_SKIPS,
    SA_D_RESERVES,
    SA_D_UNRESERVES,
    SA_D_BIT_TRIES,
    SA_D_LOCK_SPINS,
    SA_D_LARGE_PAGES,
    SA_D_STEPS
};
typedef struct sa_diag {
    uint32_t n[SA_D_STEPS];
} sa_diag;

#if defined(KDA_DIAG) && defined(__CUDACC__)
#define SA_DIAG_DEVICE 1
#define KDA_ALLOC_HAS_WALK_STATS 1
#define SA_COUNT(d, step, v) ((d)->n[step] += (uint32_t)(v))
enum { SA_S_MALLOCS = SA_D_STEPS, SA_S_NULLS, SA_S_CYCLES, SA_STATS };
static __device__ unsigned long long sa_walk_stats[2][SA_STATS]; /* [0]: at most a page, [1]: larger */
#define SA_DIAG_CLOCK() clock64()
#else
#define SA_COUNT(d, step, v) ((void)(d))
#define SA_DIAG_CLOCK() 0
#endif

/* Adds one malloc's counts to the totals. */
KDA_FN void sa_diag_add(const sa_diag *d, int large, long long started, int got)
{
#ifdef SA_DIAG_DEVICE
    unsigned long long *s = sa_walk_stats[large ? 1 : 0];
    for (int i = 0; i < SA_D_STEPS; i++)
        if (d->n[i]) atomicAdd(&s[i], (unsigned long long)d->n[i]);
    atomicAdd(&s[SA_S_MALLOCS], 1ull);
    atomicAdd(&s[SA_S_CYCLES], (unsigned long long)(clock64() - started));
    if (!got) atomicAdd(&s[SA_S_NULLS], 1ull);
#else
    (void)d, (void)large, (void)started, (void)got;
#endif
}

#ifdef SA_DIAG_DEVICE
#include <stdio.h>

static inline cudaError_t kda_walk_stats_reset(void)
{
    static const unsigned long long zero[2][SA_STATS] = {{0}};
    return cudaMemcpyToSymbol(sa_walk_stats, zero, sizeof zero);
}

static inline cudaError_t kda_walk_stats_print(FILE *f, const char *title)
{
    unsigned long long s[2][SA_STATS];
    cudaError_t e = cudaMemcpyFromSymbol(s, sa_walk_stats, sizeof s);
    if (e != cudaSuccess) return e;
    fprintf(f, "%s: ScatterAlloc's steps per malloc (-DKDA_DIAG)\n", title);
    for (int large = 0; large < 2; large++) {
        const unsigned long long *c = s[large];
        if (!c[SA_S_MALLOCS]) continue;
        double n = (double)c[SA_S_MALLOCS];
        if (!large)
            fprintf(f, "  at most a page: %llu mallocs, %llu NULL; super blocks %.2f, regions %.2f (full %.2f),\n"
                       "  pages read %.2f, split %.3f, size misses %.2f, fill skips %.2f, reservations %.2f\n"
                       "  (given back %.2f), bit tries %.2f, kilocycles %.1f\n",
                    c[SA_S_MALLOCS], c[SA_S_NULLS], c[SA_D_SUPER_BLOCKS] / n, c[SA_D_REGIONS] / n,
                    c[SA_D_REGIONS_FULL] / n, c[SA_D_PAGES] / n, c[SA_D_SPLITS] / n, c[SA_D_SIZE_MISSES] / n,
                    c[SA_D_FILL_SKIPS] / n, c[SA_D_RESERVES] / n, c[SA_D_UNRESERVES] / n, c[SA_D_BIT_TRIES] / n,
                    c[SA_S_CYCLES] / n / 1000.0);
        else
            fprintf(f, "  larger than a page: %llu mallocs, %llu NULL; page entries read %.1f, lock spins %.1f,\n"
                       "  kilocycles %.1f\n",
                    c[SA_S_MALLOCS], c[SA_S_NULLS], c[SA_D_LARGE_PAGES] / n, c[SA_D_LOCK_SPINS] / n,
                    c[SA_S_CYCLES] / n / 1000.0);
    }
    return cudaSuccess;
}
#endif

#endif
