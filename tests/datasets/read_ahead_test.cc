// ReadAhead: the vocabulary pass's records, read and tokenized on a thread of their own,
// come back in file order with their file, and a reading error comes after the records
// before it, as a plain read would have thrown it.
#include "datasets/read_ahead.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace read_ahead_test {

namespace fs = std::filesystem;

class ReadAheadTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = sift::testing::make_temp_dir("sift_read_ahead"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, int first, int count, const std::string& tail = "") {
    const std::string path = dir_ + "/" + name;
    std::ofstream out(path);
    for (int i = first; i < first + count; ++i) out << "__label__" << i % 3 << " w" << i << " x\n";
    out << tail;
    return path;
  }
  static ReadAhead::Tokenize words() {
    return [](const std::string& text, std::vector<std::string>& out) {
      out.clear();
      size_t start = 0;
      for (size_t at; (at = text.find(' ', start)) != std::string::npos; start = at + 1) {
        out.push_back(text.substr(start, at - start));
      }
      out.push_back(text.substr(start));
    };
  }
  std::string dir_;
};

TEST_F(ReadAheadTest, RecordsComeInFileOrderWithTheirTokensAndFile) {
  const std::string a = write("a.txt", 0, 1000), b = write("b.txt", 1000, 37);
  ExampleStream stream({a, b}, TextFormat{}, {});
  ReadAhead reader(stream, words(), /*chunk=*/64, /*chunks=*/2);
  int i = 0;
  while (const ReadRecord* r = reader.next()) {
    ASSERT_EQ(r->tokens, (std::vector<std::string>{"w" + std::to_string(i), "x"})) << i;
    EXPECT_EQ(r->example.labels, (std::vector<std::string>{std::to_string(i % 3)}));
    ASSERT_NE(r->file, nullptr);
    EXPECT_EQ(*r->file, i < 1000 ? a : b) << i;
    ++i;
  }
  EXPECT_EQ(i, 1037);
  EXPECT_EQ(reader.next(), nullptr);
}

TEST_F(ReadAheadTest, AnErrorComesAfterTheRecordsBeforeIt) {
  const std::string a = write("a.txt", 0, 300, "no label on line 301\n");
  ExampleStream stream({a}, TextFormat{}, {});
  ReadAhead reader(stream, words(), 64, 2);
  int seen = 0;
  try {
    while (reader.next() != nullptr) ++seen;
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.txt:301"), std::string::npos) << e.what();
  }
  EXPECT_EQ(seen, 300);
}

TEST_F(ReadAheadTest, ACallerThatStopsEarlyDoesNotWaitForTheRest) {
  const std::string a = write("a.txt", 0, 20000);
  ExampleStream stream({a}, TextFormat{}, {});
  {
    ReadAhead reader(stream, words(), 16, 1);
    ASSERT_NE(reader.next(), nullptr);
  }  // the reading thread is stopped and joined here
  SUCCEED();
}

}  // namespace read_ahead_test
}  // namespace sift
