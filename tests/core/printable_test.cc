#include "core/printable.h"

#include <gtest/gtest.h>

#include <string>

namespace sift {
namespace printable_test {

TEST(Printable, EscapesControlBytesSoAMessageStaysOneLine) {
  EXPECT_EQ(printable(std::string("a\nb\tc\0d\x1b", 8)), "a\\nb\\tc\\x00d\\x1b");
  EXPECT_EQ(printable("back\\slash"), "back\\\\slash");
}

TEST(Printable, CutsLongValuesAndSaysHowLongTheyWere) {
  const std::string long_label(100000, 'x');
  const std::string shown = printable(long_label, 10);
  EXPECT_EQ(shown, "xxxxxxxxxx... (100000 bytes)");
}

TEST(Printable, LeavesUtf8TextAlone) {
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_FALSE(has_control_byte("caf\xc3\xa9"));
  EXPECT_TRUE(has_control_byte(std::string("a\0b", 3)));
}

}  // namespace printable_test
}  // namespace sift
