/* slabbump_diag.h - SlabBump's step counts, for diagnosis only: built with
 * -DKDA_DIAG (CUDA), malloc and free count their steps (below) and clock
 * cycles into totals on the device, one row of totals per 32nd of the SMs
 * so that the atomics spread over lines.  Diagnosed runs are slower and
 * their times not comparable; the counts and the cycles' shares are what
 * they are for.  `kdalloc-allocbench --test list`, the survey's tests and
 * `--test warps` print them.  Without KDA_DIAG every SB_COUNT compiles to
 * nothing.
 *
 * The steps: requests; blocks of a first life, blocks claimed again (and
 * the atomicAnds the claims took, the pauses a claim waited for a bit on
 * its way); closes, installs from the free set, from the queue and none
 * (and the bitmap words the searches read, the rounds an install from the
 * queue waited for counted bits, the bits it moved); pauses past a
 * slot's limit; fills (and their waiters' pauses); NULLs; runs; frees,
 * retires, queuings; cycles in malloc, in the closer's close and install,
 * waiting past a limit, and in free. */
#ifndef KDA_SLABBUMP_DIAG_H
#define KDA_SLABBUMP_DIAG_H

enum {
    SB_D_MALLOCS,
    SB_D_FIRST,
    SB_D_CLAIMED,
    SB_D_CLAIM_ANDS,
    SB_D_CLAIM_PAUSES,
    SB_D_CLOSES,
    SB_D_INSTALL_FREE,
    SB_D_INSTALL_QUEUED,
    SB_D_INSTALL_NONE,
    SB_D_FREE_WORDS,
    SB_D_QUEUE_WORDS,
    SB_D_INSTALL_ROUNDS,
    SB_D_MOVED,
    SB_D_LIMIT_PAUSES,
    SB_D_FILLS,
    SB_D_FILL_PAUSES,
    SB_D_NULLS,
    SB_D_RUNS,
    SB_D_FREES,
    SB_D_RETIRES,
    SB_D_QUEUES,
    SB_D_CYCLES_MALLOC,
    SB_D_CYCLES_CLOSE,
    SB_D_CYCLES_LIMIT,
    SB_D_CYCLES_FREE,
    SB_D_STEPS
};

#if defined(KDA_DIAG) && defined(__CUDACC__)
#include <stdio.h>

#define KDA_ALLOC_HAS_WALK_STATS 1
static __device__ unsigned long long sb_walk_stats[32][SB_D_STEPS];
#define SB_COUNT(step, v) atomicAdd(&sb_walk_stats[kda_sm_id() % 32][step], (unsigned long long)(v))
#define SB_TIMER(name) long long name = clock64()
#define SB_COUNT_SINCE(step, name) SB_COUNT(step, clock64() - (name))

static inline cudaError_t kda_walk_stats_reset(void)
{
    static const unsigned long long zero[32][SB_D_STEPS] = {{0}};
    return cudaMemcpyToSymbol(sb_walk_stats, zero, sizeof zero);
}

static inline cudaError_t kda_walk_stats_print(FILE *f, const char *title)
{
    unsigned long long rows[32][SB_D_STEPS], c[SB_D_STEPS] = {0};
    cudaError_t e = cudaMemcpyFromSymbol(rows, sb_walk_stats, sizeof rows);
    if (e != cudaSuccess) return e;
    for (int r = 0; r < 32; r++)
        for (int i = 0; i < SB_D_STEPS; i++) c[i] += rows[r][i];
    double n = c[SB_D_MALLOCS] ? (double)c[SB_D_MALLOCS] : 1.0, closes = c[SB_D_CLOSES] ? (double)c[SB_D_CLOSES] : 1.0;
    double cyc = (double)(c[SB_D_CYCLES_MALLOC] + c[SB_D_CYCLES_FREE]);
    if (cyc == 0) cyc = 1;
    fprintf(f, "%s: SlabBump's steps (-DKDA_DIAG)\n", title);
    fprintf(f, "  %llu mallocs (%llu NULL, %llu runs): first life %.3f, claimed again %.3f (ANDs %.2f a claim,"
               " pauses %.3f)\n",
            c[SB_D_MALLOCS], c[SB_D_NULLS], c[SB_D_RUNS], c[SB_D_FIRST] / n, c[SB_D_CLAIMED] / n,
            c[SB_D_CLAIM_ANDS] / (c[SB_D_CLAIMED] ? (double)c[SB_D_CLAIMED] : 1.0), c[SB_D_CLAIM_PAUSES] / n);
    fprintf(f, "  %llu closes (%.4f a malloc): installs free %llu, queued %llu, none %llu; words read: free set %.1f,"
               " queue %.1f a close; waits for bits %.2f, bits moved %.1f an install from the queue\n",
            c[SB_D_CLOSES], c[SB_D_CLOSES] / n, c[SB_D_INSTALL_FREE], c[SB_D_INSTALL_QUEUED], c[SB_D_INSTALL_NONE],
            c[SB_D_FREE_WORDS] / closes, c[SB_D_QUEUE_WORDS] / closes,
            c[SB_D_INSTALL_ROUNDS] / (c[SB_D_INSTALL_QUEUED] ? (double)c[SB_D_INSTALL_QUEUED] : 1.0),
            c[SB_D_MOVED] / (c[SB_D_INSTALL_QUEUED] ? (double)c[SB_D_INSTALL_QUEUED] : 1.0));
    fprintf(f, "  pauses past a limit %.2f a malloc; fills %llu (waiters' pauses %llu); %llu frees: retires %llu,"
               " queuings %llu\n",
            c[SB_D_LIMIT_PAUSES] / n, c[SB_D_FILLS], c[SB_D_FILL_PAUSES], c[SB_D_FREES], c[SB_D_RETIRES],
            c[SB_D_QUEUES]);
    fprintf(f, "  kilocycles: malloc %.2f a malloc, free %.2f a free; of malloc's and free's cycles: closes %.1f%%,"
               " waits past a limit %.1f%%, free %.1f%%\n",
            c[SB_D_CYCLES_MALLOC] / n / 1000.0,
            c[SB_D_CYCLES_FREE] / (c[SB_D_FREES] ? (double)c[SB_D_FREES] : 1.0) / 1000.0,
            100.0 * c[SB_D_CYCLES_CLOSE] / cyc, 100.0 * c[SB_D_CYCLES_LIMIT] / cyc,
            100.0 * c[SB_D_CYCLES_FREE] / cyc);
    return cudaSuccess;
}
#else
#define SB_COUNT(step, v) ((void)0)
#define SB_TIMER(name) ((void)0)
#define SB_COUNT_SINCE(step, name) ((void)0)
#endif

#endif
