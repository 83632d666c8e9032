/* name.c - what the build compiled in, for --version and the statistics. */
#include "kdalloc/kdalloc.h"

const char *kda_allocator_name(void) { return KDA_ALLOC_NAME; }
int kda_allocator_frees(void) { return KDA_ALLOC_FREES; }
uint64_t kda_allocator_min_pool(void) { return KDA_ALLOC_MIN_POOL; }

int kda_allocator_builds(const char **why)
{
#if KDA_ALLOC_BUILDS
    if (why) *why = NULL;
    return 1;
#else
    if (why) *why = KDA_ALLOC_NO_BUILD_WHY;
    return 0;
#endif
}

int kda_allocator_grows(const char **why)
{
#if KDA_ALLOC_GROWS
    if (why) *why = NULL;
    return 1;
#else
    if (why) *why = KDA_ALLOC_NO_GROW_WHY;
    return 0;
#endif
}

const char *kda_allocator_list(void) { return KDA_ALLOCATOR_LIST; }
const char *kda_allocator_id(void) { return KDA_ALLOCATOR_ID; }
