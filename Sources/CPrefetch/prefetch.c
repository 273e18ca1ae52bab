// SwiftPM builds a C target from its sources: this one's only function is
// inline, in include/strata_prefetch.h, for the collections to inline.
#include "strata_prefetch.h"
