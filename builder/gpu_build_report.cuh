/* gpu_build_report.cuh - what a finished build says (included by
 * gpu_build.cu): the message for a build that failed, the check that a
 * timed build repeated the warm-up build, and, in the -DKDA_TIMELINE and
 * -DKDA_PROBE builds, the timeline and the probe's counters on stderr.
 *
 * Invariants.  Host code over a build_state read back after the build; it
 * never touches the device.  Builds of one scene are repeatable (the same
 * nodes and the same requests, docs/builder.md), so any difference
 * between the warm-up build and a timed one is reported as an error, never
 * averaged away.  Messages name causes and sizes, never the caller's
 * options: what a user should change is the caller's to say. */
#ifndef KDA_GPU_BUILD_REPORT_CUH
#define KDA_GPU_BUILD_REPORT_CUH

#include <stdio.h>

#include "gpu_build.h"
#include "gpu_build_buffers.cuh"

#ifdef KDA_TIMELINE
/* A build's timeline (the warm-up build's; with KDA_TIMELINE_TIMED also
 * the last timed build's), on stderr: per bucket the warps with work at
 * its end, and the nodes and chunks finished in it. */
static void timeline_print(const build_state *st)
{
    int last = 0, busy = 0;
    for (int i = 0; i < TIMELINE_BUCKETS; i++)
        for (int k = 0; k < TL_SERIES; k++)
            if (st->timeline[i][k]) last = i;
    fprintf(stderr, "timeline (per %d us): t_us busy_warps nodes chunks\n", TIMELINE_NS / 1000);
    for (int i = 0; i <= last; i++) {
        busy += st->timeline[i][TL_BUSY];
        fprintf(stderr, "timeline %6d %5d %6d %6d\n", i * (TIMELINE_NS / 1000), busy, st->timeline[i][TL_NODES],
                st->timeline[i][TL_CHUNKS]);
    }
}
#endif

#ifdef KDA_PROBE
/* The warm-up build's cycles in the parts of big nodes' chunks, per chunk
 * (lane 0's clock64; the last chunk's work per big node), the single-warp
 * nodes' donations, and the exact split's candidates and cycles by the
 * node's size, on stderr. */
static void probe_print(const build_state *st)
{
    const unsigned long long *q = st->probe;
    double bins = q[PROBE_BIN_CHUNKS] ? (double)q[PROBE_BIN_CHUNKS] : 1.0;
    double scatters = q[PROBE_SCATTER_CHUNKS] ? (double)q[PROBE_SCATTER_CHUNKS] : 1.0;
    double splits = q[PROBE_BIG_SPLITS] ? (double)q[PROBE_BIG_SPLITS] : 1.0;
    fprintf(stderr,
            "probe: %llu BIN chunks, cycles each: set-up %.0f, zeroing the bins and binning %.0f, merging %.0f, "
            "hand-over %.0f\n", q[PROBE_BIN_CHUNKS], q[PROBE_BIN_SETUP] / bins, q[PROBE_BIN_BINNING] / bins,
            q[PROBE_BIN_MERGE] / bins, q[PROBE_BIN_HANDOVER] / bins);
    fprintf(stderr, "probe: after the last BIN chunk of each of %llu big nodes split, cycles each: reading the bins "
            "and choosing %.0f, allocating %.0f, the slot and pushing the SCATTER chunks %.0f\n",
            q[PROBE_BIG_SPLITS], q[PROBE_SPLIT_CHOOSE] / splits, q[PROBE_SPLIT_ALLOC] / splits,
            q[PROBE_BIN_SPLIT] / splits);
    fprintf(stderr,
            "probe: %llu SCATTER chunks, cycles each: set-up %.0f, classifying %.0f, reserving %.0f, writing %.0f, "
            "hand-over %.0f; taking the children after the last, each: %.0f\n",
            q[PROBE_SCATTER_CHUNKS], q[PROBE_SCATTER_SETUP] / scatters, q[PROBE_SCATTER_CLASSIFY] / scatters,
            q[PROBE_SCATTER_RESERVE] / scatters, q[PROBE_SCATTER_WRITE] / scatters, q[PROBE_SCATTER_HANDOVER] / scatters,
            q[PROBE_SCATTER_CHILDREN] / splits);
    fprintf(stderr, "probe: a chunk entry waited %.2f us on average from the start of its push to its pop (%llu "
            "entries), %.2f us of them until the push was published (%.2f us until its cells were reserved and "
            "checked)\n",
            q[PROBE_QUEUED] ? q[PROBE_QUEUE_NS] / 1e3 / (double)q[PROBE_QUEUED] : 0.0, q[PROBE_QUEUED],
            q[PROBE_QUEUED] ? q[PROBE_PUBLISH_NS] / 1e3 / (double)q[PROBE_QUEUED] : 0.0,
            q[PROBE_QUEUED] ? q[PROBE_CHECKED_NS] / 1e3 / (double)q[PROBE_QUEUED] : 0.0);
    fprintf(stderr, "probe: %llu nodes done by one warp; %llu tasks given to the block's idle warps, %llu to the queue\n",
            q[PROBE_NODES], q[PROBE_DONATES_BLOCK], q[PROBE_DONATES_GLOBAL]);
    fprintf(stderr, "probe: exact splits: %llu candidate planes, %llu inside their node's box; passes of 32: %llu, "
            "%llu for those inside\n", q[PROBE_CANDIDATES], q[PROBE_CANDIDATES_INSIDE], q[PROBE_PASSES],
            q[PROBE_PASSES_INSIDE]);
    static const int up_to[4] = {8, 16, 32, 64};
    for (int i = 0; i < 4; i++)
        fprintf(stderr, "probe: exact splits of at most %d references: %llu, %.0f cycles each\n", up_to[i],
                q[PROBE_EXACTS_8 + i], q[PROBE_EXACTS_8 + i] ? q[PROBE_EXACT_8 + i] / (double)q[PROBE_EXACTS_8 + i] : 0.0);
}
#endif

