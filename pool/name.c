/* name.c - what the build compiled in, for --version and the statistics. */
#include "kdalloc/kdalloc.h"

const char *kda_allocator_name(void) { return KDA_ALLOC_NAME; }
int kda_allocator_frees(void) { return KDA_ALLOC_FREES; }
uint64_t kda_allocator_min_pool(void) { return KDA_ALLOC_MIN_POOL; }

/* Where the allocator can, it names no reason why not. */
#ifndef KDA_ALLOC_NO_BUILD_WHY
#define KDA_ALLOC_NO_BUILD_WHY NULL
#endif
#ifndef KDA_ALLOC_NO_GROW_WHY
#define KDA_ALLOC_NO_GROW_WHY NULL
#endif

static int answer(int yes, const char *why_not, const char **why)
{
    if (why) *why = yes ? NULL : why_not;
    return yes;
}

int kda_allocator_builds(const char **why) { return answer(KDA_ALLOC_BUILDS, KDA_ALLOC_NO_BUILD_WHY, why); }
int kda_allocator_grows(const char **why) { return answer(KDA_ALLOC_GROWS, KDA_ALLOC_NO_GROW_WHY, why); }

kda_traits kda_allocator_traits(void)
{
    kda_traits t = {KDA_ALLOC_FREES, KDA_ALLOC_GROWS, KDA_ALLOC_WRAPS, KDA_ALLOC_MIN_POOL, NULL};
    kda_allocator_grows(&t.no_grow_why);
    return t;
}

const char *kda_allocator_list(void) { return KDA_ALLOCATOR_LIST; }
const char *kda_allocator_id(void) { return KDA_ALLOCATOR_ID; }
