/* slabbump_layout.h - SlabBump's layout (included by slabbump.h, which
 * says what SlabBump does, and by slabbump_runs.h): its constants, its
 * state (kda_state), a chunk's status word and the addressing of the slots,
 * bitmaps and sets; no algorithm. */
#ifndef KDA_SLABBUMP_LAYOUT_H
#define KDA_SLABBUMP_LAYOUT_H

#define SB_CLASSES 24 /* 16 B to 64 KiB: C/4 of the largest chunk */
#define SB_MIN_CHUNK 4096u
#define SB_MAX_CHUNK 262144u /* a large pool's chunks: more blocks an install, fewer closes */
#define SB_SLOT_STRIDE 16 /* words: each slot in its own 128-byte line */
#define SB_MAX_ROOM ((1u << 17) - 1) /* chunks a growable pool's state has room for */
#define SB_TICKET_BITS 23
#define SB_FIRST_BIT 23   /* the first-life flag */
#define SB_LIMIT_SHIFT 24 /* 19 bits */
#define SB_CHUNK_SHIFT 43 /* 21 bits */
#define SB_COUNT_MASK ((1u << 25) - 1)
#define SB_CLASS_SHIFT 25
#define SB_RUN_MARK 31u   /* class field of a run's first chunk */
#define SB_STATE_SHIFT 30
enum { SB_FREE = 0, SB_ACTIVE = 1, SB_CLOSED = 2, SB_QUEUED = 3 };

#include "kdalloc/detail/port.h"
#include "kdalloc/alloc/slabbump_diag.h" /* SB_COUNT: -DKDA_DIAG's step counts, else nothing */

typedef struct kda_state {
    uint64_t *slots;       /* [n_slots * SB_SLOT_STRIDE] */
    uint32_t *status;      /* [chunks] */
    uint32_t *freed;       /* [chunks][words] */
    uint32_t *avail;       /* [chunks][words] */
    uint64_t *taken;       /* [ceil(chunks / 64)] */
    uint64_t *reusable;    /* [SB_CLASSES][ceil(chunks / 64)] */
    uint32_t *queued;      /* [SB_CLASSES] */
    uint32_t *free_chunks; /* the free set's size, at least */
    uint32_t *qhint;       /* [SB_CLASSES]: the queues' searches start here */
    uint32_t *run;         /* [chunks] */
    uint32_t *lock;        /* the runs' */
    uint32_t *hint;        /* the free set's searches start here: where the last one took a chunk */
    uint32_t chunks, chunk_bytes, words; /* chunks in the pool now (growth raises it); words: bitmap words a chunk */
    uint32_t chunk_shift;                /* log2(chunk_bytes) */
    uint32_t chunks_max;                 /* the chunks the state is laid out for: a growable pool's limit */
    uint32_t sets, classes;              /* slots: sets x classes (SM i takes set i % sets); classes usable */
} kda_state;

#include "kdalloc/detail/heap.h"

/* Tests' seams: with KDA_TEST_SEAMS (the host tests only) the steps named
 * below call sb_test_seam (tests/alloc/alloc_slabbump.c), which may stall the
 * thread there, so that a test can put another thread's steps in between.
 * Elsewhere they compile to nothing. */
enum { SB_SEAM_QUEUED = 1, SB_SEAM_COUNTED, SB_SEAM_INSTALLED };
#ifdef KDA_TEST_SEAMS
void sb_test_seam(int at, const kda_heap *h, uint32_t c, uint32_t n);
#define SB_SEAM(at, h, c, n) sb_test_seam(at, h, c, n)
#else
#define SB_SEAM(at, h, c, n) ((void)0)
#endif

KDA_HD uint32_t sb_popc(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return (uint32_t)__popc(x);
#else
    return (uint32_t)__builtin_popcount(x);
#endif
}

/* Class k's block: 16 x {1, 2, 3, 4, 6, 8, 12, ..., 768, 1024} bytes. */
KDA_HD uint32_t sb_block(uint32_t k) { return k == 0 ? 16u : (k % 2 ? 16u : 24u) << ((k + 1) / 2); }
/* x / sb_block(k) without a division by a variable (every free asks): a
 * block is 2^s or 3 x 2^s bytes, and floor(floor(x / 2^s) / 3) is
 * floor(x / (3 x 2^s)). */
