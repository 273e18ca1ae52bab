#ifndef STRATA_SINK_H
#define STRATA_SINK_H
#include <stddef.h>
/// Takes the address of a benchmark's result in a separate translation unit
/// the optimizer cannot see into, so the loop that computed it is kept.
void strata_sink(const void *pointer, size_t size);
#endif
