#include "datasets/word_vectors.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace sift {
namespace {

void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
}

bool parse_int(std::string_view s, int64_t& value) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_float(std::string_view s, float& value) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(value);
}

}  // namespace

WordVectorFile::WordVectorFile(const std::string& path, int64_t dim) : path_(path), dim_(dim) {
  try {
    reader_ = std::make_unique<LineReader>(path);
  } catch (const Error& e) {
    throw Error(fmt::format("model.pretrained: {}", e.what()));
  }
}

bool WordVectorFile::next(std::string_view& word, std::vector<std::string_view>& values) {
  while (reader_->next(line_)) {
    const uint64_t number = reader_->line_number();
    if (reader_->last_line_too_long()) {
      throw Error(fmt::format("{}:{}: the line is longer than 1 MiB", path_, number));
    }
    split_fields(line_, fields_);
    if (fields_.empty()) continue;
    int64_t header_count = 0, header_dim = 0;
    if (number == 1 && fields_.size() == 2 && parse_int(fields_[0], header_count) &&
        parse_int(fields_[1], header_dim)) {
      if (header_dim != dim_) {
        throw Error(fmt::format("{}:1: the vectors have {} dimensions, model.dim is {}", path_,
                                header_dim, dim_));
      }
      continue;
    }
    const auto count = static_cast<int64_t>(fields_.size()) - 1;
    if (count != dim_) {
      throw Error(fmt::format("{}:{}: expected {} values after the word, found {}", path_, number,
                              dim_, count));
    }
    word = fields_[0];
    values.assign(fields_.begin() + 1, fields_.end());
    return true;
  }
  return false;
}

void WordVectorFile::parse(std::string_view word, const std::vector<std::string_view>& values,
                           float* out) const {
  for (int64_t i = 0; i < dim_; ++i) {
    if (!parse_float(values[static_cast<size_t>(i)], out[i])) {
      throw Error(fmt::format("{}:{}: value {} of '{}' is not a number: '{}'", path_,
                              reader_->line_number(), i + 1, word, values[static_cast<size_t>(i)]));
    }
  }
}

}  // namespace sift
