#include "core/crc32.h"

#include <gtest/gtest.h>

#include <string>

namespace sift {
namespace crc32_test {

TEST(Crc32, MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32_of("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32_of(""), 0u);
}

TEST(Crc32, PiecesGiveTheSameValueAsTheWhole) {
  const std::string text = "a checkpoint is written in pieces, and checked in one pass";
  uint32_t crc = 0;
  for (size_t i = 0; i < text.size(); i += 7) crc = crc32_update(crc, text.substr(i, 7));
  EXPECT_EQ(crc, crc32_of(text));
  EXPECT_EQ(crc32_update(0, text.data(), text.size()), crc32_of(text));
}

}  // namespace crc32_test
}  // namespace sift
