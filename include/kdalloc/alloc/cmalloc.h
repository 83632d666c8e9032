/* cmalloc.h - CMalloc (Vinkler & Havran 2015, Sec. 5.2): one allocation offset (memOffset), header flag and next as two words.
 * The algorithm is circular.h, shared by the CMalloc family. */
#ifndef KDA_CMALLOC_H
#define KDA_CMALLOC_H

#define KDA_ALLOC_NAME "CMalloc"
#define KDA_CIRCULAR_FUSED 0
#define KDA_CIRCULAR_MULTI 0
#include "circular_api.h"

#endif