/* The message for a build that stopped with an error other than a full
 * array (those are grown and the build rerun), and what it ran short of
 * in *pool_short: the cause and the sizes, for the caller to advise on. */
static void describe_failure(const build_state *st, uint64_t pool_bytes, gpu_pool_short *pool_short, char *err,
                             size_t errlen)
{
    char size[32]; /* a pool under 1 MiB (an allocator's minimum) in KiB, where "0.1 MiB" would round */
    if (pool_bytes < (1u << 20)) snprintf(size, sizeof size, "%.0f KiB", (double)pool_bytes / (1 << 10));
    else snprintf(size, sizeof size, "%.1f MiB", (double)pool_bytes / (1 << 20));
    if (st->error.v == BUILD_POOL_EXHAUSTED) {
        *pool_short = GPU_POOL_EXHAUSTED;
        snprintf(err, errlen, "pool exhausted after %llu allocation%s (%s pool of %s)", (unsigned long long)st->n_alloc,
                 st->n_alloc == 1 ? "" : "s", kda_allocator_name(), size);
    } else if (st->error.v == BUILD_CORRUPT) {
        *pool_short = GPU_POOL_OVERWRITTEN;
        snprintf(err, errlen, "the build read overwritten memory: %s reused live arrays of its %s pool",
                 kda_allocator_name(), size);
    } else if (st->error.v >= BUILD_QUEUE_FULL && st->error.v <= BUILD_REFS_FULL) {
        snprintf(err, errlen, "the build's arrays kept overflowing after %d attempts", MAX_ATTEMPTS);
    } else {
        snprintf(err, errlen, "the build kernel stopped with unknown error %u", st->error.v);
    }
}

/* Builds of one scene are repeatable: the same nodes and the same
 * requests, whoever does them (docs/builder.md).  So a timed build that
 * differs from the warm-up build, whose statistics are reported, read
 * memory that changed under it; 0 when they agree. */
static int builds_differ(const build_state *warm, const build_state *st, int wrapped, char *err, size_t errlen)
{
    if (st->n_alloc == warm->n_alloc && st->alloc_bytes == warm->alloc_bytes && st->alloc_sq == warm->alloc_sq &&
        st->n_nodes.v == warm->n_nodes.v)
        return 0;
    int n = snprintf(err, errlen, "two builds of this scene differ (%llu and %llu requests, %u and %u nodes): ",
                     (unsigned long long)warm->n_alloc, (unsigned long long)st->n_alloc, warm->n_nodes.v,
                     st->n_nodes.v);
    if (n < 0 || (size_t)n >= errlen) return -1;
    if (wrapped)
        snprintf(err + n, errlen - (size_t)n, "%s wrapped around its pool and overwrote live arrays",
                 kda_allocator_name());
    else
        snprintf(err + n, errlen - (size_t)n, "a builder or %s bug, please report it with the scene",
                 kda_allocator_name());
    return -1;
}

#endif
