/* workload.h - the example's workload, one thread's part: the same text
 * runs on host threads (list_workload.c) and GPU threads
 * (list_workload_gpu.cu), as kdalloc's allocators do.
 *
 * A thread, for several rounds, builds lists of random length by
 * appending one element at a time; when a list's block is full it takes a
 * block twice as large, copies the elements over and frees the old one
 * (what realloc does).  Finished lists stay live for a while (a ring of
 * slots per thread), so that blocks of many sizes and lifetimes are live
 * together, and at the end of each round about half of them are freed.
 * Every element holds a value computed from its list and its index, and a
 * block is checked, every element, before it is freed: a block that
 * another thread's block overlaps, or that the allocator handed out twice,
 * fails the check.
 */
#ifndef LIST_WORKLOAD_H
#define LIST_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <kdalloc/kdalloc.h> /* the allocator that kdalloc::<name> selects */

#ifdef __CUDACC__
#define LW_FN static __device__ __forceinline__
#else
#define LW_FN static inline
#endif

#define LW_LISTS_PER_ROUND 32 /* lists each thread builds in a round */
#define LW_LIVE_SLOTS 16      /* finished lists a thread keeps live */
#define LW_FIRST_CAPACITY 4   /* elements of a list's first block */

typedef struct lw_list {
    uint64_t *items;
    uint32_t length, capacity;
    uint64_t key; /* names the list: its elements' values derive from it */
} lw_list;

/* What one thread saw. */
typedef struct lw_counts {
    uint64_t allocations, failures, bad_blocks;
} lw_counts;

/* A small, good-enough mixing function (splitmix64's finaliser): the
 * random lengths, and the values that make each element unique. */
LW_FN uint64_t lw_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

LW_FN uint64_t lw_value(uint64_t key, uint32_t index) { return lw_mix(key ^ ((uint64_t)index << 40)); }

/* Checks a list's block (counts it when another writer touched it) and
 * gives it back. */
LW_FN void lw_release(const kda_heap *h, lw_list *l, lw_counts *c)
{
    if (!l->items) return;
    for (uint32_t i = 0; i < l->length; i++)
        if (l->items[i] != lw_value(l->key, i)) {
            c->bad_blocks++;
            break;
        }
    kda_free(h, l->items);
    l->items = 0;
    l->length = l->capacity = 0;
}

/* Appends one element, moving the list to a block twice as large when it
 * is full.  0 when the allocator has no block (the list keeps its old one). */
LW_FN int lw_append(const kda_heap *h, lw_list *l, uint64_t v, lw_counts *c)
{
    if (l->length == l->capacity) {
        uint32_t capacity = l->capacity ? 2 * l->capacity : LW_FIRST_CAPACITY;
        c->allocations++;
        uint64_t *bigger = (uint64_t *)kda_malloc(h, (uint64_t)capacity * sizeof *bigger);
        if (!bigger) {
            c->failures++;
            return 0;
        }
        for (uint32_t i = 0; i < l->length; i++) bigger[i] = l->items[i];
        uint32_t length = l->length;
        lw_release(h, l, c); /* checks the old block before it goes */
        l->items = bigger, l->length = length, l->capacity = capacity;
    }
    l->items[l->length++] = v;
    return 1;
}

/* Thread `id`'s whole part: `rounds` rounds of lists of 1 to max_length
 * elements; every block is freed by the end. */
LW_FN void lw_run(const kda_heap *h, uint64_t id, uint32_t rounds, uint32_t max_length, lw_counts *c)
{
    lw_list live[LW_LIVE_SLOTS];
    for (uint32_t s = 0; s < LW_LIVE_SLOTS; s++) live[s].items = 0, live[s].length = live[s].capacity = 0;
    uint64_t rng = lw_mix(id + 1);
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t n = 0; n < LW_LISTS_PER_ROUND; n++) {
            rng = lw_mix(rng);
            lw_list l = {0, 0, 0, rng};
            uint32_t length = 1 + (uint32_t)(lw_mix(rng ^ 1) % max_length);
            for (uint32_t i = 0; i < length; i++)
                if (!lw_append(h, &l, lw_value(l.key, i), c)) break; /* counted; the list stays shorter */
            /* Kept in a random slot; the list there before is done. */
            lw_list *slot = &live[lw_mix(rng ^ 2) % LW_LIVE_SLOTS];
            lw_release(h, slot, c);
            *slot = l;
        }
        for (uint32_t s = 0; s < LW_LIVE_SLOTS; s++) /* the end of a round */
            if (lw_mix(rng ^ (s + 3)) & 1) lw_release(h, &live[s], c);
    }
    for (uint32_t s = 0; s < LW_LIVE_SLOTS; s++) lw_release(h, &live[s], c);
}

/* A command-line number from lo to hi, or a one-line error and exit 2. */
static inline unsigned long lw_parse(const char *program, const char *s, const char *what, unsigned long lo,
                                     unsigned long hi)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "%s: %s must be %lu to %lu, not '%s'\n", program, what, lo, hi, s);
        exit(2);
    }
    return v;
}

#endif
