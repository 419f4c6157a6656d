#include "datasets/stopwords.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace sift {
namespace stopwords_test {

namespace fs = std::filesystem;

bool has(const std::vector<std::string>& words, const std::string& w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

TEST(Stopwords, EmptyMeansNoneAndEnglishIsTheBuiltInList) {
  EXPECT_TRUE(resolve_stopwords("").empty());
  const auto english = resolve_stopwords("english");
  EXPECT_GT(english.size(), 100u);
  for (const char* w : {"the", "of", "and", "don", "t"}) EXPECT_TRUE(has(english, w)) << w;
  for (const char* w : {"god", "car", "space", "windows"}) EXPECT_FALSE(has(english, w)) << w;
}

TEST(Stopwords, FileWordsAreReadAndSavedListsRoundTrip) {
  const fs::path dir = fs::temp_directory_path() / "sift_stopwords_test";
  fs::create_directories(dir);
  const std::string path = (dir / "words.txt").string();
  std::ofstream(path) << "# my list\nfoo bar\n\tbaz\n";
  const auto words = resolve_stopwords(path);
  EXPECT_EQ(words, (std::vector<std::string>{"foo", "bar", "baz"}));
  const std::string saved = (dir / "saved.txt").string();
  save_stopwords(saved, words);
  EXPECT_EQ(resolve_stopwords(saved), words);
  fs::remove_all(dir);
}

TEST(Stopwords, MissingOrEmptyFileNamesTheOption) {
  try {
    resolve_stopwords("/nonexistent/stop.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.stopwords"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/stop.txt"), std::string::npos);
  }
  const std::string path = (fs::temp_directory_path() / "sift_empty_stop.txt").string();
  std::ofstream(path) << "# nothing\n";
  EXPECT_THROW(resolve_stopwords(path), Error);
  fs::remove(path);
}

}  // namespace stopwords_test
}  // namespace sift
