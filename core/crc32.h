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

}  // namespace sift
