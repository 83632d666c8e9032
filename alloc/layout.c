/* layout.c - the pre-split layout of a circular pool, computed on the host
 * and written chunk by chunk (circ_init_chunk) by host or device threads. */
#include "alloc.h"
#include "circular.h"

int kda_layout_compute(uint32_t units, uint32_t n_heaps, kda_layout *l)
{
    if (units < 3 || n_heaps == 0) return -1;
    uint32_t region = (units - 1) / n_heaps; /* the last unit is the end marker */
    if (region < 2) return -1;
    /* The largest heap of L levels, L * R units with R = MIN_CHUNK * 2^(L-1),
     * that fits the region. */
    uint32_t levels = 0;
    while (levels < 31 &&
           (uint64_t)(levels + 1) * KDA_MIN_CHUNK_UNITS * ((uint64_t)1 << levels) <= region)
        levels++;
    l->n_heaps = n_heaps;
    l->region_units = region;
    l->levels = levels;
    l->root_units = levels ? KDA_MIN_CHUNK_UNITS << (levels - 1) : 0;
    l->chunks = 1u << levels; /* 2^L - 1 heap chunks and the remainder */
    l->units = units;
    return 0;
}
