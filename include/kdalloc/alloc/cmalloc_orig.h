/* cmalloc_orig.h - CMalloc as its authors published it, through the adapter
 * regeff.h (the seed paper's own code), beside our cmalloc.h. */
#ifndef KDA_CMALLOC_ORIG_H
#define KDA_CMALLOC_ORIG_H

#define KDA_ALLOC_NAME "CMalloc (original)"
#define KDA_REGEFF KDA_REGEFF_CMALLOC
#include "regeff.h"

#endif
