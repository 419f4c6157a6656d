#include "framework/train/base/tensorboard.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sift {
namespace tensorboard_test {

TEST(TensorBoard, Crc32cMatchesTheCastagnoliCheckValue) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);  // the catalogue's check value
  EXPECT_EQ(crc32c(""), 0u);
}

TEST(TensorBoard, ARecordIsLengthItsMaskedCrcTheDataAndItsMaskedCrc) {
  const std::string r = tf_record("abc");
  ASSERT_EQ(r.size(), 8u + 4u + 3u + 4u);
  uint64_t length = 0;
  std::memcpy(&length, r.data(), 8);
  EXPECT_EQ(length, 3u);
  uint32_t crc = 0;
  std::memcpy(&crc, r.data() + 15, 4);
  EXPECT_EQ(crc, masked_crc32c("abc"));
  EXPECT_EQ(r.substr(12, 3), "abc");
}

TEST(TensorBoard, AScalarEventEncodesStepTagAndFloatValueWithTheirFieldNumbers) {
  const std::string e = scalar_event(1.5, 300, "lr", 0.25f);
  // wall_time: tag 0x09 and 8 bytes; step: tag 0x10, varint 300 = ac 02.
  EXPECT_EQ(static_cast<uint8_t>(e[0]), 0x09);
  EXPECT_EQ(e.substr(9, 3), std::string("\x10\xac\x02", 3));
  // summary (field 5) > value (field 1) > tag "lr" (field 1), simple_value (field 2, 32-bit).
  float value = 0;
  std::memcpy(&value, e.data() + e.size() - 4, 4);
  EXPECT_EQ(value, 0.25f);
  EXPECT_EQ(static_cast<uint8_t>(e[e.size() - 5]), 0x15);
  EXPECT_NE(e.find(std::string("\x0a\x02lr", 4)), std::string::npos);
}

TEST(TensorBoard, ATextEventIsAStringTensorOfShapeOneForTheTextPlugin) {
  const std::string e = text_event(1.5, 7, "valid_confusion", "| a | b |");
  // value (field 1 of the summary) > tag (field 1), tensor (field 8), metadata (field 9).
  EXPECT_NE(e.find(std::string("\x0a\x0fvalid_confusion", 17)), std::string::npos);
  // tensor: dtype (field 1) DT_STRING = 7, shape (field 2) > dim (field 2) > size (field 1) 1,
  // string_val (field 8) the markdown.
  EXPECT_NE(e.find(std::string("\x42\x13\x08\x07\x12\x04\x12\x02\x08\x01\x42\x09| a | b |", 21)),
            std::string::npos);
  // metadata (field 9) > plugin_data (field 1) > plugin_name (field 1) "text".
  EXPECT_NE(e.find(std::string("\x4a\x08\x0a\x06\x0a\x04text", 10)), std::string::npos);
}

}  // namespace tensorboard_test
}  // namespace sift
