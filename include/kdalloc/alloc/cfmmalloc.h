/* cfmmalloc.h - CFMMalloc (Vinkler & Havran 2015, Sec. 5.4): fused and per-multiprocessor.
 * The algorithm is circular.h, shared by the CMalloc family. */
#ifndef KDA_CFMMALLOC_H
#define KDA_CFMMALLOC_H

#define KDA_ALLOC_NAME "CFMMalloc"
#define KDA_CIRCULAR_FUSED 1
#define KDA_CIRCULAR_MULTI 1
#include "circular_api.h"

#endif
