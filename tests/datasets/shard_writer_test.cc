#include "datasets/shard_writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/line_reader.h"
#include "tests/test_files.h"

namespace sift {
namespace shard_writer_test {

using sift::testing::make_temp_dir;

using Lines = std::vector<std::string>;

// The names in `dir`, sorted.
Lines files_in(const std::string& dir) {
  Lines names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Lines read_all(const std::string& path) {
  LineReader reader(path);
  Lines lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Lines of varied length (1 to ~200 bytes), distinct, deterministic.
Lines sample_lines(int n) {
  Lines lines;
  uint64_t x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    lines.push_back("line " + std::to_string(i) + " " + std::string((x >> 33) % 190, 'a' + i % 26));
  }
  return lines;
}

std::vector<WrittenShard> write_shards(const Lines& input, ShardWriterOptions options) {
  ShardWriter writer(std::move(options));
  for (const auto& line : input) writer.add(line);
  return writer.finish();
}

Lines concat_shards(const std::vector<WrittenShard>& shards) {
  Lines all;
  for (const auto& s : shards) {
    Lines part = read_all(s.path);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

Lines sorted(Lines v) {
  std::sort(v.begin(), v.end());
  return v;
}

class ShardWriterCompression : public ::testing::TestWithParam<Compression> {};

TEST_P(ShardWriterCompression, RoundTripKeepsTheMultisetOfLines) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  const Lines input = sample_lines(5000);
  ShardWriterOptions options;
  options.prefix = dir + "/s";
  options.shards = 4;
  options.compression = GetParam();
  const auto shards = write_shards(input, options);
  ASSERT_EQ(shards.size(), 4u);
  uint64_t lines = 0;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(shards[i].path, shard_path(dir + "/s", i, 4, GetParam()));
    EXPECT_TRUE(exists(shards[i].path));
    EXPECT_FALSE(exists(shards[i].path + ".tmp"));
    EXPECT_EQ(read_all(shards[i].path).size(), shards[i].lines);
    EXPECT_GT(shards[i].file_bytes, 0u);
    if (GetParam() == Compression::kNone) {
      EXPECT_EQ(shards[i].file_bytes, shards[i].text_bytes);
    } else {
      EXPECT_LT(shards[i].file_bytes, shards[i].text_bytes);  // it did compress
    }
    lines += shards[i].lines;
  }
  EXPECT_EQ(lines, input.size());
  EXPECT_EQ(sorted(concat_shards(shards)), sorted(input));
}

INSTANTIATE_TEST_SUITE_P(All, ShardWriterCompression,
                         ::testing::Values(Compression::kNone, Compression::kGzip,
                                           Compression::kZstd));

TEST(ShardWriter, FileNamesAndSuffixes) {
  EXPECT_EQ(shard_path("out/x", 3, 8, Compression::kNone), "out/x-00003-of-00008.txt");
  EXPECT_EQ(shard_path("x", 0, 1, Compression::kGzip), "x-00000-of-00001.txt.gz");
  EXPECT_EQ(shard_path("x", 0, 1, Compression::kZstd), "x-00000-of-00001.txt.zst");
  EXPECT_EQ(parse_compression("gz"), Compression::kGzip);
  EXPECT_EQ(parse_compression("zstd"), Compression::kZstd);
  EXPECT_EQ(parse_compression(""), Compression::kNone);
  EXPECT_THROW(parse_compression("bz2"), Error);
}

TEST(ShardWriter, BalancedByBytesWithinTheLongestLine) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  Lines input = sample_lines(3000);
  input.push_back(std::string(5000, 'L'));  // one very long line late in the stream
  for (int i = 0; i < 200; ++i) input.push_back("short " + std::to_string(i));
  size_t longest = 0;
  for (const auto& l : input) longest = std::max(longest, l.size() + 1);
  ShardWriterOptions options;
  options.prefix = dir + "/b";
  options.shards = 7;
  const auto shards = write_shards(input, options);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& s : shards) {
    EXPECT_EQ(read_bytes(s.path).size(), s.text_bytes);
    lo = std::min(lo, s.text_bytes);
    hi = std::max(hi, s.text_bytes);
  }
  EXPECT_LE(hi - lo, longest);
}

TEST(ShardWriter, UnshuffledKeepsInputOrderWithinEachShard) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  const Lines input = sample_lines(1000);
  ShardWriterOptions options;
  options.prefix = dir + "/o";
  options.shards = 3;
  for (const auto& s : write_shards(input, options)) {
    const Lines part = read_all(s.path);
    size_t at = 0;  // part is a subsequence of input
    for (const auto& line : part) {
      while (at < input.size() && input[at] != line) ++at;
      ASSERT_LT(at, input.size()) << line;
    }
  }
}

