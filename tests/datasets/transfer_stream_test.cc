// Distillation's transfer set in the data pipeline: text-only files read as unlabelled
// records (label -1), augmented training texts that are the same across a save and
// restore, and RawBatch::append, which puts them after a labelled batch.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "datasets/augment.h"
#include "datasets/sharded_stream.h"
#include "datasets/vocab.h"
#include "tests/test_files.h"

namespace sift {
namespace transfer_stream_test {

namespace fs = std::filesystem;

class TransferStream : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_transfer");
    auto vocab = std::make_shared<Vocab>();
    for (int i = 0; i < 300; ++i) vocab->add("w" + std::to_string(i), 1);
    vocab->add("__label__c1", 1);
    TextEncoderOptions e;
    e.kind = InputKind::sequence;
    encoder_ = std::make_unique<TextEncoder>(vocab, e);
    labels_ = LabelSet({"c0", "c1"}, "test");
  }
  void TearDown() override { fs::remove_all(dir_); }

  StreamOptions options() const {
    StreamOptions o;
    o.workers = 2;
    o.shuffle_buffer = 20;
    o.batch_size = 7;
    o.seed = 5;
    o.prefetch = 4;
    o.unlabeled = true;
    o.keep_text = true;
    return o;
  }

  // Every batch's texts and labels from where the stream stands to the end of the epoch.
  static std::vector<std::string> rest_of_epoch(ShardedStream& s) {
    std::vector<std::string> out;
    RawBatch b;
    while (s.next(b)) {
      for (int64_t i = 0; i < b.size(); ++i) {
        out.push_back(b.texts[static_cast<size_t>(i)] + "|" + std::to_string(b.labels[i]));
      }
    }
    return out;
  }

  std::string dir_;
  std::unique_ptr<TextEncoder> encoder_;
  LabelSet labels_;
};

TEST_F(TransferStream, ATextOnlyFileGivesEveryLineWholeWithLabelMinusOne) {
  const std::string path = dir_ + "/unlabeled.txt";
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "w" + std::to_string(i) + " __label__c1\tw" + std::to_string(i + 1) + "\n";
  text += "\n";  // a blank line is no record
  testing::write_file(path, text);
  StreamOptions o = options();
  o.format.text_only = true;
  ShardedStream s({path}, o, *encoder_, labels_, encoder_.get());
  s.start_epoch(1);
  RawBatch b;
  std::set<std::string> texts;
  while (s.next(b)) {
    ASSERT_LE(b.size(), 7);
    ASSERT_EQ(b.teacher_offsets.size(), static_cast<size_t>(b.size()));
    for (int64_t i = 0; i < b.size(); ++i) {
      EXPECT_EQ(b.labels[i], -1);
      texts.insert(b.texts[static_cast<size_t>(i)]);
    }
  }
  ASSERT_EQ(texts.size(), 100u);
  EXPECT_EQ(texts.count("w7 __label__c1\tw8"), 1u);  // the line as it is, labels and all
}

TEST_F(TransferStream, AugmentedTextsChangeWithTheEpochAndSurviveASaveAndRestore) {
  const std::string path = dir_ + "/train.txt";
  std::string text;
  for (int i = 0; i < 150; ++i) {
    text += "__label__c" + std::to_string(i % 2);
    for (int k = 0; k < 8; ++k) text += " w" + std::to_string((i + k) % 300);
    text += "\n";
  }
  testing::write_file(path, text);
  StreamOptions o = options();
  o.augment = {0.2, 0.5};
  o.order_salt = 11;
  ShardedStream whole({path}, o, *encoder_, labels_, encoder_.get());
  whole.start_epoch(1);
  const auto first = rest_of_epoch(whole);
  whole.start_epoch(2);
  const auto second = rest_of_epoch(whole);
  ASSERT_EQ(first.size(), 150u);
  EXPECT_NE(first, second);
  size_t masked = 0;
  for (const auto& t : first) masked += t.find(kMaskToken) != std::string::npos;
  EXPECT_GT(masked, 30u);
  EXPECT_LT(masked, 150u);

  // Cut after 5 batches of epoch 2, restored into a new stream: the same rest.
  ShardedStream cut({path}, o, *encoder_, labels_, encoder_.get());
  cut.start_epoch(2);
  RawBatch b;
  std::vector<std::string> before;
  for (int k = 0; k < 5 && cut.next(b); ++k) {
    for (int64_t i = 0; i < b.size(); ++i) {
      before.push_back(b.texts[static_cast<size_t>(i)] + "|" + std::to_string(b.labels[i]));
    }
  }
  // Texts are not part of a saved state: the restored stream's ids must still match.
  ShardedStream resumed({path}, o, *encoder_, labels_, encoder_.get());
  resumed.restore_state(cut.save_state());
  RawBatch from_cut, from_resumed;
  while (cut.next(from_cut)) {
    ASSERT_TRUE(resumed.next(from_resumed));
    EXPECT_EQ(from_cut.ids, from_resumed.ids);
    EXPECT_EQ(from_cut.teacher_ids, from_resumed.teacher_ids);
    EXPECT_EQ(from_cut.labels, from_resumed.labels);
  }
  EXPECT_FALSE(resumed.next(from_resumed));
  EXPECT_EQ(before.size(), 35u);
}

TEST_F(TransferStream, AnotherOrderSaltReadsTheSameRecordsInAnotherOrder) {
  const std::string path = dir_ + "/train.txt";
  std::string text;
  for (int i = 0; i < 120; ++i) text += "__label__c0 w" + std::to_string(i) + "\n";
  testing::write_file(path, text);
  StreamOptions a = options();
  StreamOptions b = options();
  b.order_salt = 99;
  ShardedStream sa({path}, a, *encoder_, labels_);
  ShardedStream sb({path}, b, *encoder_, labels_);
  sa.start_epoch(1);
  sb.start_epoch(1);
  const auto ra = rest_of_epoch(sa);
  const auto rb = rest_of_epoch(sb);
  EXPECT_NE(ra, rb);
  EXPECT_EQ(std::multiset<std::string>(ra.begin(), ra.end()),
            std::multiset<std::string>(rb.begin(), rb.end()));
}

TEST(RawBatchAppend, UnlabelledRowsFollowTheLabelledOnesWithTheirOffsetsShifted) {
  RawBatch labelled;
  labelled.add({1, 2, 3}, 0);
  labelled.add_teacher_ids({10, 20});
  labelled.add({4}, 1);
  labelled.add_teacher_ids({30});
  RawBatch unlabelled;
  unlabelled.add({5, 6}, -1);
  unlabelled.add_teacher_ids({40, 50, 60});
  unlabelled.add({}, -1);
  unlabelled.add_teacher_ids({});
  labelled.append(unlabelled);
  EXPECT_EQ(labelled.size(), 4);
  EXPECT_EQ(labelled.ids, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(labelled.offsets, (std::vector<int64_t>{0, 3, 4, 6}));
  EXPECT_EQ(labelled.labels, (std::vector<int64_t>{0, 1, -1, -1}));
  EXPECT_EQ(labelled.teacher_ids, (std::vector<int64_t>{10, 20, 30, 40, 50, 60}));
  EXPECT_EQ(labelled.teacher_offsets, (std::vector<int64_t>{0, 2, 3, 6}));
  EXPECT_EQ(labelled.ids_end(3), 6);
  EXPECT_EQ(labelled.ids_end(2), 6);
  EXPECT_TRUE(labelled.label_starts.empty());
}

}  // namespace transfer_stream_test
}  // namespace sift
