/* slabbump_runs.h - SlabBump's runs of whole chunks, for requests above
 * the largest class (included by slabbump.h, after the chunk sets): taken
 * from the top of the pool, one CAS of a word of the taken set where the
 * run fits in it, else under the runs' lock, as ScatterAlloc's large
 * requests.  A run's first chunk holds its length (run[]) and a status
 * with the run's mark, so that its free, one block, knows it.
 *
 * Invariants: the chunks of a run are taken (their bits set by acquiring
 * atomics, after their last owners' writes) before its marks are written,
 * and its marks are cleared and counted free (a fence) before its bits are;
 * a run is never split (the free gives back all k chunks). */
#ifndef KDA_SLABBUMP_RUNS_H
#define KDA_SLABBUMP_RUNS_H

#include "kdalloc/alloc/slabbump_layout.h"

/* Bit b of the result: bits b to b + k - 1 of x are all set. */
KDA_HD uint64_t sb_runs_in(uint64_t x, uint32_t k)
{
    for (uint32_t have = 1; have < k; have *= 2) x &= x >> (have < k - have ? have : k - have);
    return x;
}

/* Marks a run of k chunks starting at lo, taken (its bits set by acquiring
 * atomics: the marks land after the chunks' last frees'). */
KDA_FN void *sb_mark_run(const kda_heap *h, uint32_t lo, uint32_t k)
{
    kda_store32(&h->state.run[lo], k);
    kda_store32(sb_st(h, lo), sb_status(SB_ACTIVE, SB_RUN_MARK, 0));
    kda_fence(); /* release: the marks before the block reaches a thread that may free it */
    return h->base + (uint64_t)lo * h->state.chunk_bytes;
}

/* A run of k <= 64 free chunks inside one word of the taken set, the
 * highest, taken by one CAS of the word (no lock); NULL when no word has
 * one.  Most runs are short: only longer ones, or those that cross words,
 * take the lock below. */
KDA_FN void *sb_take_run_in_word(const kda_heap *h, uint32_t k)
{
    for (uint32_t w = sb_words_of(h); w-- > 0;) {
        uint32_t left = h->state.chunks - 64 * w;
        uint64_t invalid = left >= 64 ? 0 : ~(((uint64_t)1 << left) - 1);
        uint64_t seen = kda_load64(&h->state.taken[w]);
        for (uint64_t runs; (runs = sb_runs_in(~(seen | invalid), k)) != 0;) {
            uint32_t b = 63 - (uint32_t)kda_clz64(runs);
            uint64_t mask = (k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1) << b;
            uint64_t old = kda_cas64_acquire(&h->state.taken[w], seen, seen | mask);
            if (old == seen) {
                kda_add32(h->state.free_chunks, 0u - k);
                return sb_mark_run(h, 64 * w + b, k);
            }
            seen = old;
        }
    }
    return NULL;
}

KDA_FN void *sb_take_run(const kda_heap *h, uint64_t need)
{
    uint64_t k = (need + h->state.chunk_bytes - 1) / h->state.chunk_bytes;
    if (k > h->state.chunks) return NULL;
    if (k <= 64) {
        void *got = sb_take_run_in_word(h, (uint32_t)k);
        if (got) return got;
    }
    while (kda_cas32(h->state.lock, 0, 1) != 0) kda_pause();
    kda_fence();
    void *got = NULL;
    uint64_t run = 0; /* free chunks counted from above the bit looked at */
    /* From the top down, a word of the taken set at a time: whole words
     * taken or free cost one load (a pool of 8 GiB has 2,048 words). */
    for (int64_t w = (int64_t)sb_words_of(h) - 1; w >= 0 && !got; w--) {
        uint32_t left = h->state.chunks - 64 * (uint32_t)w;
        uint64_t x = kda_load64(&h->state.taken[w]) | (left >= 64 ? 0 : ~(((uint64_t)1 << left) - 1));
        if (x == ~(uint64_t)0) {
            run = 0;
            continue;
        }
        if (x == 0 && run + 64 < k) {
            run += 64;
            continue;
        }
        for (int b = 63; b >= 0; b--) {
            if (x >> b & 1) {
                run = 0;
                continue;
            }
            if (++run < k) continue;
            uint32_t lo = 64 * (uint32_t)w + (uint32_t)b, i = 0; /* take them; one a slot took ends the try */
            while (i < k && !(kda_or64_acquire(&h->state.taken[(lo + i) / 64], (uint64_t)1 << ((lo + i) % 64)) >>
                              ((lo + i) % 64) & 1))
                i++;
            if (i == k) {
                kda_add32(h->state.free_chunks, 0u - (uint32_t)k);
                got = sb_mark_run(h, lo, (uint32_t)k);
            } else {
                for (uint32_t j = 0; j < i; j++)
                    kda_and64(&h->state.taken[(lo + j) / 64], ~((uint64_t)1 << ((lo + j) % 64)));
                w = (lo + i) / 64 + 1; /* look again from the word of the chunk that was taken */
                run = 0;
            }
            break;
        }
    }
    kda_fence();
    kda_store32(h->state.lock, 0);
    return got;
}

KDA_FN void sb_free_run(const kda_heap *h, uint32_t c)
{
    uint32_t k = kda_load32(&h->state.run[c]);
    KDA_ASSERT(k > 0 && c + k <= h->state.chunks, "a run's length at its free is > 0, its chunks in the pool");
    kda_store32(sb_st(h, c), 0);
    kda_add32(h->state.free_chunks, k);
    kda_fence();
    for (uint32_t j = 0; j < k; j++) kda_and64(&h->state.taken[(c + j) / 64], ~((uint64_t)1 << ((c + j) % 64)));
}

#endif
