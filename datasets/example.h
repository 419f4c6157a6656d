// One labelled text as read from a data file, before tokenization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sift {

struct Example {
  std::string text;                 // UTF-8, columns already joined by one space
  std::vector<std::string> labels;  // label names (several for multi-label data)
  uint64_t line = 0;    // 1-based line of the record's first physical line; 0: not counted
  uint64_t offset = 0;  // byte offset of the record in the file's decoded text
};

}  // namespace sift
