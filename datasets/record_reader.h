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

// A part of one file: the records whose first byte lies in [begin, end) of its decoded
// text. Whole files are [0, kToEnd).
struct FilePiece {
  static constexpr uint64_t kToEnd = ~uint64_t{0};
  std::string path;
  uint64_t begin = 0;
  uint64_t end = kToEnd;
};

// Where a reader stands: the piece it reads and the offset of its next record.
struct ReadPosition {
  uint64_t piece = 0;
  uint64_t offset = 0;
  bool operator==(const ReadPosition& o) const { return piece == o.piece && offset == o.offset; }
};

class RecordReader {
 public:
  // Reads files in order (paths already expanded). label_names is the declared label
  // list; required when format.label_mapping is index0/index1, where a label value "k"
  // becomes label_names[k] (index0) or label_names[k-1] (index1).
  RecordReader(std::vector<std::string> files, TextFormat format,
               std::vector<std::string> label_names = {});
  // Reads the records of the given pieces, in order.
  RecordReader(std::vector<FilePiece> pieces, TextFormat format,
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
  // Just past the record last returned (or where reading starts).
  ReadPosition position() const;
  // Continues from a position() taken earlier, on the same pieces.
  void seek(const ReadPosition& position);
  // Keeps only the records whose bytes hash into share `index` of `count` (0 <= index <
  // count), passing over the others before they are decoded or parsed: the fast path's
  // Hogwild threads each read every file and take an interleaved share of its records.
  // count <= 1: every record.
  void keep_share(int64_t count, int64_t index);
  // "FILE:LINE" of a record, counting lines when the reader skipped into the file.
  std::string location(const Example& record) const;

 private:
  bool open_next_file();
  void open_piece(size_t index, uint64_t offset, bool at_line_start);
  void read_header();
  bool read_record(Example& out, std::string& reason);
  bool in_share(const std::string& record) const;
  bool join_csv_lines();
  std::string map_labels(Example& out) const;
  void bad_record(const Example& record, const std::string& reason);

  std::vector<FilePiece> pieces_;
  TextFormat format_;
  std::vector<std::string> label_names_;
  RecordParser parser_;
  std::unique_ptr<LineReader> reader_;
  size_t next_file_ = 0;  // index of the piece to open after reader_'s
  uint64_t piece_end_ = FilePiece::kToEnd;
  std::string line_;      // the last physical line read
  std::string raw_;       // a record as read, csv lines joined
  std::string text_;      // raw_ converted to UTF-8
  uint64_t skipped_ = 0;
  uint64_t records_ = 0;
  int64_t share_count_ = 1;
  int64_t share_index_ = 0;
};

}  // namespace sift
