/* cfmalloc.h - CFMalloc (Vinkler & Havran 2015, Sec. 5.3): CMalloc with the flag fused into the header's next word (one 64-bit CAS).
 * The algorithm is circular.h, shared by the CMalloc family. */
#ifndef KDA_CFMALLOC_H
#define KDA_CFMALLOC_H

#define KDA_ALLOC_NAME "CFMalloc"
#define KDA_CIRCULAR_FUSED 1
#define KDA_CIRCULAR_MULTI 0
#include "circular_api.h"

#endif
