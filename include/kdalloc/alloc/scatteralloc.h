/* scatteralloc.h - ScatterAlloc (Steinberger, Kenzel, Kainz, Schmalstieg
 * 2012, Sec. 5-6; Vinkler & Havran 2015, Sec. 4.3), written from the
 * paper's description and pseudo code.
 *
 * Pool.  Pages of KDA_SCATTERALLOC_PAGE_SIZE bytes (P: 4096, 8192 or
 * 16384, a CMake option) from the pool's start.  The pages are grouped
 * into SA_SUPER_BLOCKS super blocks of equal size (pages past the last
 * whole region of a super block serve large requests only), each super
 * block into regions of SA_REGION pages.  A page serves chunks of one size
 * S, set by the first request that takes it; up to 1024 chunks a page.
 *
 * State, outside the pool (kda_state; about 3.4% of the pool at 4 KiB):
 *   word[page]   64 bits: chunk size S (high half; 0: the page is free)
 *                and fill level (low half: chunks reserved on the page)
 *   sub[page][32] the page usage bit-field: one bit per chunk, up to 1024
 *                (a page of at most 32 chunks uses sub[page][0] alone)
 *   top[page]    hints for pages of more than 32 chunks: bit i says "word
 *                i of sub[] is full"; it may lag, and may outlive the page's
 *                split, so it is never read as a chunk's bit
 *   full[region] how many of the region's pages are full (fill = chunks)
 *   active       the super block where small requests start
 *   lock         the large requests' lock (one thread at a time)
 *   large_from   the first page of the last large block placed: the next
 *                large search starts below it (0: at the top)
 *
 * Invariants.
 *   - A page's chunk size changes only while its fill level is 0: from 0 to
 *     S by one CAS of the word, back to 0 by one CAS of (S, 0).
 *   - A reservation is one atomicAdd on the word, so it sees the size it
 *     reserved under; a chunk's bit is set only under a reservation, and
 *     only its holder clears it, before giving the reservation back.  On
 *     the GPU the clear may land after the give-back (nothing orders two
 *     relaxed atomics on different words): until it lands the bit reads as
 *     taken, in the page's next split too, so no one else can take it, and
 *     a reservation that finds no free bit waits for it.  Only sub[] holds
 *     chunks' bits; a late or stale hint in top costs a read, never a
 *     chunk.
 *   - full[r] changes exactly when a page's fill crosses between S's
 *     chunk count - 1 and the count, by the thread making the crossing.
 *     Two such changes by different threads are not ordered, so it may
 *     read one below its value for a moment (-1 at 0): it is read as
 *     signed (sa_full_pages).
 *
 * malloc(S) pads S to 16 bytes.  S <= P: hash the size, the SM and the
 * warp's slot on it to a page p = (S k_S + sm k_mp + warp (1 + 32 S / P))
 * mod pages-per-super-block of the active super block; walk the region's
 * pages (skipping regions with more than 9/10 of their pages full) for one
 * whose chunk size is in [S, 2S] (max_frag = 2) or unset (set it to S) and
 * that was not full when read; reserve a chunk with atomicAdd on the fill level,
 * then take the bit at lane mod chunks, or the next free one (the paper's
 * bit arithmetic).  All regions tried: the next super block (it becomes
 * the active one).  S > P: the single-thread path: under the lock, search
 * downwards from the last large block's first page (then from the pool's
 * top down to it) for ceil(S/P) consecutive free pages,
 * set each one's chunk size to S (CAS; a page taken meanwhile releases the
 * ones set and the search goes on below it).  The block's other pages
 * carry their distance to its first page, so that a search skips a large
 * block in one read.
 *
 * free(p): clear the chunk's bit, give back the reservation; the thread
 * that brings the fill to 0 retires the page (chunk size 0).  A free in a
 * super block that is not the active one makes it active, the more likely
 * the emptier its region.  A large block's pages are released (size 0).
 *
 * Repairs and departures (docs/alloc.md):
 *   - The chunk size and fill level share one word (the paper keeps two and
 *     retires a page by locking the fill level at its maximum): with two, a
 *     thread that read the old size can reserve on a page retired and
 *     re-split to another size meanwhile, and hand out overlapping chunks.
 *   - The second-level bit-fields live beside the page's entry, not on the
 *     page: a page re-split to a size of at most 32 chunks puts user data
 *     where the bit-fields were, and a later split would read it as bits.
 *   - A page of at most 32 chunks keeps its bits in sub[page][0], not in
 *     the first level (the paper's usage bit-field): a free's late clear of
 *     a hint, or a hint set after its word emptied, could otherwise land on
 *     the page's next split of at most 32 chunks as a live chunk's bit
 *     (freeing it: two blocks in one place) or as a taken one for good.
 *   - The paper's "next free spot" arithmetic rotates the used bits; the
 *     free ones are meant (a full mask gives a step of 0).
 *   - Large requests search from the top of the pool instead of super
 *     blocks set aside: no fixed split for the user to tune.  Each search
 *     starts where the last one placed its block, so that a burst of them
 *     does not read every block placed before (100,000 warps' 8 KiB
 *     blocks: quadratic, minutes).
 *   - The walk reads a page's fill level with its chunk size and passes a
 *     full page without the reservation and its return (two atomics a
 *     full page in the paper's tryUsePage).
 *   - A reservation that finds its page re-split to another size and
 *     makes it full counts that crossing in the region before it gives the
 *     reservation back (whose give-back uncounts it): otherwise the count
 *     dropped below 0 and hid the region from every later walk.  A split
 *     that keeps a fill already full for its size counts it as well.
 *   - A large block is below 2 GiB (its first page holds the size under
 *     SA_TAIL): larger requests get NULL.
 *   - The hash adds the warp's slot on its SM (%warpid) times one more
 *     than the pages a warp's 32 requests of size S fill, as the original
 *     code's configuration does (mallocMC's hashingDistWP and
 *     hashingDistWPRel, both 1): with the SM alone, every warp of an SM
 *     starts at the same page and walks past the pages its SM filled.
 */
