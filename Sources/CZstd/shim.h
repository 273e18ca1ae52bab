#ifndef STRATA_CZSTD_SHIM_H
#define STRATA_CZSTD_SHIM_H
// ZSTD_getFrameHeader and ZSTD_frameHeader live in the "advanced" API.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#endif
