/* gpu_build_types.cuh - the build kernel's data (included by gpu_kernel.cuh):
 * its tuning constants, task and big-node slot, the build's state and
 * parameters, shared memory, a warp's context, and the small helpers
 * every part of the kernel uses (profile counters, errors, broadcasts). */
#ifndef KDA_GPU_BUILD_TYPES_CUH
#define KDA_GPU_BUILD_TYPES_CUH

#include "kdalloc/kdalloc.h"
#include "gpu_queue.cuh"
#include "gpu_sah.cuh"

/* The tuning constants KDA_BUILD_* may be overridden at compile time for
 * experiments (-DKDA_BUILD_SLOTS=32u through CMAKE_CUDA_FLAGS or a target's
 * definitions); the defaults were measured best on an H200 or an H100, as
 * docs/experiments/builder.md#build-kernel says for each.  The others here are
 * fixed by the layout. */
#ifndef KDA_BUILD_WARPS_PER_BLOCK
#define KDA_BUILD_WARPS_PER_BLOCK 8
#endif
/* References per chunk of a big node: the scene's N / KDA_BUILD_CHUNK_SHARE
 * rounded up to a power of two, within [KDA_BUILD_CHUNK_MIN, CHUNK_MAX], so
 * that the top of the tree splits into chunks enough to keep many warps
 * busy but not so many that their merges into the node's bins contend
 * (H200: 128 is best for Sponza and Sibenik, 256 for Conference, 512 for
 * 10M triangles).  At most 512: a SCATTER chunk keeps two bits of sides per
 * lane and step in one word. */
#ifndef KDA_BUILD_CHUNK_MIN
#define KDA_BUILD_CHUNK_MIN 128
#endif
#define CHUNK_MAX 512
#ifndef KDA_BUILD_CHUNK_SHARE
#define KDA_BUILD_CHUNK_SHARE 2048
#endif
/* A node of more than build_params.big_node references is split by many
 * warps: KDA_BUILD_BIG_CHUNKS chunks' worth, at least
 * KDA_BUILD_BIG_NODE_MIN, so 512 for chunks of 128, 1024 for 256 and 2048
 * for 512.  A big node costs a slot, two phases and their hand-overs
 * whatever its size, and a large scene has many just above the threshold:
 * with 1024 and chunks of 512, claiming slots from a ring of slot ids (the
 * free-slot bitmap's predecessor) took 15% of all warp cycles of the
 * 10M-triangle build, and 2048 builds it 40% faster.  With chunks of 128
 * (scenes below 256K triangles), 512 builds the Teapot 5% faster than 1024
 * and the others alike; two chunks' worth (256) is slower, and two or three
 * chunks' worth are no better overall with the bitmap's cheaper slots
 * (H100). */
#ifndef KDA_BUILD_BIG_NODE_MIN
#define KDA_BUILD_BIG_NODE_MIN 512
#endif
#ifndef KDA_BUILD_BIG_CHUNKS
#define KDA_BUILD_BIG_CHUNKS 4
#endif
#define OUT_BATCH 1024   /* leaf references a warp reserves at once */
#ifndef KDA_BUILD_LOCAL_TASKS
#define KDA_BUILD_LOCAL_TASKS 16 /* a warp's own stack of node tasks (a power of two) */
#endif
#define BLOCK_TASKS 16   /* tasks the warps of a block hand to each other */
#ifndef KDA_BUILD_GLOBAL_CHECK
#define KDA_BUILD_GLOBAL_CHECK 16 /* nodes between a busy warp's looks at global counters */
#endif
#ifndef KDA_BUILD_SHARE_MIN
#define KDA_BUILD_SHARE_MIN 64u /* a child this large goes to the global queue at once while warps are hungry */
#endif
#ifndef KDA_BUILD_IDLE_SLEEP_STEPS
#define KDA_BUILD_IDLE_SLEEP_STEPS 4 /* an idle warp sleeps 32, 64, ... ns between looks, at most 32 << this */
#endif
#ifndef KDA_BUILD_SLOTS
#define KDA_BUILD_SLOTS 1024u /* big nodes in flight at once (a multiple of 32, at most 1024) */
#endif
#define SLOT_WORDS (KDA_BUILD_SLOTS / 32u) /* the free slots' bitmap: one bit a slot */
#define NO_SLOT 0xffffffffu
#define NO_TICKET 0xffffffffu