#ifndef KDA_SCATTERALLOC_H
#define KDA_SCATTERALLOC_H

#include <stdio.h>

#define KDA_ALLOC_FREES 1
#define KDA_ALLOC_IN_POOL 1
#define KDA_ALLOC_REUSES_HOLES 1
#define KDA_ALLOC_SPACE_RESTORED 1 /* an emptied page is retired */
#define KDA_ALLOC_HOST 1
#define KDA_ALLOC_BUILDS 1
#ifndef KDA_SCATTERALLOC_PAGE_SIZE
#define KDA_SCATTERALLOC_PAGE_SIZE 4096
#endif
/* The page size is part of the name, as in the paper's tables. */
#define SA_STR(x) #x
#define SA_NAME(page) "ScatterAlloc " SA_STR(page)
#define KDA_ALLOC_NAME SA_NAME(KDA_SCATTERALLOC_PAGE_SIZE)
#define KDA_ALLOC_NO_GROW_WHY "its pages and super blocks are laid out, and hashed, over the whole pool: more memory means a new layout"
#define KDA_ALLOC_MIN_POOL (4ull * KDA_SCATTERALLOC_PAGE_SIZE) /* a few pages */
/* Larger requests search the page table under the lock. */
#define KDA_ALLOC_SERIAL_ABOVE ((uint64_t)KDA_SCATTERALLOC_PAGE_SIZE)
#define SA_PAGE ((uint64_t)KDA_SCATTERALLOC_PAGE_SIZE)
#define SA_REGION 16u       /* pages a region */
#define SA_SUPER_BLOCKS 8u  /* super blocks of a pool of at least 8 regions */
#define SA_MAX_CHUNKS 1024u /* chunks a page: 32 x 32 bits */
#define SA_MAX_FRAG 2u      /* a chunk may be up to twice the request */
#define SA_K_SIZE 38183u    /* the hash's factors (primes): similar sizes */
#define SA_K_SM 17497u      /* meet on pages of their size; SMs spread */

