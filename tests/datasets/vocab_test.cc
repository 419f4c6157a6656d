#include "datasets/vocab.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace vocab_test {

using sift::testing::error_of;

// A path in this test process's own temporary root (removed when the process exits).
std::string temp_path(const std::string& name) {
  return fmt::format("{}/sift_vocab_test_{}", testing::temp_root(), name);
}

std::string write_file(const std::string& name, const std::string& contents) {
  std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

// Distinct, random-looking lowercase words: multiplying by an odd constant is a
// bijection on 32-bit values, written in base 26.
std::string_view distinct_word(uint32_t i, char (&buffer)[16]) {
  uint32_t x = i * 2654435761u;
  size_t n = 0;
  buffer[n++] = 'q';
  do {
    buffer[n++] = static_cast<char>('a' + x % 26);
    x /= 26;
  } while (x > 0);
  return std::string_view(buffer, n);
}

TEST(Vocab, StartsWithTheSpecials) {
  Vocab vocab;
  EXPECT_EQ(vocab.size(), 2);
  EXPECT_EQ(vocab.word(Vocab::kPad), "<pad>");
  EXPECT_EQ(vocab.word(Vocab::kUnk), "<unk>");
  EXPECT_EQ(vocab.count(Vocab::kPad), 0u);
  // Specials are not found by name: text never maps to padding.
  EXPECT_EQ(vocab.id("<pad>"), Vocab::kUnk);
  EXPECT_FALSE(vocab.contains("<unk>"));
}

TEST(Vocab, AddsAndLooksUpWords) {
  Vocab vocab;
  vocab.add("cat", 7);
  vocab.add("école", 3);
  EXPECT_EQ(vocab.size(), 4);
  EXPECT_EQ(vocab.id("cat"), 2);
  EXPECT_EQ(vocab.id(std::string_view("école")), 3);
  EXPECT_EQ(vocab.id("dog"), Vocab::kUnk);
  EXPECT_EQ(vocab.id(""), Vocab::kUnk);
  EXPECT_TRUE(vocab.contains("cat"));
  EXPECT_EQ(vocab.count(2), 7u);
  EXPECT_EQ(vocab.word(3), "école");
}

TEST(Vocab, RejectsBadWordsAndIds) {
  Vocab vocab;
  vocab.add("cat", 1);
  EXPECT_EQ(error_of([&] { vocab.add("cat", 2); }), "vocabulary word \"cat\" is already present");
  EXPECT_THROW(vocab.add("a\tb", 1), Error);
  EXPECT_THROW(vocab.add("a\nb", 1), Error);
  EXPECT_THROW(vocab.add("", 1), Error);
  EXPECT_EQ(error_of([&] { vocab.word(3); }), "vocabulary id 3 is out of range [0, 3)");
  EXPECT_THROW(vocab.count(-1), Error);
}

TEST(Vocab, FindsEveryWordOfALargeVocabulary) {
  Vocab vocab;
  char buffer[16];
  for (uint32_t i = 0; i < 50'000; ++i) vocab.add(std::string(distinct_word(i, buffer)), i);
  ASSERT_EQ(vocab.size(), 50'002);
  for (uint32_t i = 0; i < 50'000; ++i) {
    ASSERT_EQ(vocab.id(distinct_word(i, buffer)), int64_t{i} + 2);
  }
  EXPECT_EQ(vocab.id(distinct_word(50'000, buffer)), Vocab::kUnk);
}

TEST(Vocab, SaveAndLoadRoundTrip) {
  Vocab vocab;
  vocab.add("the", 100);
  vocab.add("привет", 42);
  vocab.add("<pad>", 5);  // an ordinary word that looks like a special
  vocab.add("!", 1);
  std::string path = temp_path("roundtrip.vocab");
  vocab.save(path);
  Vocab loaded = Vocab::load(path);
  ASSERT_EQ(loaded.size(), vocab.size());
  for (int64_t id = 0; id < vocab.size(); ++id) {
    EXPECT_EQ(loaded.word(id), vocab.word(id));
    EXPECT_EQ(loaded.count(id), vocab.count(id));
    if (id > Vocab::kUnk) {
      EXPECT_EQ(loaded.id(vocab.word(id)), id);
    }
  }
  EXPECT_EQ(std::fopen((path + ".tmp").c_str(), "r"), nullptr);  // renamed away
  std::remove(path.c_str());
}

TEST(Vocab, StreamSaveMatchesFileSaveAndLoadsBack) {
  Vocab vocab;
  vocab.add("the", 100);
  vocab.add("cat", 3);
  std::ostringstream out;
  vocab.save(out);
  EXPECT_EQ(out.str(), "sift-vocab 1\nthe\t100\ncat\t3\n");
  const std::string path = temp_path("stream.vocab");
  vocab.save(path);
  EXPECT_EQ(sift::testing::slurp(path), out.str());
  std::istringstream in(out.str());
  Vocab loaded = Vocab::load(in, "vocab.txt");
  ASSERT_EQ(loaded.size(), 4);
  EXPECT_EQ(loaded.id("cat"), 3);
  EXPECT_EQ(loaded.count(2), 100u);
  std::remove(path.c_str());
}

TEST(Vocab, StreamLoadErrorsNameTheEntry) {
  std::istringstream in("sift-vocab 1\nthe\n");
  EXPECT_EQ(error_of([&] { Vocab::load(in, "model.pt:vocab.txt"); }),
            "model.pt:vocab.txt:2: malformed vocabulary line");
}

TEST(Vocab, LoadAcceptsCrLfLines) {
  std::string path = write_file("crlf.vocab", "sift-vocab 1\r\nthe\t5\r\ncat\t3\r\n");
  Vocab vocab = Vocab::load(path);
  EXPECT_EQ(vocab.size(), 4);
  EXPECT_EQ(vocab.id("cat"), 3);
  EXPECT_EQ(vocab.count(3), 3u);
  std::remove(path.c_str());
}

TEST(Vocab, LoadReportsMissingFile) {
  std::string path = temp_path("missing.vocab");
  EXPECT_EQ(error_of([&] { Vocab::load(path); }),
            fmt::format("cannot open {}: No such file or directory", path));
}

TEST(Vocab, LoadRejectsOtherFiles) {
  for (const char* contents : {"", "hello\n", "sift-vocab x\n", "the\t5\n"}) {
    std::string path = write_file("wrong.vocab", contents);
    EXPECT_EQ(error_of([&] { Vocab::load(path); }),
              fmt::format("{} is not a Sift vocabulary file", path))
        << contents;
    std::remove(path.c_str());
  }
}

TEST(Vocab, LoadRejectsNewerVersion) {
  std::string path = write_file("newer.vocab", "sift-vocab 7\nthe\t5\n");
  EXPECT_EQ(error_of([&] { Vocab::load(path); }),
            fmt::format("{}: vocabulary format version 7 is newer than this build supports (1)",
                        path));
  std::remove(path.c_str());
}

TEST(Vocab, LoadRejectsMalformedLines) {
  const std::vector<std::string> bad = {"cat 3", "cat\t", "\t3", "cat\tx", "cat\t3\t4",
                                        "cat\t-1", ""};
  for (const std::string& line : bad) {
    std::string path = write_file("malformed.vocab", "sift-vocab 1\nthe\t5\n" + line + "\ndog\t1\n");
    EXPECT_EQ(error_of([&] { Vocab::load(path); }),
              fmt::format("{}:3: malformed vocabulary line", path))
        << line;
    std::remove(path.c_str());
  }
  std::string path = write_file("duplicate.vocab", "sift-vocab 1\nthe\t5\nthe\t4\n");
  EXPECT_EQ(error_of([&] { Vocab::load(path); }),
            fmt::format("{}:3: duplicate vocabulary word \"the\"", path));
  std::remove(path.c_str());
}

TEST(VocabBuilder, CountsAndOrdersByFrequency) {
  VocabBuilder builder;
  builder.add(std::vector<std::string>{"b", "a", "c", "a", "b", "a"});
  builder.add("d");
  EXPECT_EQ(builder.distinct(), 4u);
  Vocab vocab = builder.build(1, 0);
  ASSERT_EQ(vocab.size(), 6);
  EXPECT_EQ(vocab.word(2), "a");
  EXPECT_EQ(vocab.count(2), 3u);
  EXPECT_EQ(vocab.word(3), "b");
  EXPECT_EQ(vocab.count(3), 2u);
  EXPECT_EQ(vocab.word(4), "c");  // c and d tie at 1: byte order
  EXPECT_EQ(vocab.word(5), "d");
}

TEST(VocabBuilder, AppliesMinCountAndMaxSize) {
  VocabBuilder builder;
  for (int i = 0; i < 5; ++i) builder.add("five");
  for (int i = 0; i < 3; ++i) builder.add("three");
  for (int i = 0; i < 2; ++i) builder.add("two");
  builder.add("one");
  Vocab by_count = builder.build(2, 0);
  EXPECT_EQ(by_count.size(), 2 + 3);
  EXPECT_FALSE(by_count.contains("one"));
  Vocab by_size = builder.build(1, 2);
  EXPECT_EQ(by_size.size(), 2 + 2);
  EXPECT_TRUE(by_size.contains("five"));
  EXPECT_TRUE(by_size.contains("three"));
  EXPECT_FALSE(by_size.contains("two"));
}

TEST(VocabBuilder, BreaksTiesDeterministically) {
  std::vector<std::string> words = {"pear", "apple", "fig", "kiwi", "date"};
  VocabBuilder forward;
  VocabBuilder backward;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < words.size(); ++i) {
      forward.add(words[i]);
      backward.add(words[words.size() - 1 - i]);
    }
  }
  Vocab a = forward.build(1, 3);
  Vocab b = backward.build(1, 3);
  ASSERT_EQ(a.size(), 5);
  for (int64_t id = 2; id < a.size(); ++id) EXPECT_EQ(a.word(id), b.word(id));
  EXPECT_EQ(a.word(2), "apple");
  EXPECT_EQ(a.word(3), "date");
  EXPECT_EQ(a.word(4), "fig");
}

TEST(VocabBuilder, PruningDropsRareWordsFirst) {
  VocabBuilder builder(4);
  for (const char* word : {"a", "a", "a", "b", "b", "c", "d"}) builder.add(word);
  EXPECT_EQ(builder.prunings(), 0u);
  builder.add("e");  // the table is full: words seen once go
  EXPECT_EQ(builder.prunings(), 1u);
  EXPECT_EQ(builder.distinct(), 3u);
  Vocab vocab = builder.build(1, 0);
  EXPECT_EQ(vocab.count(vocab.id("a")), 3u);
  EXPECT_EQ(vocab.count(vocab.id("b")), 2u);
  EXPECT_TRUE(vocab.contains("e"));
  EXPECT_FALSE(vocab.contains("c"));
}

TEST(VocabBuilder, PruningRaisesThresholdPastFrequentWordsWhenNeeded) {
  VocabBuilder builder(2);
  for (int i = 0; i < 5; ++i) builder.add("a");
  for (int i = 0; i < 3; ++i) builder.add("b");
  builder.add("c");  // threshold 2 would drop nothing: it jumps past b's count
  EXPECT_EQ(builder.distinct(), 2u);
  EXPECT_GE(builder.threshold(), 4u);
  Vocab vocab = builder.build(1, 0);
  EXPECT_EQ(vocab.count(vocab.id("a")), 5u);
  EXPECT_TRUE(vocab.contains("c"));
  EXPECT_FALSE(vocab.contains("b"));
}

TEST(VocabBuilder, MemoryStaysBoundedOnManyDistinctWords) {
  const size_t max_entries = 100'000;
  VocabBuilder builder(max_entries);
  char buffer[16];
  uint64_t frequent_counts[3] = {0, 0, 0};
  const char* frequent[3] = {"the", "and", "zebra"};
  const uint32_t periods[3] = {7, 50, 1000};
  size_t most = 0;
  for (uint32_t i = 0; i < 2'000'000; ++i) {
    builder.add(distinct_word(i, buffer));
    for (int k = 0; k < 3; ++k) {
      if (i % periods[k] == 0) {
        builder.add(frequent[k]);
        ++frequent_counts[k];
      }
    }
    most = std::max(most, builder.distinct());
  }
  EXPECT_LE(most, max_entries);
  EXPECT_EQ(most, max_entries);  // it did fill up before each pruning
  EXPECT_GT(builder.prunings(), 0u);
  Vocab vocab = builder.build(1, 0);
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(vocab.contains(frequent[k])) << frequent[k];
    EXPECT_EQ(vocab.count(vocab.id(frequent[k])), frequent_counts[k]) << frequent[k];
  }
  EXPECT_EQ(vocab.word(2), "the");
  EXPECT_EQ(vocab.word(3), "and");
  EXPECT_EQ(vocab.word(4), "zebra");
}

}  // namespace vocab_test
}  // namespace sift
