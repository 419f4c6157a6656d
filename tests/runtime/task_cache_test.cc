// The vocabulary pass's cache (issue #46): a second count of the same files with the same
// options is read back and equals the first; a changed file, a changed option or a torn
// entry is counted again; SIFT_CACHE_DIR=off keeps nothing.
#include "framework/runtime/base/task_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

#include "config/loader.h"
#include "framework/runtime/base/task.h"
#include "tests/test_files.h"

namespace sift {
namespace task_cache_test {

namespace fs = std::filesystem;

class TaskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_task_cache");
    setenv("SIFT_CACHE_DIR", (dir_ + "/cache").c_str(), 1);
    write("__label__a one two three\n__label__b four five\n__label__a one six\n");
  }
  void TearDown() override {
    unsetenv("SIFT_CACHE_DIR");
    fs::remove_all(dir_);
  }
  void write(const std::string& text) { std::ofstream(dir_ + "/train.txt") << text; }
  DataPlan plan(std::vector<std::string> more = {}) const {
    more.push_back("data.train.path=[" + dir_ + "/train.txt]");
    more.push_back("data.valid_split=0");
    return resolve_data(load_config("", more));
  }
  static std::vector<std::string> words(const Task& t) {
    std::vector<std::string> out;
    for (int64_t id = Vocab::kUnk + 1; id < t.vocab->size(); ++id) out.push_back(t.vocab->word(id));
    return out;
  }
  size_t entries() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_ + "/cache")) n += e.is_regular_file();
    return n;
  }
  std::string dir_;
};

TEST_F(TaskCache, ASecondCountOfTheSameFilesIsReadBackAndEqualsTheFirst) {
  const Task first = build_task(plan());
  EXPECT_EQ(first.vocabulary_cache, "written");
  const Task second = build_task(plan());
  EXPECT_EQ(second.vocabulary_cache, "read");
  EXPECT_EQ(words(second), words(first));
  EXPECT_EQ(second.labels.names(), first.labels.names());
  EXPECT_EQ(second.label_counts, first.label_counts);
  EXPECT_EQ(second.train_records, 3u);
  for (int64_t id = 1; id < first.vocab->size(); ++id) {
    EXPECT_EQ(second.vocab->count(id), first.vocab->count(id));
  }
  EXPECT_EQ(entries(), 1u);
}

TEST_F(TaskCache, AChangedFileOrOptionIsCountedAgain) {
  build_task(plan());
  // The same size, other words, a later modification time: a new identity.
  write("__label__a one two three\n__label__b four fiv2\n__label__a one six\n");
  struct utimbuf later {
    2000000000, 2000000000
  };
  ASSERT_EQ(utime((dir_ + "/train.txt").c_str(), &later), 0);
  const Task changed = build_task(plan());
  EXPECT_EQ(changed.vocabulary_cache, "written");
  EXPECT_NE(changed.vocab->id("fiv2"), Vocab::kUnk);
  const Task lowered = build_task(plan({"tokenizer.min_count=2"}));
  EXPECT_EQ(lowered.vocabulary_cache, "written");
  EXPECT_EQ(lowered.vocab->id("fiv2"), Vocab::kUnk);
  EXPECT_EQ(build_task(plan({"tokenizer.min_count=2"})).vocabulary_cache, "read");
}

TEST_F(TaskCache, ATornEntryIsCountedAgainAndWrittenOver) {
  build_task(plan());
  for (const auto& e : fs::directory_iterator(dir_ + "/cache")) {
    std::ofstream(e.path()) << "{\"identity\": \"x";
  }
  const Task again = build_task(plan());
  EXPECT_EQ(again.vocabulary_cache, "written");
  EXPECT_EQ(build_task(plan()).vocabulary_cache, "read");
}

TEST_F(TaskCache, OffKeepsNothing) {
  setenv("SIFT_CACHE_DIR", "off", 1);
  EXPECT_EQ(build_task(plan()).vocabulary_cache, "");
  EXPECT_EQ(build_task(plan()).vocabulary_cache, "");
  EXPECT_FALSE(fs::exists(dir_ + "/cache"));
}

TEST_F(TaskCache, KeepsAtMostItsNumberOfEntriesTheOldestGoingFirst) {
  for (int k = 0; k < kTaskCacheEntries + 3; ++k) {
    build_task(plan({"run.seed=" + std::to_string(k + 1)}));
  }
  EXPECT_EQ(entries(), static_cast<size_t>(kTaskCacheEntries));
  const auto last = std::to_string(kTaskCacheEntries + 3);
  EXPECT_EQ(build_task(plan({"run.seed=" + last})).vocabulary_cache, "read");
}

}  // namespace task_cache_test
}  // namespace sift
