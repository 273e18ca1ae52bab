#ifndef STRATA_PREFETCH_H
#define STRATA_PREFETCH_H

// A hint to the processor that the cache line holding `address` will be
// read soon. Swift has no prefetch of its own. A prefetch never faults:
// `address` may be any value (an integer, a tagged pointer, a freed or
// unmapped address), which lets the collections' nodes pass every word
// of a generic element whose layout they do not know.
static inline __attribute__((always_inline)) void strata_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
