#include "datasets/encoding.h"

#include <gtest/gtest.h>

#include <string>

namespace sift {
namespace encoding_test {

std::string convert(std::string_view in, TextEncoding e) {
  std::string out = "stale";
  to_utf8(in, e, out);
  return out;
}

TEST(Encoding, AsciiIsCopied) {
  EXPECT_EQ(convert("plain ascii text, longer than eight bytes", TextEncoding::utf8),
            "plain ascii text, longer than eight bytes");
  EXPECT_EQ(convert("", TextEncoding::latin1), "");
}

TEST(Encoding, Latin1MapsBytesToCodePoints) {
  EXPECT_EQ(convert("caf\xe9", TextEncoding::latin1), "caf\xc3\xa9");
  EXPECT_EQ(convert("\xa0\xff x", TextEncoding::latin1), "\xc2\xa0\xc3\xbf x");
}

TEST(Encoding, ValidUtf8IsKept) {
  std::string s = "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80 and more ascii";
  EXPECT_EQ(convert(s, TextEncoding::utf8), s);
  EXPECT_TRUE(is_valid_utf8(s));
}

TEST(Encoding, InvalidUtf8IsReplaced) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(convert("caf\xe9", TextEncoding::utf8), "caf" + r);
  EXPECT_EQ(convert("a\xe9z", TextEncoding::utf8), "a" + r + "z");
  // A truncated 3-byte sequence is one maximal subpart: one replacement.
  EXPECT_EQ(convert("a\xe2\x82z", TextEncoding::utf8), "a" + r + "z");
  // Overlong form, surrogate, stray continuation bytes: one replacement per byte.
  EXPECT_EQ(convert("\xc0\xaf", TextEncoding::utf8), r + r);
  EXPECT_EQ(convert("\xed\xa0\x80", TextEncoding::utf8), r + r + r);
  EXPECT_EQ(convert("\x80\xbf", TextEncoding::utf8), r + r);
  EXPECT_EQ(convert("\xf4\x90\x80\x80", TextEncoding::utf8), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(convert("end\xf0\x9f\x98", TextEncoding::utf8), "end" + r);
  EXPECT_FALSE(is_valid_utf8("caf\xe9"));
  EXPECT_TRUE(is_valid_utf8(convert("x\xff\xfe\xc3", TextEncoding::utf8)));
}

}  // namespace encoding_test
}  // namespace sift
