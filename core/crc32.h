// CRC-32 (zlib's polynomial), the one checksum of checkpoints, exports and run folders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sift {

// Continues `crc` over `bytes` (start from 0). Any size: zlib's 32-bit lengths are fed
// in pieces.
uint32_t crc32_update(uint32_t crc, std::string_view bytes);
uint32_t crc32_update(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32_of(std::string_view bytes) { return crc32_update(0, bytes); }

// The CRC of A followed by B from the CRCs of each and B's length (zlib's crc32_combine):
// pieces read in another order than they are checksummed need no second pass.
uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

}  // namespace sift
