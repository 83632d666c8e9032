/* alloc_test_util.h - what the host allocator tests (test_alloc*.c and the
 * allocators' own alloc_<name>.c) share: a seeded mixer, random request
 * sizes, and owner patterns written into blocks and checked later (two
 * live blocks that overlap break one of the patterns). */
#ifndef KDA_ALLOC_TEST_UTIL_H
#define KDA_ALLOC_TEST_UTIL_H

#include <stdint.h>

static inline uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Sizes from 16 B to 128 KiB, uniform in log2, not multiples of 16. */
static inline uint64_t random_size(uint64_t *rng)
{
    *rng = mix(*rng + 0x9e3779b97f4a7c15ull);
    unsigned bits = 4 + (unsigned)(*rng % 14); /* 2^4 .. 2^17 */
    uint64_t size = ((uint64_t)1 << bits) + (*rng >> 20) % ((uint64_t)1 << bits);
    return size > (128u << 10) ? (128u << 10) - 3 : size;
}

static inline void fill(void *p, uint64_t size, uint64_t key)
{
    uint64_t words = size / 8;
    uint64_t *w = p;
    for (uint64_t i = 0; i < words; i++) w[i] = key ^ (i * 0x9e3779b97f4a7c15ull);
    unsigned char *tail = (unsigned char *)p + words * 8;
    for (uint64_t i = 0; i < size % 8; i++) tail[i] = (unsigned char)(key >> (8 * i));
}

static inline int intact(const void *p, uint64_t size, uint64_t key)
{
    uint64_t words = size / 8;
    const uint64_t *w = p;
    for (uint64_t i = 0; i < words; i++)
        if (w[i] != (key ^ (i * 0x9e3779b97f4a7c15ull))) return 0;
    const unsigned char *tail = (const unsigned char *)p + words * 8;
    for (uint64_t i = 0; i < size % 8; i++)
        if (tail[i] != (unsigned char)(key >> (8 * i))) return 0;
    return 1;
}

#endif
