#include "core/crc32.h"

#include <zlib.h>

#include <algorithm>

namespace sift {

uint32_t crc32_update(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (size > 0) {
    const size_t n = std::min<size_t>(size, size_t{1} << 30);
    c = ::crc32(c, p, static_cast<uInt>(n));
    p += n;
    size -= n;
  }
  return static_cast<uint32_t>(c);
}

uint32_t crc32_update(uint32_t crc, std::string_view bytes) {
  return crc32_update(crc, bytes.data(), bytes.size());
}

uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return static_cast<uint32_t>(::crc32_combine64(crc_a, crc_b, static_cast<z_off64_t>(length_b)));
}

}  // namespace sift
