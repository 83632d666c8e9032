/* name.c - what the build compiled in, for --version and the statistics. */
#include "alloc.h"

const char *kda_allocator_name(void)
{
#if defined(KDA_ALLOCATOR_ATOMIC)
    return "AtomicMalloc";
#elif defined(KDA_ALLOCATOR_AWMALLOC)
    return "AWMalloc";
#elif defined(KDA_ALLOCATOR_CMALLOC)
    return "CMalloc";
#elif defined(KDA_ALLOCATOR_CFMALLOC)
    return "CFMalloc";
#elif defined(KDA_ALLOCATOR_CMMALLOC)
    return "CMMalloc";
#elif defined(KDA_ALLOCATOR_CFMMALLOC)
    return "CFMMalloc";
#else
    return "CudaMalloc";
#endif
}

int kda_allocator_frees(void)
{
#if defined(KDA_ALLOCATOR_IS_BUMP)
    return 0;
#else
    return 1;
#endif
}
