// Reads the well-formed records of a data split's files, one Example at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/example.h"
#include "datasets/line_reader.h"
#include "datasets/record_parser.h"
#include "datasets/text_format.h"

namespace sift {

class RecordReader {
 public:
  // Reads files in order (paths already expanded). label_names is the declared label
  // list; required when format.label_mapping is index0/index1, where a label value "k"
  // becomes label_names[k] (index0) or label_names[k-1] (index1).
  RecordReader(std::vector<std::string> files, TextFormat format,
               std::vector<std::string> label_names = {});

  // Next well-formed record across all files; false after the last one. Blank lines are
  // ignored; a malformed record throws sift::Error("FILE:LINE: reason") under the error
  // policy and is counted and skipped under the skip policy.
  bool next(Example& out);
  uint64_t skipped() const { return skipped_; }  // malformed records skipped this pass
  uint64_t records() const { return records_; }  // good records returned this pass
  const std::string& current_file() const;
  // Restarts from the first file (once per epoch); the counts restart too.
  void rewind();

 private:
  bool open_next_file();
  void read_header();
  bool read_record(Example& out, std::string& reason);
  bool join_csv_lines();
  std::string map_labels(Example& out) const;
  void bad_record(uint64_t line, const std::string& reason);

  std::vector<std::string> files_;
  TextFormat format_;
  std::vector<std::string> label_names_;
  RecordParser parser_;
  std::unique_ptr<LineReader> reader_;
  size_t next_file_ = 0;  // index of the file to open after reader_'s
  std::string line_;      // the last physical line read
  std::string raw_;       // a record as read, csv lines joined
  std::string text_;      // raw_ converted to UTF-8
  uint64_t skipped_ = 0;
  uint64_t records_ = 0;
};

}  // namespace sift
