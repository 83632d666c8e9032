/* cmmalloc_orig.h - CMMalloc as its authors published it, through the adapter
 * regeff.h (the seed paper's own code), beside our cmmalloc.h. */
#ifndef KDA_CMMALLOC_ORIG_H
#define KDA_CMMALLOC_ORIG_H

#define KDA_ALLOC_NAME "CMMalloc (original)"
#define KDA_REGEFF KDA_REGEFF_CMMALLOC
#include "regeff.h"

#endif