enum { PHASE_BIN = 0, PHASE_SCATTER = 1 };
enum {
    BUILD_OK = 0,
    BUILD_POOL_EXHAUSTED, /* the allocator returned NULL (a pool that cannot grow) */
    BUILD_QUEUE_FULL,     /* these three: grow the array and build again */
    BUILD_NODES_FULL,
    BUILD_REFS_FULL,
    BUILD_CORRUPT,        /* a reference out of range, or a child of the wrong
                             size: memory was overwritten (AWMalloc's wrap) */
};

/* A queue entry: a node task (slot == NO_SLOT), or chunk `n` of phase
 * `level` of the big node in slot `slot`.  A node task's level is its
 * depth and reference budget in one word (kdtree.h). */
typedef struct __align__(16) task {
    float lo[3], hi[3];
    uint32_t *refs;
    uint32_t n;
    uint32_t node;
    uint32_t level;
    uint32_t slot;
} task;

typedef struct big_slot {
    task t;                     /* the node */
    uint32_t bins[2][3][GPU_BINS]; /* counts of tri_lo / tri_hi bins per axis (16-byte aligned: read as uint4) */
    uint32_t n_chunks, done;    /* chunks in a phase, chunks finished */
    uint32_t axis, k;           /* the split chosen after BIN */
    float split;
    uint32_t n_left, n_right;
    uint32_t left_cursor, right_cursor;
    uint32_t *left, *right;
} big_slot;

/* A triangle's bounding box (w unused), in one 32-byte sector: a box
 * loaded by reference, as every node loads its references' boxes, costs
 * one sector, not one from each of two arrays (lo and hi apart, until
 * this layout, the 10M-triangle build took 1.13x as long and the Dragon's
 * 1.013x; H100, docs/experiments/builder.md#build-kernel). */
typedef struct __align__(32) tri_box {
    float4 lo, hi;
} tri_box;

/* A counter alone in its 128-byte line: the hot ones are hit by atomics
 * from every warp, and must not also slow down each other's readers. */
typedef struct __align__(128) line_u32 {
    uint32_t v;
} line_u32;

/* Where the warps' time goes (the warm-up build only; --profile). */
enum {
    PROF_IDLE,    /* cycles waiting for work */
    PROF_NODE,    /* cycles in nodes done by one warp, allocation included */
    PROF_ALLOC,   /* cycles in kda_malloc */
    PROF_FREE,    /* cycles in kda_free */
    PROF_CHUNK,   /* cycles in chunks of big nodes */
    PROF_NODES,   /* nodes done by one warp */
    PROF_CHUNKS,  /* chunks done */
    PROF_POPS,    /* entries taken from the global queue */
    PROF_SHARED,  /* node tasks given to the global queue */
    PROF_COUNT
};

#ifdef KDA_TIMELINE
/* -DKDA_TIMELINE: the warm-up build records, per TIMELINE_NS of its run,
 * how many warps started work (+1) or ran out of it (-1) and how many
 * nodes and chunks were finished; kdalloc build prints it, the first
 * series summed to the warps with work (gpu_build_report.cuh).  With
 * -DKDA_TIMELINE_TIMED every build records it, and the last timed build's
 * is printed as well. */
#define TIMELINE_NS 10000
#define TIMELINE_BUCKETS 4096
enum { TL_BUSY, TL_NODES, TL_CHUNKS, TL_SERIES };
#endif

#ifdef KDA_PROBE
/* -DKDA_PROBE: the warm-up build adds up lane 0's cycles (clock64) in each
 * part of big nodes' chunks, and how long chunk entries waited in the
 * queue (%globaltimer, stamped into the entry at its push); for nodes done
 * by one warp, the tasks they gave away and the exact split's cycles and
 * candidates.  kdalloc build prints them (gpu_build_report.cuh). */
