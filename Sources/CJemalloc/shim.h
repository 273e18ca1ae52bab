#ifndef STRATA_CJEMALLOC_SHIM_H
#define STRATA_CJEMALLOC_SHIM_H
// Linking jemalloc replaces malloc for the whole bench process, Swift's
// allocations included, so `stats.allocated` counts every live heap byte.
#include <jemalloc/jemalloc.h>
#endif