#include "kdalloc/detail/port.h"

/* The state (kda_alloc_bind lays it out in the state block). */
typedef struct kda_state {
    uint64_t *word;        /* [pages] chunk size << 32 | fill level */
    uint32_t *top;         /* [pages] hints: bit i, word i of sub[] full */
    uint32_t *sub;         /* [pages][32] the usage bit-field, a bit a chunk */
    uint32_t *full;        /* [regions] full pages of the region */
    uint32_t *active;      /* the super block where small requests start */
    uint32_t *lock;        /* the large requests' lock */
    uint32_t *large_from;  /* their next search starts below this page (0: at the top) */
    uint32_t pages;        /* in the pool */
    uint32_t super_blocks; /* SA_SUPER_BLOCKS, or 1 for a small pool */
} kda_state;

#include "kdalloc/detail/heap.h"
#include "scatteralloc_diag.h"

KDA_HD uint64_t *sa_word(const kda_heap *h, uint32_t page) { return h->state.word + page; }
KDA_HD uint32_t *sa_top(const kda_heap *h, uint32_t page) { return h->state.top + page; }
KDA_HD uint32_t *sa_sub(const kda_heap *h, uint32_t page, uint32_t i) { return h->state.sub + (uint64_t)page * 32 + i; }
KDA_HD uint32_t *sa_full(const kda_heap *h, uint32_t region) { return h->state.full + region; }
/* A region's full pages, signed: it may read one short for a moment (the invariants). */
KDA_FN int32_t sa_full_pages(const kda_heap *h, uint32_t region) { return (int32_t)kda_load32(sa_full(h, region)); }
KDA_HD uint32_t sa_regions(uint32_t pages) { return (pages + SA_REGION - 1) / SA_REGION; }
KDA_FN uint32_t *sa_active(const kda_heap *h) { return h->state.active; }
KDA_FN uint32_t *sa_lock(const kda_heap *h) { return h->state.lock; }
/* Pages a super block: whole regions. */
KDA_FN uint32_t sa_sb_pages(const kda_heap *h)
{
    uint32_t n = h->state.pages / h->state.super_blocks;
    return n >= SA_REGION ? n / SA_REGION * SA_REGION : n; /* a pool of one region at most: all its pages */
}

KDA_HD uint32_t sa_chunks(uint64_t chunk)
{
    uint64_t n = SA_PAGE / chunk;
    return (uint32_t)(n < SA_MAX_CHUNKS ? n : SA_MAX_CHUNKS);
}
KDA_HD uint64_t sa_pack(uint64_t chunk, uint64_t fill) { return chunk << 32 | fill; }
KDA_HD uint64_t sa_size_of(uint64_t word) { return word >> 32; }
KDA_HD uint32_t sa_fill_of(uint64_t word) { return (uint32_t)word; }

/* Gives back one reservation on `page`; returns the word before.  The
 * thread that empties the page retires it; the one that makes a full page
 * non-full says so in its region. */
KDA_FN uint64_t sa_unreserve(const kda_heap *h, uint32_t page)
{
    uint64_t old = kda_add64(sa_word(h, page), ~(uint64_t)0); /* fill - 1 (it is >= 1: ours) */
    KDA_ASSERT(sa_fill_of(old) >= 1, "a reservation given back was taken: the fill level is >= 1");
    uint64_t chunk = sa_size_of(old);
    if (chunk && chunk <= SA_PAGE) {
        if (sa_fill_of(old) == sa_chunks(chunk)) kda_add32(sa_full(h, page / SA_REGION), ~0u);
        if (sa_fill_of(old) == 1) kda_cas64(sa_word(h, page), sa_pack(chunk, 0), 0);
    }
    return old;
}

/* Takes a free bit among the n low bits of *bits, first trying `spot`;
 * -1 when all n are taken. */
