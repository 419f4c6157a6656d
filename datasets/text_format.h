// How one data split's files are laid out: the per-split data options, resolved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/enums.h"  // FileFormat, TextEncoding, LabelMapping, BadLinePolicy

namespace sift {

struct TextFormat {
  FileFormat format = FileFormat::fasttext;
  // Columns joined (by one space) into the text: header names, or 0-based indices
  // for tsv/csv; field names for jsonl. Ignored by fasttext and label_first.
  std::vector<std::string> text_columns;
  std::string label_column;  // name or 0-based index; ignored by fasttext and label_first
  // Splits the label field of tsv, csv and label_first records into several labels
  // (multi-label data); empty: the field is one label.
  std::string label_separator;
  std::string label_prefix = "__label__";  // marks a label token of the fasttext format
  bool header = false;       // first line of every file is a header (tsv, csv)
  TextEncoding encoding = TextEncoding::utf8;
  bool unescape = false;     // turn the escapes \n \t \\ inside text into space, space, backslash
  LabelMapping label_mapping = LabelMapping::name;
  uint64_t max_line_bytes = 1 << 20;  // longer records are malformed (bounded memory)
  BadLinePolicy on_bad_line = BadLinePolicy::error;
  bool truncate_long_lines = false;  // keep a too-long record's first max_line_bytes
  // Each record is one text and nothing else: no label is parsed, `format` and its
  // columns are ignored (train.distill.unlabeled).
  bool text_only = false;
};

}  // namespace sift
