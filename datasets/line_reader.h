// Reads lines from a plain, gzip or zstd file in large blocks, with bounded memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sift {

class LineReader {
 public:
  // Opens a plain, gzip or zstd file; compression is detected from the magic bytes
  // (1f 8b / 28 b5 2f fd), not the extension. Throws sift::Error when it cannot.
  explicit LineReader(std::string path, uint64_t max_line_bytes = 1 << 20);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without "\n" or "\r\n"; false at end of file (a last line without a
  // newline is still returned). Lines longer than max_line_bytes are cut to that
  // length, the rest skipped unbuffered, and last_line_too_long() is true. Corrupt
  // or truncated compressed data throws sift::Error.
  bool next(std::string& line);
  bool last_line_too_long() const { return too_long_; }
  // 1-based number of the line last returned; 0 after skip_to(), where the count of
  // earlier lines is unknown (count_lines() finds it when an error needs it).
  uint64_t line_number() const { return lines_known_ ? line_number_ : 0; }
  const std::string& path() const { return path_; }
  // Byte offset in the decoded text just past the line last returned.
  uint64_t offset() const { return block_start_ + pos_; }
  // Moves forward to decoded byte `offset`: a seek for plain files, decompress-and-drop
  // for compressed ones. Offsets behind the current one are an error.
  void skip_to(uint64_t offset);

  class Decoder;  // turns the file's bytes into text bytes (identity, gzip, zstd)

  // Number of '\n' in the first `offset` decoded bytes of `path` (line numbers for
  // errors found after a skip_to()).
  static uint64_t count_lines(const std::string& path, uint64_t offset);

 private:
  bool refill();
  void check_magic(bool gz, bool zst, size_t n);
  void take(std::string& line, const char* begin, size_t n);

  std::string path_;
  uint64_t max_line_bytes_;
  int fd_ = -1;
  std::unique_ptr<Decoder> decoder_;
  std::vector<char> block_;  // decoded text; [pos_, end_) not yet consumed
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t block_start_ = 0;  // decoded offset of block_[0]
  bool lines_known_ = true;
  bool eof_ = false;
  uint64_t line_number_ = 0;
  uint64_t raw_length_ = 0;  // bytes of the current line seen so far, kept or not
  char last_byte_ = 0;       // last byte of the current line seen (to drop a '\r')
  bool too_long_ = false;
};

}  // namespace sift
