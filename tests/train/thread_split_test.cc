// run.threads: 0 on the fast path (framework/train/base/thread_split.h): the cores split
// between readers and trainers, with the threads in all equal to the cores.
#include "framework/train/base/thread_split.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "config/loader.h"

namespace sift {
namespace thread_split_test {

const std::string kGolden = std::string(SIFT_SOURCE_DIR) + "/tests/data/golden/golden.yaml";

// The golden fastText run on its fast path, without its own run.threads and data.workers
// (a copy with those lines left out), then `sets`.
SiftConfig config(std::vector<std::string> sets) {
  SiftConfig c = load_config(kGolden, {"train.fast_path=auto"});
  c.origin.erase("run.threads");
  c.origin.erase("data.workers");
  c.run.threads = 0;
  c.data.workers = 2;
  for (const auto& s : sets) apply_override(c, s);
  return c;
}

TEST(ThreadSplit, RunThreadsLeftAtItsDefaultKeepsTheThreadsAsConfigured) {
  EXPECT_FALSE(split_cores(config({}), 8).has_value());
  EXPECT_FALSE(split_cores(config({"run.threads=2"}), 8).has_value());
}

TEST(ThreadSplit, TwoCoresAreOneTrainerAndOneReader) {
  const auto s = split_cores(config({"run.threads=0"}), 2);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->trainers, 1);
  EXPECT_EQ(s->readers, 1);
  EXPECT_EQ(s->line, "run.threads 0: 2 cores = 1 trainer + 1 reader");
}

TEST(ThreadSplit, ThreeCoresAreOneTrainerAndTwoReaders) {
  const auto s = split_cores(config({"run.threads=0"}), 3);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->trainers, 1);
  EXPECT_EQ(s->readers, 2);
}

TEST(ThreadSplit, EightCoresAreFourHogwildTrainersEachWithItsReader) {
  const auto s = split_cores(config({"run.threads=0"}), 8);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->trainers, 4);
  EXPECT_EQ(s->readers, 4);
  EXPECT_EQ(s->line, "run.threads 0: 8 cores = 4 trainers + 4 readers");
}

TEST(ThreadSplit, ValidatingWithinEpochsKeepsOneTrainer) {
  const auto s = split_cores(config({"run.threads=0", "train.eval_every=100"}), 8);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->trainers, 1);
  EXPECT_EQ(s->readers, 7);
}

TEST(ThreadSplit, AGivenKeyKeepsItsValueAndTheLineSaysTheThreadsInAll) {
  const auto s = split_cores(config({"run.threads=0", "data.workers=3"}), 2);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->trainers, 1);
  EXPECT_EQ(s->readers, 3);
  EXPECT_EQ(s->line,
            "run.threads 0: 2 cores = 1 trainer + 3 readers (data.workers), 4 threads in all");
  const auto t = split_cores(config({"run.threads=0", "train.fast_path_threads=2"}), 2);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->trainers, 2);
  EXPECT_EQ(t->readers, 2);
}

TEST(ThreadSplit, ARunThroughAutogradIsNotSplit) {
  EXPECT_FALSE(split_cores(config({"run.threads=0", "train.fast_path=off"}), 8).has_value());
  EXPECT_FALSE(split_cores(config({"run.threads=0", "train.optimizer.type=adam"}), 8).has_value());
}

TEST(ThreadSplit, ApplyingItSetsTheKeysThatAResumeReadsBack) {
  SiftConfig c = config({"run.threads=0"});
  const auto expected = split_cores(c, static_cast<int64_t>(std::thread::hardware_concurrency()));
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(apply_core_split(c), expected->line);
  EXPECT_EQ(c.train.fast_path_threads, expected->trainers);
  if (expected->trainers == 1) {
    EXPECT_EQ(c.data.workers, expected->readers);
  }
  EXPECT_TRUE(is_set(c, "data.workers"));
  EXPECT_TRUE(is_set(c, "train.fast_path_threads"));
  // A resumed run's config gives both keys: the same threads again.
  SiftConfig again = c;
  apply_core_split(again);
  EXPECT_EQ(again.train.fast_path_threads, c.train.fast_path_threads);
  EXPECT_EQ(again.data.workers, c.data.workers);
}

}  // namespace thread_split_test
}  // namespace sift
