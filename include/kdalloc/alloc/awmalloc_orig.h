/* awmalloc_orig.h - AWMalloc as its authors published it, through the adapter
 * regeff.h (the seed paper's own code), beside our awmalloc.h. */
#ifndef KDA_AWMALLOC_ORIG_H
#define KDA_AWMALLOC_ORIG_H

#define KDA_ALLOC_NAME "AWMalloc (original)"
#define KDA_REGEFF KDA_REGEFF_AWMALLOC
#include "regeff.h"

#endif
