// CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum used by
// the log and snapshot formats. Hardware instructions where present, else a
// slicing-by-8 table built once.

#include "strata_checksum.h"

#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static int table_ready = 0;

static void build_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int s = 1; s < 8; s++) {
            c = table[0][c & 0xFF] ^ (c >> 8);
            table[s][n] = c;
        }
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t strata_crc32c_update_portable(uint32_t crc, const void *data, size_t length) {
    // Building twice from two threads writes identical values: harmless.
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_table();
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= c;
        c = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
            table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^ table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        length -= 8;
    }
    while (length--) c = table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}

static int has_hw(void) {
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = (const unsigned char *)data;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
        p += 8;
        length -= 8;
    }
    while (length--) c = __crc32cb(c, *p++);
    return ~c;
}

static int has_hw(void) { return 1; }

#else
static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t length) {
    return strata_crc32c_update_portable(crc, data, length);
}
static int has_hw(void) { return 0; }
#endif

uint32_t strata_crc32c_update(uint32_t crc, const void *data, size_t length) {
    return has_hw() ? crc32c_hw(crc, data, length) : strata_crc32c_update_portable(crc, data, length);
}

int strata_crc32c_is_hardware_accelerated(void) { return has_hw(); }
