/* atomic_orig.h - AtomicMalloc as its authors published it, through the adapter
 * regeff.h (the seed paper's own code), beside our atomic.h. */
#ifndef KDA_ATOMIC_ORIG_H
#define KDA_ATOMIC_ORIG_H

#define KDA_ALLOC_NAME "AtomicMalloc (original)"
#define KDA_REGEFF KDA_REGEFF_ATOMIC
#include "regeff.h"

#endif
