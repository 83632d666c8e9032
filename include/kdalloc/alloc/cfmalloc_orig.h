/* cfmalloc_orig.h - CFMalloc as its authors published it, through the adapter
 * regeff.h (the seed paper's own code), beside our cfmalloc.h. */
#ifndef KDA_CFMALLOC_ORIG_H
#define KDA_CFMALLOC_ORIG_H

#define KDA_ALLOC_NAME "CFMalloc (original)"
#define KDA_REGEFF KDA_REGEFF_CFMALLOC
#include "regeff.h"

#endif