TEST(ShardWriter, ShuffleChangesOrderKeepsLinesAndIsDeterministic) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  const Lines input = sample_lines(4000);
  auto run = [&](const std::string& name, uint64_t seed) {
    ShardWriterOptions options;
    options.prefix = dir + "/" + name;
    options.shards = 2;
    options.shuffle = true;
    options.shuffle_buffer = 500;  // much smaller than the input: bounded memory
    options.seed = seed;
    const auto shards = write_shards(input, options);
    std::string bytes;
    for (const auto& s : shards) bytes += read_bytes(s.path);
    return std::make_pair(concat_shards(shards), bytes);
  };
  const auto [a, a_bytes] = run("a", 7);
  const auto [b, b_bytes] = run("b", 7);
  const auto [c, c_bytes] = run("c", 8);
  EXPECT_EQ(sorted(a), sorted(input));
  EXPECT_EQ(sorted(c), sorted(input));
  EXPECT_EQ(a_bytes, b_bytes);  // same seed, same shards
  EXPECT_NE(a_bytes, c_bytes);  // another seed, another order

  // Order changed: within each shard, many neighbours are no longer in input order.
  ShardWriterOptions plain;
  plain.prefix = dir + "/plain";
  plain.shards = 2;
  EXPECT_NE(concat_shards(write_shards(input, plain)), a);
  size_t inversions = 0;
  auto index_of = [&](const std::string& line) { return std::stoi(line.substr(5)); };
  for (size_t i = 1; i < a.size(); ++i) inversions += index_of(a[i]) < index_of(a[i - 1]);
  EXPECT_GT(inversions, a.size() / 4);
}

TEST(ShardWriter, HeaderCopiedToEveryShard) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  Lines input = {"text\tlabel"};
  for (int i = 0; i < 100; ++i) input.push_back("row " + std::to_string(i) + "\tx");
  for (bool shuffle : {false, true}) {
    ShardWriterOptions options;
    options.prefix = dir + (shuffle ? "/hs" : "/h");
    options.shards = 3;
    options.header = true;
    options.shuffle = shuffle;
    options.shuffle_buffer = 10;
    options.compression = Compression::kZstd;
    const auto shards = write_shards(input, options);
    Lines rows;
    uint64_t lines = 0;
    for (const auto& s : shards) {
      Lines part = read_all(s.path);
      ASSERT_FALSE(part.empty());
      EXPECT_EQ(part.front(), "text\tlabel");
      EXPECT_EQ(part.size(), s.lines + 1);  // the header is not counted
      rows.insert(rows.end(), part.begin() + 1, part.end());
      lines += s.lines;
    }
    EXPECT_EQ(lines, 100u);
    EXPECT_EQ(sorted(rows), sorted(Lines(input.begin() + 1, input.end())));
  }
}

TEST(ShardWriter, EmptyInputGivesEmptyValidShards) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZstd}) {
    for (bool header : {false, true}) {
      ShardWriterOptions options;
      options.prefix = dir + "/e" + std::to_string(static_cast<int>(c)) + (header ? "h" : "");
      options.shards = 3;
      options.compression = c;
      options.header = header;
      options.shuffle = true;
      const auto shards = write_shards({}, options);
      ASSERT_EQ(shards.size(), 3u);
      for (const auto& s : shards) {
        EXPECT_TRUE(exists(s.path));
        EXPECT_EQ(s.lines, 0u);
        EXPECT_EQ(s.text_bytes, 0u);
        EXPECT_TRUE(read_all(s.path).empty()) << s.path;  // a valid (empty) stream
      }
    }
  }
}

TEST(ShardWriter, MoreShardsThanLines) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  ShardWriterOptions options;
  options.prefix = dir + "/m";
  options.shards = 5;
  const auto shards = write_shards({"one", "two"}, options);
  EXPECT_EQ(sorted(concat_shards(shards)), sorted({"one", "two"}));
  EXPECT_EQ(shards[2].lines + shards[3].lines + shards[4].lines, 0u);
}

TEST(ShardWriter, UnfinishedWriterLeavesNoFiles) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  {
    ShardWriterOptions options;
    options.prefix = dir + "/u";
    options.shards = 2;
    options.compression = Compression::kGzip;
    ShardWriter writer(options);
    writer.add("a line");
    EXPECT_EQ(files_in(dir).size(), 2u);  // one temporary file per shard
  }  // destroyed without finish(), as when an exception unwinds
  EXPECT_EQ(files_in(dir), Lines{});
}

// A symlink planted at the old fixed temporary name (PATH.tmp) is neither followed nor
// replaced: the gz shard goes through a unique temporary name, as the others do.
TEST(ShardWriter, APlantedSymlinkAtTheTemporaryNameIsNotFollowed) {
  const std::string dir = make_temp_dir("sift_shard_writer");
  const std::string victim = dir + "/victim.txt";
  std::ofstream(victim) << "keep me\n";
  const std::string path = shard_path(dir + "/g", 0, 1, Compression::kGzip);
  ASSERT_EQ(::symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  ShardWriterOptions options;
  options.prefix = dir + "/g";
  options.compression = Compression::kGzip;
  const auto shards = write_shards({"one", "two"}, options);
  EXPECT_EQ(sorted(concat_shards(shards)), sorted({"one", "two"}));
  std::ifstream in(victim);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "keep me");
  EXPECT_EQ(files_in(dir),
            (Lines{"g-00000-of-00001.txt.gz", "g-00000-of-00001.txt.gz.tmp", "victim.txt"}));
}

TEST(ShardWriter, BadOptionsAndUnwritableOutputThrow) {
  ShardWriterOptions options;
  options.prefix = "/nonexistent-dir/x";
  options.shards = 2;
  try {
    ShardWriter writer(options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x-00000-of-00002.txt"),
              std::string::npos)
        << e.what();
  }
  options.prefix = make_temp_dir("sift_shard_writer") + "/x";
  options.shards = 0;
  EXPECT_THROW(ShardWriter{options}, Error);
}

}  // namespace shard_writer_test
}  // namespace sift