KDA_FN int sa_take_bit(uint32_t *bits, uint32_t n, uint32_t spot, sa_diag *d)
{
    uint32_t all = n == 32 ? ~0u : (1u << n) - 1;
    for (;;) {
        SA_COUNT(d, SA_D_BIT_TRIES, 1);
        uint32_t mask = 1u << spot;
        uint32_t old = kda_or32(bits, mask);
        if (!(old & mask)) return (int)spot;
        uint64_t free_bits = ~old & all;
        if (!free_bits) return -1;
        /* the free bits rotated so that bit 0 is the spot after `spot` */
        uint32_t rot = (uint32_t)(((free_bits >> (spot + 1)) | (free_bits << (n - spot - 1))) & all);
        spot = (spot + (uint32_t)kda_ffs32(rot)) % n;
    }
}

/* tryUsePage: reserve a chunk of `chunk` bytes on `page` and take its bit. */
KDA_FN void *sa_try_page(const kda_heap *h, uint32_t page, uint64_t chunk, sa_diag *d)
{
    SA_COUNT(d, SA_D_RESERVES, 1);
    uint64_t old = kda_add64(sa_word(h, page), 1), now = sa_size_of(old);
    uint32_t chunks = sa_chunks(chunk);
    if (now != chunk || sa_fill_of(old) >= chunks) { /* re-split meanwhile, or full */
        SA_COUNT(d, SA_D_UNRESERVES, 1);
        /* A page re-split to another size may be made full by this add: the
         * crossing is counted, as every crossing is, so that the give-back
         * that uncounts it leaves the region's count as it was. */
        if (now != chunk && now && now <= SA_PAGE && sa_fill_of(old) + 1 == sa_chunks(now))
            kda_add32(sa_full(h, page / SA_REGION), 1);
        sa_unreserve(h, page);
        return NULL;
    }
    if (sa_fill_of(old) + 1 == chunks) kda_add32(sa_full(h, page / SA_REGION), 1);
    uint32_t lane = kda_lane_id();
    int spot;
    if (chunks <= 32) {
        while ((spot = sa_take_bit(sa_sub(h, page, 0), chunks, lane % chunks, d)) < 0) kda_pause();
    } else {
        /* Two levels: sub-words marked full in top are skipped on a first
         * pass and read anyway after it (the marks are hints).  Our
         * reservation guarantees a free bit, or one whose holder's late
         * clear is on its way. */
        uint32_t words = (chunks + 31) / 32, first = lane % words;
        for (uint32_t i = 0;; i++) {
            uint32_t w = (first + i) % words;
            uint32_t n = w + 1 < words ? 32 : chunks - 32 * w;
            if (i < words && (kda_load32(sa_top(h, page)) >> w & 1u)) continue;
            int bit = sa_take_bit(sa_sub(h, page, w), n, lane % n, d);
            if (bit < 0 || (kda_load32(sa_sub(h, page, w)) | (n == 32 ? 0u : ~0u << n)) == ~0u)
                kda_or32(sa_top(h, page), 1u << w);
            if (bit >= 0) {
                spot = (int)(32 * w + (uint32_t)bit);
                break;
            }
            if (i >= 4 * words) kda_pause();
        }
    }
    KDA_ASSERT(spot >= 0 && (uint32_t)spot < chunks, "a chunk's bit lies within the page's chunk count");
    return h->base + (uint64_t)page * SA_PAGE + (uint64_t)spot * chunk;
}

