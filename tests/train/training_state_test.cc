#include "framework/train/base/training_state.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace sift {
namespace training_state_test {

TrainingState sample_state() {
  TrainingState s;
  s.step = 120;
  s.epoch = 3;
  s.examples_seen = 3840;
  s.epoch_loss_sum = 12.5;
  s.epoch_loss_examples = 640;
  s.last_metrics = {{"valid_accuracy", 0.75}};
  s.has_best = true;
  s.best_value = 0.75;
  s.best_epoch = 2;
  s.best_step = 80;
  s.bad_validations = 1;
  return s;
}

TEST(TrainingState, MidEpochMetadataReadsBackEveryCounter) {
  const TrainingState s = sample_state();
  nlohmann::json meta;
  s.to_meta(meta, /*epoch_complete=*/false);
  const TrainingState back = TrainingState::from_meta(meta, meta, "last.ckpt");
  EXPECT_EQ(back.step, s.step);
  EXPECT_EQ(back.epoch, s.epoch);
  EXPECT_EQ(back.examples_seen, s.examples_seen);
  EXPECT_EQ(back.epoch_loss_sum, s.epoch_loss_sum);
  EXPECT_EQ(back.epoch_loss_examples, s.epoch_loss_examples);
  EXPECT_EQ(back.last_metrics, s.last_metrics);
  EXPECT_EQ(back.has_best, s.has_best);
  EXPECT_EQ(back.best_value, s.best_value);
  EXPECT_EQ(back.best_epoch, s.best_epoch);
  EXPECT_EQ(back.best_step, s.best_step);
  EXPECT_EQ(back.bad_validations, s.bad_validations);
}

TEST(TrainingState, ACompleteEpochResumesAtTheNextWithFreshLossSums) {
  nlohmann::json meta;
  sample_state().to_meta(meta, /*epoch_complete=*/true);
  const TrainingState back = TrainingState::from_meta(meta, meta, "last.ckpt");
  EXPECT_EQ(back.epoch, 4);
  EXPECT_EQ(back.epoch_loss_sum, 0.0);
  EXPECT_EQ(back.epoch_loss_examples, 0);
  EXPECT_EQ(back.examples_seen, 3840);
}

TEST(TrainingState, AnotherRanksCountersComeFromItsOwnBlob) {
  nlohmann::json meta;
  sample_state().to_meta(meta, false);
  TrainingState other;
  other.examples_seen = 7;
  other.epoch_loss_sum = 1.5;
  other.epoch_loss_examples = 3;
  const auto counters = nlohmann::json::parse(other.rank_counters());
  const TrainingState back = TrainingState::from_meta(meta, counters, "last.ckpt");
  EXPECT_EQ(back.examples_seen, 7);
  EXPECT_EQ(back.epoch_loss_sum, 1.5);
  EXPECT_EQ(back.epoch_loss_examples, 3);
  EXPECT_EQ(back.step, 120);
}

TEST(TrainingState, AMissingKeyIsAnErrorNamingTheFileAndTheKey) {
  nlohmann::json meta;
  sample_state().to_meta(meta, false);
  meta.erase("best_step");
  try {
    TrainingState::from_meta(meta, meta, "runs/a/last.ckpt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runs/a/last.ckpt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'best_step'"), std::string::npos) << e.what();
  }
}

TEST(TrainingState, TaskCountsReadBackAsWritten) {
  Task task;
  task.train_records = 1000;
  task.train_skipped = 3;
  task.label_counts = {600, 400};
  nlohmann::json meta;
  task_counts_to_meta(task, meta);
  Task back;
  task_counts_from_meta(meta, "last.ckpt", back);
  EXPECT_EQ(back.train_records, 1000u);
  EXPECT_EQ(back.train_skipped, 3u);
  EXPECT_EQ(back.label_counts, task.label_counts);
}

}  // namespace training_state_test
}  // namespace sift
