// Drives the built sift-gen-corpus (and `sift shard` on its output) as a user would.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "datasets/line_reader.h"
#include "tests/test_files.h"

namespace gen_corpus_test {

using Lines = std::vector<std::string>;

std::string gen_binary() {
  const std::string sift = SIFT_BINARY;
  return sift.substr(0, sift.rfind('/') + 1) + "sift-gen-corpus";  // built beside sift
}

std::string temp_dir() { return sift::testing::make_temp_dir("sift_gen_corpus"); }

// Runs a command line; returns its exit status, stdout and stderr into `output`.
int run(const std::string& command, std::string* output = nullptr) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  const int status = pclose(pipe);
  if (output != nullptr) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Lines read_lines(const std::string& path) {
  sift::LineReader reader(path);
  Lines lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

std::string shard(const std::string& prefix, int i, int n, const std::string& suffix = "") {
  char name[64];
  std::snprintf(name, sizeof name, "-%05d-of-%05d.txt", i, n);
  return prefix + name + suffix;
}

TEST(GenCorpus, DeterministicForASeedWhateverTheThreads) {
  const std::string dir = temp_dir();
  const std::string gen = gen_binary() + " --lines 20000 --shards 3 --seed 5";
  ASSERT_EQ(run(gen + " --out " + dir + "/a"), 0);
  ASSERT_EQ(run(gen + " --out " + dir + "/b --threads 3"), 0);
  ASSERT_EQ(run(gen_binary() + " --lines 20000 --shards 3 --seed 6 --out " + dir + "/c"), 0);
  for (int i = 0; i < 3; ++i) {
    const std::string a = read_bytes(shard(dir + "/a", i, 3));
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, read_bytes(shard(dir + "/b", i, 3)));
    EXPECT_NE(a, read_bytes(shard(dir + "/c", i, 3)));
  }
}

TEST(GenCorpus, LineCountsAndFastTextFormat) {
  const std::string dir = temp_dir();
  std::string out;
  ASSERT_EQ(run(gen_binary() + " --lines 30001 --shards 4 --classes 6 --uneven --compress zst" +
                    " --max-length 50 --out " + dir + "/f",
                &out),
            0)
      << out;
  EXPECT_NE(out.find("30001 lines"), std::string::npos) << out;
  const std::regex fasttext("__label__c([0-9]+)( [a-z]+)+");
  std::map<int, int> per_class;
  size_t total = 0, smallest = SIZE_MAX, largest = 0;
  for (int i = 0; i < 4; ++i) {
    const Lines lines = read_lines(shard(dir + "/f", i, 4, ".zst"));
    total += lines.size();
    smallest = std::min(smallest, lines.size());
    largest = std::max(largest, lines.size());
    for (const auto& line : lines) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(line, m, fasttext)) << line;
      ++per_class[std::stoi(m[1])];
      EXPECT_LE(std::count(line.begin(), line.end(), ' '), 50);  // --max-length
    }
  }
  EXPECT_EQ(total, 30001u);
  EXPECT_GT(largest, smallest * 11 / 10);  // --uneven
  ASSERT_EQ(per_class.size(), 6u);         // labels c0..c5, roughly uniform
  for (const auto& [c, n] : per_class) EXPECT_GT(n, 30001 / 6 / 2) << c;
}

TEST(GenCorpus, LabelZipfSkewsTheClassesAsTheirRanks) {
  const std::string dir = temp_dir();
  ASSERT_EQ(run(gen_binary() + " --lines 20000 --classes 50 --label-zipf 1 --out " + dir + "/z"),
            0);
  std::map<int, int> per_class;
  for (const auto& line : read_lines(shard(dir + "/z", 0, 1))) {
    ++per_class[std::stoi(line.substr(std::string("__label__c").size()))];
  }
  // Weights 1/(k+1): c0 about twice c1 and ten times c9; c49 fifty times rarer than c0.
  EXPECT_NEAR(double(per_class[0]) / per_class[1], 2.0, 0.3);
  EXPECT_NEAR(double(per_class[0]) / per_class[9], 10.0, 2.0);
  EXPECT_GT(per_class[0], 20 * per_class[49]);
  std::string out;
  EXPECT_NE(run(gen_binary() + " --out x --label-zipf -1", &out), 0);
  EXPECT_NE(out.find("--label-zipf"), std::string::npos) << out;
}

TEST(GenCorpus, BadArgumentsAndUnwritableOutputFailWithOneMessage) {
  std::string out;
  EXPECT_NE(run(gen_binary() + " --out x --classes 1", &out), 0);
  EXPECT_NE(out.find("--classes"), std::string::npos) << out;
  EXPECT_NE(run(gen_binary() + " --lines 10 --out /nonexistent-dir/x", &out), 0);
  EXPECT_NE(out.find("cannot write /nonexistent-dir/x-00000-of-00001.txt"), std::string::npos)
      << out;
}

TEST(ShardCommand, ReshardsGeneratedCorpusKeepingEveryLine) {
  const std::string dir = temp_dir();
  ASSERT_EQ(run(gen_binary() + " --lines 5000 --shards 2 --compress gz --out " + dir + "/g"), 0);
  std::string out;
  ASSERT_EQ(
      run(std::string(SIFT_BINARY) + " shard " + shard(dir + "/g", 0, 2, ".gz") + " - --out " +
              dir + "/s --shards 3 --compress zst --shuffle --buffer 100 --seed 3 < " +
              shard(dir + "/g", 1, 2, ".gz"),
          &out),
      0)
      << out;
  EXPECT_NE(out.find("5000 lines"), std::string::npos) << out;
  Lines in = read_lines(shard(dir + "/g", 0, 2, ".gz"));
  const Lines in1 = read_lines(shard(dir + "/g", 1, 2, ".gz"));
  in.insert(in.end(), in1.begin(), in1.end());
  Lines got;
  for (int i = 0; i < 3; ++i) {
    const Lines part = read_lines(shard(dir + "/s", i, 3, ".zst"));
    got.insert(got.end(), part.begin(), part.end());
  }
  EXPECT_NE(got, in);  // shuffled
  std::sort(in.begin(), in.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, in);
}

TEST(ShardCommand, HeaderAndErrors) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/a.tsv") << "text\tlabel\nx\t1\ny\t0\n";
  std::ofstream(dir + "/b.tsv") << "text\tlabel\nz\t1\n";
  std::ofstream(dir + "/c.tsv") << "other\theader\nw\t0\n";
  const std::string sift = SIFT_BINARY;
  ASSERT_EQ(run(sift + " shard " + dir + "/a.tsv " + dir + "/b.tsv --header --shards 2 --out " +
                dir + "/h"),
            0);
  EXPECT_EQ(read_lines(shard(dir + "/h", 0, 2)), (Lines{"text\tlabel", "x\t1", "z\t1"}));
  EXPECT_EQ(read_lines(shard(dir + "/h", 1, 2)), (Lines{"text\tlabel", "y\t0"}));

  std::string out;
  EXPECT_EQ(run(sift + " shard " + dir + "/a.tsv " + dir + "/c.tsv --header --shards 2 --out " +
                    dir + "/bad",
                &out),
            1);
  EXPECT_NE(out.find("header"), std::string::npos) << out;
  EXPECT_EQ(run("ls " + dir + "/bad*", &out), 2) << out;  // nothing left behind
  EXPECT_EQ(run(sift + " shard " + dir + "/missing --shards 2 --out " + dir + "/m", &out), 1);
  EXPECT_NE(out.find("cannot open"), std::string::npos) << out;
}

}  // namespace gen_corpus_test