/* alloc(Superblock, S): one super block's regions, from the hashed page. */
KDA_FN void *sa_alloc_in(const kda_heap *h, uint32_t sb, uint64_t size, sa_diag *d)
{
    uint32_t sb_pages = sa_sb_pages(h), regions = (sb_pages + SA_REGION - 1) / SA_REGION, first = sb * sb_pages;
    /* The paper hashes the size and the SM; the warp's slot on the SM, at
     * a distance of the pages a warp's requests of this size fill, spreads
     * an SM's warps over pages of their own (see the header). */
    uint64_t warp = (uint64_t)kda_warp_on_sm() * (1 + 32 * size / SA_PAGE);
    uint32_t p = (uint32_t)((size * SA_K_SIZE + (uint64_t)kda_sm_id() * SA_K_SM + warp) % sb_pages);
    uint64_t most = size * SA_MAX_FRAG;
    for (uint32_t tried = 0; tried <= regions; tried++) { /* the first region twice: from p, then whole */
        uint32_t region = p / SA_REGION, end = (region + 1) * SA_REGION < sb_pages ? (region + 1) * SA_REGION : sb_pages;
        SA_COUNT(d, SA_D_REGIONS, 1);
        if (sa_full_pages(h, (first + p) / SA_REGION) * 10 <= (int32_t)SA_REGION * 9) {
            for (; p < end; p++) {
                uint32_t page = first + p;
                SA_COUNT(d, SA_D_PAGES, 1);
                uint64_t word = kda_load64(sa_word(h, page)), chunk = sa_size_of(word);
                if (chunk == 0) { /* a free page: split it for this size */
                    while (sa_size_of(word) == 0) {
                        uint64_t seen = kda_cas64(sa_word(h, page), word, sa_pack(size, sa_fill_of(word)));
                        if (seen == word) {
                            SA_COUNT(d, SA_D_SPLITS, 1);
                            /* The fill it keeps is refused reservations not
                             * yet given back (their adds met size 0 and
                             * counted no crossing): if it is already this
                             * size's chunk count, the page is full now, and
                             * the give-back that brings it below is counted
                             * down; count it up here, or full[r] wraps. */
                            if (sa_fill_of(word) >= sa_chunks(size)) kda_add32(sa_full(h, page / SA_REGION), 1);
                            break;
                        }
                        word = seen;
                    }
                    chunk = sa_size_of(word) ? sa_size_of(word) : size;
                }
                if (chunk >= size && chunk <= most && chunk <= SA_PAGE) {
                    if (sa_fill_of(word) >= sa_chunks(chunk)) { /* full when read: no reservation tried */
                        SA_COUNT(d, SA_D_FILL_SKIPS, 1);
                        continue;
                    }
                    void *loc = sa_try_page(h, page, chunk, d);
                    if (loc) return loc;
                } else {
                    SA_COUNT(d, SA_D_SIZE_MISSES, 1);
                }
            }
        } else {
            SA_COUNT(d, SA_D_REGIONS_FULL, 1);
        }
        p = end % sb_pages;
    }
    return NULL;
}

/* A large block's pages: the first holds the block's size, page i > 0 of
 * it holds SA_TAIL | i, so that a search meeting its last page skips it. */
#define SA_TAIL 0x80000000u
KDA_HD uint64_t sa_large_mark(uint64_t size, uint32_t i) { return sa_pack(i ? SA_TAIL | i : size, 0); }

