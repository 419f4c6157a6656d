#include "datasets/line_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace line_reader_test {

using sift::testing::make_temp_dir;

std::string write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string gzip_bytes(const std::string& dir, const std::string& text) {
  std::string path = dir + "/tmp.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string zstd_bytes(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

std::vector<std::string> read_all(const std::string& path, uint64_t max_line = 1 << 20) {
  LineReader reader(path, max_line);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

// Text of many distinct lines, large enough to span several 256 KiB blocks.
std::string many_lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i)
    text += "line number " + std::to_string(i) + " with some padding text\n";
  return text;
}

using Lines = std::vector<std::string>;

TEST(LineReader, PlainCrlfAndLastLineWithoutNewline) {
  std::string dir = make_temp_dir("sift_line_reader");
  EXPECT_EQ(read_all(write_file(dir + "/a.txt", "one\ntwo\r\n\nthree")),
            (Lines{"one", "two", "", "three"}));
  EXPECT_EQ(read_all(write_file(dir + "/b.txt", "one\r\ntwo\r\n")), (Lines{"one", "two"}));
}

TEST(LineReader, EmptyFileHasNoLines) {
  std::string dir = make_temp_dir("sift_line_reader");
  EXPECT_TRUE(read_all(write_file(dir + "/empty.txt", "")).empty());
}

TEST(LineReader, LineNumbersCountEveryLine) {
  std::string dir = make_temp_dir("sift_line_reader");
  LineReader reader(write_file(dir + "/a.txt", "a\n\nb\n"));
  std::string line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(reader.line_number(), 1u);
  ASSERT_TRUE(reader.next(line));
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "b");
  EXPECT_EQ(reader.line_number(), 3u);
  EXPECT_FALSE(reader.next(line));
}

TEST(LineReader, LongLineIsCutAndFlagged) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string path =
      write_file(dir + "/long.txt", "short\n" + std::string(100, 'x') + "\r\n12345678\r\nend");
  LineReader reader(path, 8);
  std::string line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_FALSE(reader.last_line_too_long());
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, std::string(8, 'x'));
  EXPECT_TRUE(reader.last_line_too_long());
  ASSERT_TRUE(reader.next(line));  // exactly 8 bytes before "\r\n": not too long
  EXPECT_EQ(line, "12345678");
  EXPECT_FALSE(reader.last_line_too_long());
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "end");
  EXPECT_EQ(reader.line_number(), 4u);
}

TEST(LineReader, LongLineAcrossBlocksIsSkippedWhole) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string path = write_file(dir + "/long.txt", std::string(600000, 'y') + "\nnext\n");
  EXPECT_EQ(read_all(path, 1000), (Lines{std::string(1000, 'y'), "next"}));
}

TEST(LineReader, GzipAndZstdMatchPlain) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string text = many_lines(30000);  // about 1 MB: several blocks
  Lines expected = read_all(write_file(dir + "/plain.txt", text));
  ASSERT_EQ(expected.size(), 30000u);
  // The extension is not what decides: the magic bytes are.
  EXPECT_EQ(read_all(write_file(dir + "/data.txt", gzip_bytes(dir, text))), expected);
  EXPECT_EQ(read_all(write_file(dir + "/data.bin", zstd_bytes(text))), expected);
}

TEST(LineReader, ConcatenatedGzipMembersAndZstdFrames) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string gz = gzip_bytes(dir, "a\nb\n") + gzip_bytes(dir, "c\n");
  EXPECT_EQ(read_all(write_file(dir + "/two.gz", gz)), (Lines{"a", "b", "c"}));
  std::string zst = zstd_bytes("a\nb") + zstd_bytes("c\n");
  EXPECT_EQ(read_all(write_file(dir + "/two.zst", zst)), (Lines{"a", "bc"}));
}

// Reads everything and returns the error message ("" when none was thrown).
std::string read_error(const std::string& path) {
  try {
    read_all(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LineReader, TruncatedGzipThrowsWithPath) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string gz = gzip_bytes(dir, many_lines(2000));
  std::string path = write_file(dir + "/cut.gz", gz.substr(0, gz.size() / 2));
  std::string message = read_error(path);
  EXPECT_NE(message.find(path + ": corrupt or truncated gzip data after line "), std::string::npos)
      << message;
  // Only the 8-byte trailer missing is truncation too.
  path = write_file(dir + "/trailer.gz", gz.substr(0, gz.size() - 4));
  EXPECT_NE(read_error(path).find("corrupt or truncated gzip"), std::string::npos);
}

TEST(LineReader, CorruptAndTruncatedZstdThrowWithPath) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string zst = zstd_bytes(many_lines(2000));
  std::string path = write_file(dir + "/cut.zst", zst.substr(0, zst.size() / 2));
  EXPECT_NE(read_error(path).find(path + ": corrupt or truncated zstd data after line "),
            std::string::npos);
  std::string bad = zst;
  for (size_t i = 20; i < bad.size(); i += 7) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  path = write_file(dir + "/bad.zst", bad);
  EXPECT_NE(read_error(path).find(path + ": corrupt or truncated zstd data"), std::string::npos);
}

TEST(LineReader, CompressedNameWithWrongMagicBytesIsRefusedNamingTheFile) {
  std::string dir = make_temp_dir("sift_line_reader");
  std::string gz = gzip_bytes(dir, many_lines(20));
  gz[1] = 'x';  // damaged magic: was read as plain text, lines of binary noise
  std::string path = write_file(dir + "/damaged.gz", gz);
  EXPECT_CONTAINS(read_error(path), path + ": the name says gzip but the file does not start");
  path = write_file(dir + "/plain.zst", "a line\n");
  EXPECT_CONTAINS(read_error(path), path + ": the name says zstd");
  // The right magic under another name still decodes, and an empty .gz has no lines.
  EXPECT_EQ(read_all(write_file(dir + "/gz.txt", gzip_bytes(dir, "x\n"))).size(), 1u);
  EXPECT_TRUE(read_all(write_file(dir + "/empty.gz", "")).empty());
}

TEST(LineReader, MissingFileThrows) {
  std::string dir = make_temp_dir("sift_line_reader");
  try {
    LineReader reader(dir + "/missing.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open " + dir + "/missing.txt: No such file or directory");
  }
  EXPECT_THROW(LineReader{dir}, Error);  // a directory
}

}  // namespace line_reader_test
}  // namespace sift