enum {
    PROBE_BIN_SETUP, PROBE_BIN_BINNING, PROBE_BIN_MERGE, PROBE_BIN_HANDOVER, PROBE_BIN_SPLIT,
    PROBE_SCATTER_SETUP, PROBE_SCATTER_CLASSIFY, PROBE_SCATTER_RESERVE, PROBE_SCATTER_WRITE, PROBE_SCATTER_HANDOVER,
    PROBE_SCATTER_CHILDREN, PROBE_BIN_CHUNKS, PROBE_SCATTER_CHUNKS, PROBE_QUEUE_NS, PROBE_QUEUED,
    PROBE_BIG_SPLITS, PROBE_SPLIT_CHOOSE, PROBE_SPLIT_ALLOC, /* big nodes split after BIN: count, reading bins and choosing, allocating */
    PROBE_PUBLISH_NS, /* chunk entries: ns from the start of their push to its publication, summed */
    PROBE_CHECKED_NS, /* the same, to when its cells were reserved and checked free */
    /* nodes done by one warp, the exact split's cycles and count by size, its candidates, donations */
    PROBE_NODES, PROBE_EXACT_8, PROBE_EXACT_16, PROBE_EXACT_32, PROBE_EXACT_64,
    PROBE_EXACTS_8, PROBE_EXACTS_16, PROBE_EXACTS_32, PROBE_EXACTS_64,
    PROBE_CANDIDATES, PROBE_CANDIDATES_INSIDE, PROBE_PASSES, PROBE_PASSES_INSIDE,
    PROBE_DONATES_BLOCK, PROBE_DONATES_GLOBAL, PROBE_PARTS
};
#endif

/* Counters of one build, zeroed before it. */
typedef struct build_state {
    line_u32 pending;  /* entries pushed and not finished */
    line_u32 hungry;   /* warps that found the queue empty */
    line_u32 error;    /* the first BUILD_* error */
    line_u32 n_nodes;
    line_u32 refs_out; /* reserved length of the output references */
    line_u32 q_head, q_tail;
    uint32_t slot_free[SLOT_WORDS] __attribute__((aligned(128))); /* bit i of word w: slot 32 w + i is free */
    line_u32 slots_free; /* how many bits are set, about (a claim looks at it first) */
    line_u32 park;     /* the pool ran out and may grow: spill, do not start work */
    line_u32 spilled;  /* node tasks in the spill array */
    unsigned long long n_alloc, alloc_bytes, alloc_sq;
    unsigned long long live_bytes, peak_bytes;
    unsigned long long profile[PROF_COUNT];
    uint32_t *root_refs;
#ifdef KDA_PROBE
    unsigned long long probe[PROBE_PARTS];
#endif
#ifdef KDA_TIMELINE
    unsigned long long t0; /* %globaltimer when the first warp started */
    int timeline[TIMELINE_BUCKETS][TL_SERIES];
#endif
} build_state;

typedef struct build_params {
    kda_heap heap;
    const tri_box *boxes;    /* triangles' bounding boxes */
    build_state *state;
    task *cells;
    ring queue;
    big_slot *slots;
    task *spill;             /* node tasks kept while the build parks (as many as the queue) */
    uint2 *out_left;         /* each warp's unused leaf-reference reservation (out_pos, out_end),
                              * kept from a parked launch for the next (build_kernel_parking) */
    int can_park;            /* the pool can grow: build_kernel_parking, and root_setup parks */
    kdtree_node *nodes;
    uint32_t node_capacity;
    uint32_t *refs_out;
    uint32_t refs_capacity;
    uint32_t n_triangles;
    uint32_t chunk;          /* references per chunk of a big node (KDA_BUILD_CHUNK_MIN .. CHUNK_MAX) */
    uint32_t big_node;       /* nodes with more references are big: split by many warps */
    uint32_t max_depth;
} build_params;