/* The single-thread path for requests larger than a page. */
KDA_FN void *sa_alloc_large(const kda_heap *h, uint64_t size, sa_diag *d)
{
    uint32_t need = (uint32_t)((size + SA_PAGE - 1) / SA_PAGE);
    if (need > h->state.pages || size >= SA_TAIL) return NULL; /* the first page's mark holds the size below SA_TAIL */
    while (kda_cas32(sa_lock(h), 0, 1) != 0) {
        SA_COUNT(d, SA_D_LOCK_SPINS, 1);
        kda_pause();
    }
    void *got = NULL;
    /* Look for `need` free pages in a row, downwards from where the last
     * large block was placed to the bottom, then from the pool's top page
     * down to there (and the need - 1 pages below it, for a run across it);
     * then take them, from the lowest up.  A page that small requests took
     * meanwhile gives back the ones taken, and the search goes on below it.
     * Starting at the last block, not the top, a request passes the blocks
     * placed since the pages above were searched only after the bottom. */
    uint32_t pages = h->state.pages, start = kda_load32(h->state.large_from);
    if (start == 0 || start > pages) start = pages;
    for (uint32_t sweep = 0; sweep < 2 && !got; sweep++) {
        int64_t top = sweep ? (int64_t)pages - 1 : (int64_t)start - 1;
        int64_t bottom = sweep ? (int64_t)start - need + 1 : 0;
        if (sweep && start == pages) break; /* the first sweep searched them all */
        uint32_t run = 0;
        for (int64_t q = top; q >= (bottom > 0 ? bottom : 0) && !got; q--) {
            SA_COUNT(d, SA_D_LARGE_PAGES, 1);
            uint64_t word = kda_load64(sa_word(h, (uint32_t)q));
            if (word != 0) {
                run = 0;
                if (sa_size_of(word) & SA_TAIL) q -= sa_size_of(word) & ~SA_TAIL; /* to the block's first page */
                continue;
            }
            if (++run < need) continue;
            uint32_t lo = (uint32_t)q, i = 0;
            while (i < need && kda_cas64(sa_word(h, lo + i), 0, sa_large_mark(size, i)) == 0) i++;
            if (i == need) {
                got = h->base + (uint64_t)lo * SA_PAGE;
                kda_store32(h->state.large_from, lo);
            } else {
                for (uint32_t j = 0; j < i; j++) kda_add64(sa_word(h, lo + j), (uint64_t)0 - sa_large_mark(size, j));
                q = lo + i; /* the loop steps below the page that was taken */
                run = 0;
            }
        }
    }
    kda_fence();
    kda_store32(sa_lock(h), 0);
    return got;
}

KDA_FN void *kda_malloc(const kda_heap *h, uint64_t size)
{
    if (size == 0 || size > h->bytes) return NULL;
    size = (size + KDA_UNIT - 1) & ~(uint64_t)(KDA_UNIT - 1);
    sa_diag d = {{0}};
    long long started = SA_DIAG_CLOCK();
    void *p = NULL;
    if (size > SA_PAGE) {
        p = sa_alloc_large(h, size, &d);
        sa_diag_add(&d, 1, started, p != NULL);
        return p;
    }
    uint32_t active = kda_load32(sa_active(h));
    for (uint32_t k = 0; k < h->state.super_blocks && !p; k++) {
        uint32_t sb = (active + k) % h->state.super_blocks;
        SA_COUNT(&d, SA_D_SUPER_BLOCKS, 1);
        p = sa_alloc_in(h, sb, size, &d);
        if (p && k) kda_store32(sa_active(h), sb);
    }
    sa_diag_add(&d, 0, started, p != NULL);
    return p;
}

KDA_FN void kda_free(const kda_heap *h, void *ptr)
{
    if (!ptr) return;
    uint64_t offset = (uint64_t)((unsigned char *)ptr - h->base);
    uint32_t page = (uint32_t)(offset / SA_PAGE);
    uint64_t chunk = sa_size_of(kda_load64(sa_word(h, page)));
    KDA_ASSERT(page < h->state.pages && chunk != 0, "a freed block's page is split to a chunk size");
    kda_fence(); /* our stores to the block land before it is free */
    if (chunk > SA_PAGE) { /* a large block: release its pages */
        uint32_t pages = (uint32_t)((chunk + SA_PAGE - 1) / SA_PAGE);
        for (uint32_t i = 0; i < pages; i++) kda_add64(sa_word(h, page + i), (uint64_t)0 - sa_large_mark(chunk, i));
        return;
    }
    uint32_t spot = (uint32_t)(offset % SA_PAGE / chunk);
    kda_and32(sa_sub(h, page, spot / 32), ~(1u << spot % 32));
    if (sa_chunks(chunk) > 32) kda_and32(sa_top(h, page), ~(1u << spot / 32)); /* the word is not full now */
    sa_unreserve(h, page);
    /* Reactivate this super block, the likelier the emptier its region. */
    uint32_t sb = page / sa_sb_pages(h);
    if (sb < h->state.super_blocks && sb != kda_load32(sa_active(h))) {
        int32_t full = sa_full_pages(h, page / SA_REGION);
        int32_t dice = (int32_t)((uint32_t)(offset >> 4) * 2654435761u >> 26); /* 0..63 */
        if (full < (int32_t)SA_REGION && dice < (int32_t)SA_REGION - full) kda_store32(sa_active(h), sb);
    }
}