KDA_HD uint32_t sb_div_block(uint32_t x, uint32_t k)
{
    uint32_t s = k == 0 ? 4u : (k % 2 ? 4u : 3u) + (k + 1) / 2;
    return k && k % 2 == 0 ? (x >> s) / 3u : x >> s;
}
KDA_HD uint32_t sb_blocks(const kda_heap *h, uint32_t k) { return sb_div_block(h->state.chunk_bytes, k); }
/* The bitmap words class k's blocks use (of the chunk's `words`): the
 * installs, claims and retires of larger classes touch only these. */
KDA_HD uint32_t sb_words_k(const kda_heap *h, uint32_t k) { return (sb_blocks(h, k) + 31) / 32; }
/* The smallest class that holds `need` bytes (a multiple of 16), without a
 * search (every malloc asks): in 16-byte units u, with 2^e <= u < 2^(e+1),
 * the classes 2^e (k = 2e - 1), 3 x 2^(e-1) (2e) and 2^(e+1) (2e + 1). */
KDA_HD uint32_t sb_class_of(const kda_heap *h, uint64_t need)
{
    uint64_t u = need / KDA_UNIT;
    if (u > sb_block(h->state.classes - 1) / KDA_UNIT) return SB_CLASSES; /* a run */
    if (u <= 1) return 0;
#ifdef __CUDA_ARCH__
    uint32_t e = 31 - (uint32_t)__clz((uint32_t)u);
#else
    uint32_t e = 31 - (uint32_t)__builtin_clz((uint32_t)u);
#endif
    if (u == (1ull << e)) return 2 * e - 1;
    return u <= 3ull << (e - 1) ? 2 * e : 2 * e + 1;
}
KDA_HD uint32_t sb_words_of(const kda_heap *h) { return (h->state.chunks + 63) / 64; }      /* searched */
KDA_HD uint32_t sb_words_max(const kda_heap *h) { return (h->state.chunks_max + 63) / 64; } /* laid out */
KDA_HD uint32_t sb_st_rows(uint32_t chunks_max) { return (chunks_max + 31) / 32; }
/* Chunk c's status word: the words of chunks c and c + 1 lie a row apart
 * (a row: chunks_max / 32 words), in different lines. */
KDA_HD uint32_t *sb_st(const kda_heap *h, uint32_t c)
{
    return h->state.status + (uint64_t)(c % 32) * sb_st_rows(h->state.chunks_max) + c / 32;
}
KDA_HD uint64_t *sb_slot(const kda_heap *h, uint32_t s) { return h->state.slots + (uint64_t)s * SB_SLOT_STRIDE; }
KDA_HD uint32_t *sb_fill(const kda_heap *h, uint32_t s) { return (uint32_t *)(sb_slot(h, s) + 1); }
KDA_HD uint32_t *sb_freed(const kda_heap *h, uint32_t c) { return h->state.freed + (uint64_t)c * h->state.words; }
KDA_HD uint32_t *sb_avail(const kda_heap *h, uint32_t c) { return h->state.avail + (uint64_t)c * h->state.words; }
KDA_HD uint64_t *sb_reusable(const kda_heap *h, uint32_t k) { return h->state.reusable + (uint64_t)k * sb_words_max(h); }

KDA_HD uint32_t sb_v_chunk(uint64_t v) { return (uint32_t)(v >> SB_CHUNK_SHIFT); }
KDA_HD uint32_t sb_v_limit(uint64_t v) { return (uint32_t)(v >> SB_LIMIT_SHIFT) & ((1u << 19) - 1); }
KDA_HD uint32_t sb_v_first(uint64_t v) { return (uint32_t)(v >> SB_FIRST_BIT) & 1u; }
KDA_HD uint32_t sb_v_ticket(uint64_t v) { return (uint32_t)v & ((1u << SB_TICKET_BITS) - 1); }
KDA_HD uint64_t sb_value(uint32_t c, uint32_t limit, uint32_t first)
{
    return (uint64_t)(c + 1) << SB_CHUNK_SHIFT | (uint64_t)limit << SB_LIMIT_SHIFT | (uint64_t)first << SB_FIRST_BIT;
}
KDA_HD uint32_t sb_state(uint32_t st) { return st >> SB_STATE_SHIFT; }
KDA_HD uint32_t sb_class1(uint32_t st) { return st >> SB_CLASS_SHIFT & 31u; }
KDA_HD uint32_t sb_status(uint32_t state, uint32_t class1, uint32_t count)
{
    return state << SB_STATE_SHIFT | class1 << SB_CLASS_SHIFT | count;
}
/* Queue for reuse at a quarter of the chunk's blocks freed. */
KDA_HD uint32_t sb_threshold(const kda_heap *h, uint32_t k)
{
    uint32_t q = sb_blocks(h, k) / 4;
    return q ? q : 1;
}

#endif
