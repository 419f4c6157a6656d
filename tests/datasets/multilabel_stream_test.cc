// Multi-label records through the batch stream: label lists in the batches, exact resume
// with them in the shuffle buffer, and a clear error for them in a single-label task.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "datasets/sharded_stream.h"
#include "tests/test_files.h"

namespace sift {
namespace multilabel_stream_test {

namespace fs = std::filesystem;

class MultiLabelStream : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sift::testing::make_temp_dir("sift_multilabel");
    // Record i: label a always, b when i is even, c when i % 3 == 0; one distinct word.
    std::string text;
    for (int i = 0; i < kRecords; ++i) {
      text += "__label__a ";
      if (i % 2 == 0) text += "__label__b ";
      text += "w" + std::to_string(i);
      if (i % 3 == 0) text += " __label__c";
      text += "\n";
    }
    path_ = dir_ + "/multi.txt";
    std::ofstream(path_) << text;
    auto vocab = std::make_shared<Vocab>();
    for (int i = 0; i < kRecords; ++i) vocab->add("w" + std::to_string(i), 1);
    encoder_ = std::make_unique<TextEncoder>(vocab, TextEncoderOptions{});
  }
  void TearDown() override { fs::remove_all(dir_); }

  StreamOptions options(bool multi_label) const {
    StreamOptions o;
    o.workers = 2;
    o.shuffle_buffer = 20;
    o.batch_size = 7;
    o.seed = 5;
    o.prefetch = 4;
    o.multi_label = multi_label;
    return o;
  }

  // "word id: label ids" for each record of a batch.
  static std::vector<std::string> keys(const RawBatch& b) {
    std::vector<std::string> out;
    for (int64_t i = 0; i < b.size(); ++i) {
      std::string k = std::to_string(b.ids[static_cast<size_t>(b.offsets[i])]) + ":";
      const auto end =
          i + 1 < b.size() ? b.label_starts[i + 1] : static_cast<int64_t>(b.label_lists.size());
      for (auto j = b.label_starts[i]; j < end; ++j) k += std::to_string(b.label_lists[j]);
      out.push_back(k);
    }
    return out;
  }

  static constexpr int kRecords = 60;
  std::string dir_, path_;
  std::unique_ptr<TextEncoder> encoder_;
  LabelSet labels_{std::vector<std::string>{"a", "b", "c"}, "test"};
};

TEST_F(MultiLabelStream, BatchesCarryEveryLabelOfEachRecord) {
  ShardedStream s({path_}, options(true), *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  int records = 0;
  while (s.next(b)) {
    ASSERT_EQ(b.label_starts.size(), static_cast<size_t>(b.size()));
    for (const auto& k : keys(b)) {
      const int64_t id = std::stoll(k.substr(0, k.find(':')));
      int i = 0;  // the record whose word has this id
      while (i < kRecords && encoder_->vocab().id("w" + std::to_string(i)) != id) ++i;
      std::string want = "0";
      if (i % 2 == 0) want += "1";
      if (i % 3 == 0) want += "2";
      EXPECT_EQ(k.substr(k.find(':') + 1), want) << "record " << i;
      ++records;
    }
  }
  EXPECT_EQ(records, kRecords);
}

TEST_F(MultiLabelStream, ResumeKeepsTheLabelLists) {
  ShardedStream reference({path_}, options(true), *encoder_, labels_);
  reference.start_epoch(1);
  std::vector<std::string> expected;
  RawBatch b;
  while (reference.next(b)) {
    for (auto& k : keys(b)) expected.push_back(k);
  }
  ShardedStream first({path_}, options(true), *encoder_, labels_);
  first.start_epoch(1);
  std::vector<std::string> got;
  for (int n = 0; n < 3 && first.next(b); ++n) {
    for (auto& k : keys(b)) got.push_back(k);
  }
  ShardedStream second({path_}, options(true), *encoder_, labels_);
  second.restore_state(first.save_state());  // the shuffle buffer holds multi-label records
  while (second.next(b)) {
    for (auto& k : keys(b)) got.push_back(k);
  }
  EXPECT_EQ(got, expected);
}

TEST_F(MultiLabelStream, SingleLabelTaskRefusesALabelListNamingLineAndOption) {
  ShardedStream s({path_}, options(false), *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  try {
    while (s.next(b)) {
    }
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path_ + ":1:"), std::string::npos) << what;
    EXPECT_NE(what.find("3 labels (a, b, c)"), std::string::npos) << what;
    EXPECT_NE(what.find("data.multi_label: true"), std::string::npos) << what;
  }
}

}  // namespace multilabel_stream_test
}  // namespace sift
