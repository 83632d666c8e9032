/* kdalloc.h - the allocators' one API, for code outside this project.
 *
 * Installed as include/kdalloc/kdalloc.h beside the headers it forwards
 * to.  The allocator is chosen by linking one CMake target,
 * kdalloc::<name>, whose compile definitions pick alloc/<name>.h; see
 * alloc.h for the API (host pools for CPU threads, device pools, and
 * kda_malloc/kda_free). */
#ifndef KDALLOC_KDALLOC_H
#define KDALLOC_KDALLOC_H
#include "alloc.h"
#endif
