#include "strata_jemalloc_options.h"

// jemalloc reads this global at its first allocation. A command lives
// seconds: freed pages are kept for the next allocations instead of being
// handed back on a decay timer and faulted in again (`strata export` of
// a million records: 177k page faults with the default decay, 102k
// without, as under glibc with the command's former mallopt settings).
// `used`: nothing in the program reads it but jemalloc.
__attribute__((used)) const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";

const char *strata_jemalloc_options(void) { return malloc_conf; }
