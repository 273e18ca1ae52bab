#include "strata_sink.h"

volatile unsigned char strata_sink_byte;

void strata_sink(const void *pointer, size_t size) {
    if (size > 0) strata_sink_byte ^= *(const volatile unsigned char *)pointer;
}
