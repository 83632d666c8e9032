/* cmmalloc.h - CMMalloc (Vinkler & Havran 2015, Sec. 5.4): CMalloc with one allocation offset per multiprocessor.
 * The algorithm is circular.h, shared by the CMalloc family. */
#ifndef KDA_CMMALLOC_H
#define KDA_CMMALLOC_H

#define KDA_ALLOC_NAME "CMMalloc"
#define KDA_CIRCULAR_FUSED 0
#define KDA_CIRCULAR_MULTI 1
#include "circular_api.h"

#endif
