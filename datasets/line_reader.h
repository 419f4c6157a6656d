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
  uint64_t line_number() const { return line_number_; }  // 1-based, line last returned
  const std::string& path() const { return path_; }

  class Decoder;  // turns the file's bytes into text bytes (identity, gzip, zstd)

 private:
  bool refill();
  void take(std::string& line, const char* begin, size_t n);

  std::string path_;
  uint64_t max_line_bytes_;
  int fd_ = -1;
  std::unique_ptr<Decoder> decoder_;
  std::vector<char> block_;  // decoded text; [pos_, end_) not yet consumed
  size_t pos_ = 0;
  size_t end_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
  uint64_t raw_length_ = 0;  // bytes of the current line seen so far, kept or not
  char last_byte_ = 0;       // last byte of the current line seen (to drop a '\r')
  bool too_long_ = false;
};

}  // namespace sift
