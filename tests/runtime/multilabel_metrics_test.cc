#include "framework/runtime/base/multilabel_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sift {
namespace multilabel_metrics_test {

// 4 labels (label 3 never occurs nor is predicted), 4 records:
//   truth {0,1}  predicted {0}     label 1 missed
//   truth {2}    predicted {2}     exact
//   truth {0}    predicted {0,2}   label 2 wrongly added
//   truth {1,2}  predicted {1,2}   exact
// label 0: tp 2 fp 0 fn 0; label 1: tp 1 fp 0 fn 1; label 2: tp 2 fp 1 fn 0.
MultiLabelCounts example() {
  MultiLabelCounts m(4);
  const std::vector<std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> records = {
      {{1, 1, 0, 0}, {1, 0, 0, 0}},
      {{0, 0, 1, 0}, {0, 0, 1, 0}},
      {{1, 0, 0, 0}, {1, 0, 1, 0}},
      {{0, 1, 1, 0}, {0, 1, 1, 0}}};
  for (const auto& [truth, predicted] : records) m.add(truth.data(), predicted.data());
  return m;
}

TEST(MultiLabelCounts, PerLabelPrecisionRecallF1) {
  const MultiLabelCounts m = example();
  EXPECT_EQ(m.examples(), 4);
  EXPECT_DOUBLE_EQ(m.precision(0), 1.0);
  EXPECT_DOUBLE_EQ(m.recall(0), 1.0);
  EXPECT_DOUBLE_EQ(m.precision(1), 1.0);
  EXPECT_DOUBLE_EQ(m.recall(1), 0.5);
  EXPECT_DOUBLE_EQ(m.f1(1), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.precision(2), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.recall(2), 1.0);
  EXPECT_DOUBLE_EQ(m.f1(2), 0.8);
  EXPECT_EQ(m.support(1), 2);
  EXPECT_DOUBLE_EQ(m.f1(3), 0.0);  // never seen: no division by zero
}

TEST(MultiLabelCounts, MicroMacroSubsetHamming) {
  const MultiLabelCounts m = example();
  // Summed: tp 5, fp 1, fn 1.
  EXPECT_DOUBLE_EQ(m.micro_precision(), 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.micro_recall(), 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.micro_f1(), 5.0 / 6.0);
  // Label 3 is in neither truth nor predictions, so the mean is over 3 labels.
  EXPECT_DOUBLE_EQ(m.macro_f1(), (1.0 + 2.0 / 3.0 + 0.8) / 3.0);
  EXPECT_DOUBLE_EQ(m.subset_accuracy(), 0.5);
  EXPECT_DOUBLE_EQ(m.hamming_loss(), 2.0 / 16.0);  // 2 wrong decisions of 4 x 4
}

TEST(MultiLabelCounts, EmptyAndJsonReport) {
  const MultiLabelCounts empty(3);
  EXPECT_DOUBLE_EQ(empty.micro_f1(), 0.0);
  EXPECT_DOUBLE_EQ(empty.hamming_loss(), 0.0);
  const auto j = example().to_json({"a", "b", "c", "d"});
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["micro_f1"].get<double>(), 5.0 / 6.0);
  EXPECT_EQ(j["per_class"].size(), 4u);
  EXPECT_EQ(j["per_class"][2]["label"], "c");
  EXPECT_DOUBLE_EQ(j["per_class"][2]["precision"].get<double>(), 2.0 / 3.0);
  const std::string text = example().to_text({"a", "b", "c", "d"});
  EXPECT_NE(text.find("micro-F1 0.8333"), std::string::npos) << text;
  EXPECT_NE(text.find("Hamming loss 0.1250"), std::string::npos) << text;
}

}  // namespace multilabel_metrics_test
}  // namespace sift