typedef struct warp_smem {
    union { /* a node is split either by bins or exactly; a SCATTER chunk keeps its references */
        uint32_t bins[2][3][GPU_BINS];
        exact_boxes exact;
        uint32_t staged[CHUNK_MAX];
    };
    task popped;
    task stack[KDA_BUILD_LOCAL_TASKS]; /* a ring: tasks bottom .. bottom + count - 1 */
    unsigned long long profile[PROF_COUNT]; /* when collecting statistics */
    /* Arrays this warp allocated: count, bytes, squared bytes (kept out of
     * the registers, which the hot loops need). */
    unsigned long long alloc_stats[3];
    uint32_t spare_slot; /* a big node's slot that its last chunk's warp keeps for a big child (lane 0), or NO_SLOT */
} warp_smem;

/* What the warps of a block share: tasks handed over, guarded by a lock. */
typedef struct block_smem {
    task tasks[BLOCK_TASKS];
    int count;
    int lock;
    int idle;   /* warps of this block without work */
    int seeker; /* one warp of the block polls the global queue */
    int done;   /* the build is over (or failed) */
} block_smem;

/* What a warp carries (counters: lane 0's copy counts). */
typedef struct warp_ctx {
    const build_params *p;
    warp_smem *sm;
    block_smem *bs;
    uint32_t lane;
    uint32_t since_check; /* nodes since the last look at global counters */
    uint32_t bottom, count;    /* the local stack */
    uint32_t out_pos, out_end; /* leaf references reserved, not yet used */
    uint32_t ticket;           /* the block's seeker: its queue position, or NO_TICKET */
    int can_park;              /* a constant: the kernel for a growable pool (gpu_kernel.cuh) */
    int stats;                 /* a constant: the warm-up build's kernel, which profiles (gpu_kernel.cuh) */
#ifdef KDA_TIMELINE
    unsigned long long t0;
#endif
} warp_ctx;

static __device__ __forceinline__ long long prof_start(const warp_ctx *c)
{
    return c->stats ? clock64() : 0;
}

static __device__ __forceinline__ void prof_add(warp_ctx *c, int what, long long start)
{
    if (c->stats && c->lane == 0) c->sm->profile[what] += (unsigned long long)(clock64() - start);
}

static __device__ __forceinline__ void prof_count(warp_ctx *c, int what)
{
    if (c->stats && c->lane == 0) c->sm->profile[what]++;
}

#if defined(KDA_TIMELINE) || defined(KDA_PROBE)
static __device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#endif

#ifdef KDA_TIMELINE

/* Lane 0 adds v to a series of the timeline, in the bucket of now: of the
 * warm-up build, or with KDA_TIMELINE_TIMED of every build (the last timed
 * one is printed; its kernel then carries the timeline's atomics). */
static __device__ __forceinline__ void timeline_add(const warp_ctx *c, int series, int v)
{
#ifdef KDA_TIMELINE_TIMED
    if (c->lane != 0) return;
#else
    if (!c->stats || c->lane != 0) return;
#endif
    unsigned long long b = (global_ns() - c->t0) / TIMELINE_NS;
    atomicAdd(&c->p->state->timeline[b < TIMELINE_BUCKETS ? b : TIMELINE_BUCKETS - 1][series], v);
}
#define TIMELINE_ADD(c, series, v) timeline_add(c, series, v)
#else
#define TIMELINE_ADD(c, series, v) ((void)0)
#endif

#ifdef KDA_PROBE
/* Lane 0 adds v to probe counter `what` (the warm-up build only). */
static __device__ __forceinline__ void probe_add(const warp_ctx *c, int what, unsigned long long v)
{
    if (c->stats && c->lane == 0) atomicAdd(&c->p->state->probe[what], v);
}
/* Lane 0 adds the cycles since *since to part `what`, and restarts *since. */
static __device__ __forceinline__ void probe_mark(const warp_ctx *c, int what, long long *since)
{
    long long now = clock64();
    probe_add(c, what, (unsigned long long)(now - *since));
    *since = now;
}
static __device__ __forceinline__ void probe_count(const warp_ctx *c, int what) { probe_add(c, what, 1ull); }
#define PROBE_START long long probe_since = clock64()
#define PROBE_MARK(c, what) probe_mark(c, what, &probe_since)
#define PROBE_COUNT(c, what) probe_count(c, what)
/* The exact split's cycles and count, by the node's size (at most 8, 16, 32, 64). */
#define PROBE_EXACT(c, n)                                                                                  \
    do {                                                                                                   \
        int size_class_ = (n) <= 8 ? 0 : (n) <= 16 ? 1 : (n) <= 32 ? 2 : 3;                               \
        PROBE_MARK(c, PROBE_EXACT_8 + size_class_);                                                        \
        PROBE_COUNT(c, PROBE_EXACTS_8 + size_class_);                                                      \
    } while (0)