static inline uint64_t kda_alloc_bind(kda_heap *h, unsigned char *block)
{
    kda_state *s = &h->state;
    kda_carver c = {block, 0};
    s->word = (uint64_t *)kda_carve(&c, (uint64_t)s->pages * sizeof *s->word);
    s->top = (uint32_t *)kda_carve(&c, (uint64_t)s->pages * sizeof *s->top);
    s->sub = (uint32_t *)kda_carve(&c, (uint64_t)s->pages * 32 * sizeof *s->sub);
    s->full = (uint32_t *)kda_carve(&c, (uint64_t)sa_regions(s->pages) * sizeof *s->full);
    s->active = (uint32_t *)kda_carve(&c, sizeof *s->active);
    s->lock = (uint32_t *)kda_carve(&c, sizeof *s->lock);
    s->large_from = (uint32_t *)kda_carve(&c, sizeof *s->large_from);
    return c.used;
}

static inline int kda_alloc_plan(kda_heap *h, kda_plan *plan, uint64_t bytes, uint32_t n_sms, char *err,
                                 size_t errlen)
{
    (void)n_sms;
    uint64_t pages = bytes / SA_PAGE;
    if (pages > SA_TAIL - 1) {
        snprintf(err, errlen, "ScatterAlloc addresses at most %u pages of %llu B: a pool of %.1f GiB has %llu",
                 SA_TAIL - 1, (unsigned long long)SA_PAGE, (double)bytes / (1u << 30), (unsigned long long)pages);
        return -1;
    }
    h->state.pages = (uint32_t)pages;
    h->state.super_blocks = pages >= (uint64_t)SA_SUPER_BLOCKS * SA_REGION ? SA_SUPER_BLOCKS : 1;
    plan->state_bytes = plan->clear_bytes = kda_alloc_bind(h, NULL);
    return 0;
}

/* From a host copy of the state: the free bytes and the largest block one
 * request could get; and the bytes of what serves the block at `offset`. */
static inline void kda_alloc_space(const kda_heap *h, kda_space *space)
{
    uint64_t run = 0, *free_bytes = &space->free_bytes, *largest = &space->largest_block;
    *free_bytes = *largest = 0;
    space->known = 1;
    for (uint32_t page = 0; page < h->state.pages; page++) {
        uint64_t word = *sa_word(h, page), chunk = sa_size_of(word);
        if (word == 0) {
            *free_bytes += SA_PAGE;
            run += SA_PAGE;
            if (run > *largest) *largest = run;
            continue;
        }
        run = 0;
        if (chunk > SA_PAGE) continue; /* a large block's page */
        uint32_t chunks = sa_chunks(chunk), fill = sa_fill_of(word);
        if (fill < chunks) {
            *free_bytes += (chunks - fill) * chunk;
            if (chunk > *largest) *largest = chunk;
        }
    }
}
#define KDA_ALLOC_HAS_BLOCK_BYTES 1
static inline uint64_t kda_alloc_block_bytes(const kda_heap *h, uint64_t offset)
{
    uint64_t chunk = sa_size_of(*sa_word(h, (uint32_t)(offset / SA_PAGE)));
    return chunk > SA_PAGE ? (chunk + SA_PAGE - 1) / SA_PAGE * SA_PAGE : chunk;
}

KDA_FN void kda_alloc_reset_item(const kda_heap *h, uint64_t i) { (void)h, (void)i; }
KDA_FN void kda_alloc_reset_finish(const kda_heap *h) { (void)h; }

#endif
