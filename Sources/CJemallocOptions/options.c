#include "strata_jemalloc_options.h"

// jemalloc reads this global at its first allocation. A command lives
// seconds: freed pages are kept for the next allocations instead of being
// handed back on a decay timer and faulted in again (`strata export` of
// a million records: 177k page faults with the default decay, 102k
// without, as under glibc with the command's former mallopt settings).
// `used`: nothing in the program reads it but jemalloc.
__attribute__((used)) const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";

const char *strata_jemalloc_options(void) { return malloc_conf; }

// No huge pages: the command once marked its arenas' large mappings for
// them through jemalloc's extent hooks (verify 8% faster, a tenth of its
// page faults), and reading commands then hung now and then, every thread
// waiting on one of jemalloc's locks while a large value was built and
// freed on several threads (7 of 133 `strata info` runs on a store of 3M
// records). jemalloc's `thp:always` would reach every program linking this
// target, the test bundle among them.
