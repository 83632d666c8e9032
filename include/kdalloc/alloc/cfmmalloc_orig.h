/* cfmmalloc_orig.h - CFMMalloc as its authors published it, through the adapter
 * regeff.h (the seed paper's own code), beside our cfmmalloc.h. */
#ifndef KDA_CFMMALLOC_ORIG_H
#define KDA_CFMMALLOC_ORIG_H

#define KDA_ALLOC_NAME "CFMMalloc (original)"
#define KDA_REGEFF KDA_REGEFF_CFMMALLOC
#include "regeff.h"

#endif
