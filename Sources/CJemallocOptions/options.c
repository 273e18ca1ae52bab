#include "strata_jemalloc_options.h"

// jemalloc reads this global at its first allocation. A command lives
// seconds: freed pages are kept for the next allocations instead of being
// handed back on a decay timer and faulted in again (`strata export` of
// a million records: 177k page faults with the default decay, 102k
// without, as under glibc with the command's former mallopt settings).
// On Linux, `thp:always` asks for transparent huge pages on jemalloc's
// memory (where the system's mode, like Debian's and Ubuntu's `madvise`,
// gives them only where asked): the value's tries are walked at random,
// and `strata verify` of a million records took 248k page faults and
// 3.7-4.1 s with 4 KiB pages, 4.8k and 3.2-3.6 s with 2 MiB ones, for 2%
// more resident memory. (Elsewhere jemalloc has no such support and would
// print a warning at every start.)
// `used`: nothing in the program reads it but jemalloc.
#if defined(__linux__)
__attribute__((used)) const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always";
#else
__attribute__((used)) const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
#endif

const char *strata_jemalloc_options(void) { return malloc_conf; }