#else
#define PROBE_EXACT(c, n) ((void)0)
#define PROBE_START ((void)0)
#define PROBE_MARK(c, what) ((void)0)
#define PROBE_COUNT(c, what) ((void)0)
#endif

static __device__ __forceinline__ void set_error(const build_params *p, uint32_t code)
{
    atomicCAS(&p->state->error.v, 0u, code);
}

static __device__ __forceinline__ uint32_t broadcast(uint32_t v) { return __shfl_sync(FULL_MASK, v, 0); }

static __device__ __forceinline__ uint32_t *broadcast_ptr(uint32_t *v)
{
    return (uint32_t *)__shfl_sync(FULL_MASK, (unsigned long long)v, 0);
}

static __device__ __forceinline__ int build_failed(const build_params *p)
{
    return ld_relaxed_u32(&p->state->error.v) != 0;
}

/* A reference out of range can only come from overwritten memory: flag it,
 * read a valid box instead, and let the build stop. */
static __device__ __forceinline__ void load_box(const build_params *p, uint32_t tri, float lo[3], float hi[3])
{
    if (tri >= p->n_triangles) {
        set_error(p, BUILD_CORRUPT);
        tri = 0;
    }
    float4 l = __ldg(&p->boxes[tri].lo), h = __ldg(&p->boxes[tri].hi);
    lo[0] = l.x, lo[1] = l.y, lo[2] = l.z;
    hi[0] = h.x, hi[1] = h.y, hi[2] = h.z;
}

/* The same for one axis of the box (a scatter needs only the split's). */
static __device__ __forceinline__ void load_box_axis(const build_params *p, uint32_t tri, int axis, float *lo,
                                                     float *hi)
{
    if (tri >= p->n_triangles) {
        set_error(p, BUILD_CORRUPT);
        tri = 0;
    }
    *lo = __ldg((const float *)&p->boxes[tri].lo + axis);
    *hi = __ldg((const float *)&p->boxes[tri].hi + axis);
}


/* A pipeline of loads over a node's references [.., end), one step of 32
 * at a time, on one axis of their boxes (the scatters): while a step is
 * classified, the next step's box and the reference of the step after it
 * are on their way, so neither of the two dependent round trips
 * (reference, then box) is waited for in the loop. */
typedef struct axis_pipe {
    uint32_t ref, ahead; /* the next step's reference; the one after it */
    float lo, hi;        /* the next step's box on the axis */
} axis_pipe;

/* Starts the pipeline at this lane's reference i. */
static __device__ __forceinline__ void axis_pipe_start(axis_pipe *q, const build_params *p, const uint32_t *refs,
                                                       uint32_t i, uint32_t end, int axis)
{
    q->ref = q->ahead = 0;
    q->lo = q->hi = 0.0f;
    if (i < end) {
        q->ref = __ldcg(&refs[i]);
        load_box_axis(p, q->ref, axis, &q->lo, &q->hi);
    }
    if (i + 32 < end) q->ahead = __ldcg(&refs[i + 32]);
}

/* Reference i and its box (what the last step loaded), and the loads of
 * the two steps after it issued. */
static __device__ __forceinline__ uint32_t axis_pipe_step(axis_pipe *q, const build_params *p, const uint32_t *refs,
                                                          uint32_t i, uint32_t end, int axis, float *lo, float *hi)
{
    uint32_t ref = q->ref;
    *lo = q->lo;
    *hi = q->hi;
    if (i + 32 < end) {
        q->ref = q->ahead;
        load_box_axis(p, q->ahead, axis, &q->lo, &q->hi);
    }
    if (i + 64 < end) q->ahead = __ldcg(&refs[i + 64]);
    return ref;
}

#endif
