#ifndef STRATA_CHECKSUM_H
#define STRATA_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Continues a CRC32C (Castagnoli) over `length` bytes at `data`.
///
/// `crc` is the value returned for the bytes before (0 to start); the
/// pre- and post-inversion are applied inside, so calls chain:
/// crc(a ++ b) == strata_crc32c_update(strata_crc32c_update(0, a), b).
/// Uses the SSE4.2 / ARMv8 CRC instructions when the CPU has them and a
/// slicing-by-8 table otherwise; both give identical results.
uint32_t strata_crc32c_update(uint32_t crc, const void *data, size_t length);

/// 1 when the hardware path is in use, 0 for the portable table path.
int strata_crc32c_is_hardware_accelerated(void);

/// The portable table implementation, always available; exposed so tests
/// can check it against the hardware path on the same inputs.
uint32_t strata_crc32c_update_portable(uint32_t crc, const void *data, size_t length);

#ifdef __cplusplus
}
#endif

#endif
