// The module is its header's one inline function; SwiftPM needs a source file.
#include "strata_prefetch.h"
