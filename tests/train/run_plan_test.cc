#include "framework/train/base/run_plan.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "core/error.h"
#include "framework/train/precision.h"

namespace sift {
namespace run_plan_test {

RunPlan plan_of(std::vector<std::string> overrides) {
  return resolve_run(load_config("", overrides));
}

TEST(RunPlan, WithoutValidationFilesTheValidSplitIsTheHashedShareOfTheTrainingFiles) {
  const RunPlan p = plan_of({"data.train.path=a.txt", "data.valid_split=0.2"});
  ASSERT_TRUE(p.data.train && p.data.valid);
  EXPECT_FALSE(p.data.test);
  EXPECT_EQ(p.data.train->part, HashPart::train);
  EXPECT_EQ(p.data.valid->part, HashPart::valid);
  EXPECT_EQ(p.data.valid->patterns, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(p.data.valid->key, "data.train.path");
  EXPECT_EQ(p.data.train_stream.valid_split, 0.2);
}

TEST(RunPlan, CrossValidationTestsOnTheHeldOutFoldOfTheTrainingFiles) {
  const RunPlan p =
      plan_of({"data.train.path=a.txt", "data.folds=5", "data.fold=2", "data.valid_split=0"});
  ASSERT_TRUE(p.data.test);
  EXPECT_EQ(p.data.test->part, HashPart::held_out);
  EXPECT_EQ(p.data.train->part, HashPart::train);
  EXPECT_EQ(p.data.eval_stream.folds.count, 5);
  EXPECT_EQ(p.data.eval_stream.folds.index, 2);
}

TEST(RunPlan, TrainingStreamsShuffleInTheirBatchSizeAndEvaluationStreamsKeepFileOrder) {
  const RunPlan p = plan_of({"data.train.path=a.txt", "data.valid.path=v.txt", "train.batch_size=7",
                             "data.shuffle_buffer=99", "data.workers=3"});
  EXPECT_EQ(p.data.valid->part, HashPart::all);
  EXPECT_EQ(p.data.train->part, HashPart::all);
  EXPECT_EQ(p.data.train_stream.batch_size, 7);
  EXPECT_EQ(p.data.train_stream.shuffle_buffer, 99);
  EXPECT_EQ(p.data.eval_stream.batch_size, 256);
  EXPECT_EQ(p.data.eval_stream.shuffle_buffer, 0);
  EXPECT_EQ(p.data.eval_stream.workers, 3);
}

TEST(RunPlan, EachPartGetsItsOptionsFromTheConfig) {
  const RunPlan p =
      plan_of({"data.train.path=a.txt", "model.type=transformer", "train.precision=bf16",
               "train.loss_reduction=sum", "train.label_smoothing=0.1", "data.multi_label=true",
               "train.threshold=0.3", "run.dist_timeout_seconds=12",
               "train.gradient_checkpointing=every", "train.loss_scale_growth_interval=77"});
  EXPECT_TRUE(p.loss.sum);
  EXPECT_TRUE(p.loss.multi_label);
  EXPECT_DOUBLE_EQ(p.loss.label_smoothing, 0.1);
  EXPECT_TRUE(p.labels.multi_label);
  EXPECT_DOUBLE_EQ(p.labels.threshold, 0.3);
  EXPECT_EQ(p.precision.autocast, Precision::bf16);
  EXPECT_FALSE(p.precision.loss_scaling);  // auto: on for fp16 only
  EXPECT_FALSE(make_scaler(p.precision).enabled());
  EXPECT_EQ(p.precision.scaler.growth_interval, 77);
  EXPECT_EQ(p.distributed.timeout.count(), 12000);
  EXPECT_EQ(p.model.type, "transformer");
  EXPECT_EQ(p.data.encoder.kind, InputKind::sequence);
}

TEST(RunPlan, DynamicLossScalingGivesAnEnabledScalerWithTheGrowthInterval) {
  const RunPlan p = plan_of({"data.train.path=a.txt", "train.loss_scaling=dynamic",
                             "train.loss_scale_growth_interval=5"});
  EXPECT_TRUE(p.precision.loss_scaling);
  EXPECT_TRUE(make_scaler(p.precision).enabled());
  EXPECT_EQ(p.precision.scaler.growth_interval, 5);
}

TEST(RunPlan, ResolvingRefusesOptionsThatDoNotGoTogetherNamingTheKey) {
  try {
    plan_of({"data.train.path=a.txt", "model.type=fasttext", "model.filters=10"});
    FAIL() << "a TextCNN option on a fastText model was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.filters"), std::string::npos) << e.what();
  }
}

}  // namespace run_plan_test
}  // namespace sift
