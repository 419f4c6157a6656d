// The data plan's transfer set (train.distill.unlabeled, augment): one stream each, of
// round(ratio x batch size) unlabelled rows, reading what it should.
#include <gtest/gtest.h>

#include "config/loader.h"
#include "framework/runtime/base/data_plan.h"

namespace sift {
namespace transfer_plan_test {

DataPlan plan_of(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(),
                   {"data.train.path=[train.tsv]", "data.format=tsv", "data.text=[1]",
                    "data.label=0", "data.valid_split=0.1", "train.batch_size=32"});
  return resolve_data(load_config("", overrides));
}

TEST(TransferPlan, NoTeacherOrNoSourceMeansNoTransferStream) {
  EXPECT_TRUE(plan_of({}).transfer.empty());
  EXPECT_TRUE(plan_of({"train.distill.teacher=t"}).transfer.empty());
}

TEST(TransferPlan, UnlabeledFilesAreOneTextPerLineInBatchesOfRatioTimesTheBatchSize) {
  const DataPlan p = plan_of({"train.distill.teacher=t", "train.distill.unlabeled=[u*.txt]",
                              "train.distill.unlabeled_ratio=0.5"});
  ASSERT_EQ(p.transfer.size(), 1u);
  const TransferSource& t = p.transfer[0];
  EXPECT_EQ(t.name, "unlabeled");
  EXPECT_EQ(t.source.key, "train.distill.unlabeled");
  EXPECT_EQ(t.source.patterns, std::vector<std::string>{"u*.txt"});
  EXPECT_TRUE(t.source.format.text_only);
  EXPECT_FALSE(t.source.format.header);
  EXPECT_EQ(t.source.part, HashPart::all);
  EXPECT_EQ(t.stream.batch_size, 16);
  EXPECT_TRUE(t.stream.unlabeled);
  EXPECT_FALSE(t.stream.augment.enabled());
  EXPECT_NE(t.stream.order_salt, 0u);
  EXPECT_EQ(t.stream.seed, p.train_stream.seed);  // the same hashed split
}

TEST(TransferPlan, AugmentReadsTheTrainingPartOfTheTrainingFiles) {
  const DataPlan p = plan_of({"train.distill.teacher=t", "train.distill.unlabeled=[u.txt]",
                              "train.distill.augment.copies=2", "train.distill.augment.mask=0.2"});
  ASSERT_EQ(p.transfer.size(), 2u);
  const TransferSource& a = p.transfer[1];
  EXPECT_EQ(a.name, "augment");
  EXPECT_EQ(a.stream.batch_size, 64);
  EXPECT_EQ(p.transfer[0].stream.batch_size, 32);  // ratio 1 by default
  EXPECT_EQ(a.source.part, HashPart::train);       // validation texts stay unseen
  EXPECT_EQ(a.source.patterns, p.train->patterns);
  EXPECT_FALSE(a.source.format.text_only);
  EXPECT_DOUBLE_EQ(a.stream.augment.mask, 0.2);
  EXPECT_DOUBLE_EQ(a.stream.augment.ngram, 0.25);
  EXPECT_NE(a.stream.order_salt, p.transfer[0].stream.order_salt);
  // A tiny share still gives each batch one row.
  EXPECT_EQ(plan_of({"train.distill.teacher=t", "train.distill.augment.copies=0.001"})
                .transfer[0]
                .stream.batch_size,
            1);
}

}  // namespace transfer_plan_test
}  // namespace sift
