#include "framework/runtime/base/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sift {
namespace metrics_test {

// 3 classes; truth x prediction:
//          pred 0  pred 1  pred 2
// true 0      3       1       0
// true 1      1       2       0
// true 2      1       1       0      (class 2 is never predicted)
ConfusionMatrix example(int64_t classes = 3) {
  ConfusionMatrix m(classes);
  const std::vector<std::pair<int64_t, int64_t>> pairs = {{0, 0}, {0, 0}, {0, 0}, {0, 1}, {1, 1},
                                                          {1, 1}, {1, 0}, {2, 0}, {2, 1}};
  for (const auto& [truth, predicted] : pairs) m.add(truth, predicted);
  return m;
}

TEST(ConfusionMatrix, CountsCells) {
  const ConfusionMatrix m = example();
  EXPECT_EQ(m.total(), 9);
  EXPECT_EQ(m.classes(), 3);
  EXPECT_EQ(m.count(0, 0), 3);
  EXPECT_EQ(m.count(0, 1), 1);
  EXPECT_EQ(m.count(1, 0), 1);
  EXPECT_EQ(m.count(2, 1), 1);
  EXPECT_EQ(m.count(2, 2), 0);
}

TEST(ConfusionMatrix, Accuracy) { EXPECT_DOUBLE_EQ(example().accuracy(), 5.0 / 9.0); }

TEST(ConfusionMatrix, PerClassPrecisionRecallF1) {
  const ConfusionMatrix m = example();
  // Class 0: 5 predicted, 3 right; 4 true.
  EXPECT_DOUBLE_EQ(m.precision(0), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(m.recall(0), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(m.f1(0), 2.0 / 3.0);
  // Class 1: 4 predicted, 2 right; 3 true.
  EXPECT_DOUBLE_EQ(m.precision(1), 2.0 / 4.0);
  EXPECT_DOUBLE_EQ(m.recall(1), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.f1(1), 4.0 / 7.0);
  // Class 2: never predicted: precision 0 (not NaN), recall 0, F1 0.
  EXPECT_DOUBLE_EQ(m.precision(2), 0.0);
  EXPECT_DOUBLE_EQ(m.recall(2), 0.0);
  EXPECT_DOUBLE_EQ(m.f1(2), 0.0);
}

TEST(ConfusionMatrix, MacroF1CountsANeverPredictedClassAsZero) {
  EXPECT_DOUBLE_EQ(example().macro_f1(), (2.0 / 3.0 + 4.0 / 7.0 + 0.0) / 3.0);  // 26/63
}

TEST(ConfusionMatrix, MacroF1SkipsClassesAbsentFromTruthAndPredictions) {
  // A 4th class that neither occurs nor is predicted does not dilute the mean.
  const ConfusionMatrix m = example(4);
  EXPECT_DOUBLE_EQ(m.macro_f1(), 26.0 / 63.0);
  EXPECT_DOUBLE_EQ(m.accuracy(), 5.0 / 9.0);
}

TEST(ConfusionMatrix, PerfectAndEmpty) {
  ConfusionMatrix perfect(2);
  perfect.add(0, 0);
  perfect.add(1, 1);
  perfect.add(1, 1);
  EXPECT_DOUBLE_EQ(perfect.accuracy(), 1.0);
  EXPECT_DOUBLE_EQ(perfect.macro_f1(), 1.0);
  const ConfusionMatrix empty(3);
  EXPECT_EQ(empty.total(), 0);
  EXPECT_DOUBLE_EQ(empty.accuracy(), 0.0);
  EXPECT_DOUBLE_EQ(empty.macro_f1(), 0.0);
}

TEST(ConfusionMatrix, Json) {
  const nlohmann::json j = example().to_json({"a", "b", "c"});
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), 5.0 / 9.0);
  EXPECT_DOUBLE_EQ(j["macro_f1"].get<double>(), 26.0 / 63.0);
  EXPECT_EQ(j["examples"].get<int64_t>(), 9);
  ASSERT_EQ(j["per_class"].size(), 3u);
  EXPECT_EQ(j["per_class"][1]["label"], "b");
  EXPECT_DOUBLE_EQ(j["per_class"][1]["precision"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["per_class"][0]["recall"].get<double>(), 0.75);
  EXPECT_EQ(j["per_class"][2]["support"].get<int64_t>(), 2);
  EXPECT_EQ(j["confusion"], nlohmann::json::parse("[[3,1,0],[1,2,0],[1,1,0]]"));
}

TEST(ConfusionMatrix, JsonOfManyLabelsListsOnlyTheNonzeroCells) {
  const int64_t n = ConfusionMatrix::kDenseJsonLabels + 1;
  ConfusionMatrix m(n);
  std::vector<std::string> names;
  for (int64_t i = 0; i < n; ++i) names.push_back("l" + std::to_string(i));
  m.add(5, 5);
  m.add(5, 5);
  m.add(7, 100);
  m.add(100, 7);
  const nlohmann::json j = m.to_json(names);
  EXPECT_FALSE(j.contains("confusion"));
  EXPECT_EQ(j["confusion_cells"], nlohmann::json::parse("[[5,5,2],[7,100,1],[100,7,1]]"));
  EXPECT_EQ(j["examples"].get<int64_t>(), 4);
  const std::string t = m.to_text(names);
  EXPECT_EQ(t.find("confusion matrix"), std::string::npos) << "no 101 x 101 table";
  EXPECT_NE(t.find("101 labels: the 20 largest mistakes"), std::string::npos) << t;
  EXPECT_NE(t.find("  l7 -> l100: 1\n"), std::string::npos) << t;
  EXPECT_EQ(example().to_json({"a", "b", "c"}).count("confusion_cells"), 0u) << "3 labels: dense";
}

TEST(ConfusionMatrix, KeepsOnlyNonzeroCellsAndRanksAddTheirTriplesUp) {
  ConfusionMatrix a(10000);  // 100M cells if dense
  a.add(9999, 0);
  a.add(7, 7, 2);
  EXPECT_EQ(a.cells(), (std::vector<int64_t>{7, 7, 2, 9999, 0, 1}));
  EXPECT_EQ(a.row_sum(9999), 1);
  EXPECT_DOUBLE_EQ(a.precision(0), 0.0);
  EXPECT_DOUBLE_EQ(a.recall(7), 1.0);
  std::vector<int64_t> both = a.cells();
  both.insert(both.end(), {9999, 0, 4, 3, 5, 1});
  const ConfusionMatrix sum = ConfusionMatrix::from_cells(10000, both);
  EXPECT_EQ(sum.count(9999, 0), 5);
  EXPECT_EQ(sum.count(3, 5), 1);
  EXPECT_EQ(sum.total(), 8);
  EXPECT_DOUBLE_EQ(sum.accuracy(), 2.0 / 8.0);
  EXPECT_THROW(ConfusionMatrix::from_cells(3, {0, 3, 1}), std::invalid_argument);
  EXPECT_THROW(ConfusionMatrix::from_cells(3, {0, 1}), std::invalid_argument);
}

TEST(ConfusionMatrix, TextNamesLabelsAndTotals) {
  const std::string t = example().to_text({"ham", "spam", "eggs"});
  EXPECT_NE(t.find("ham"), std::string::npos);
  EXPECT_NE(t.find("eggs"), std::string::npos);
  EXPECT_NE(t.find("accuracy 0.5556"), std::string::npos) << t;
  EXPECT_NE(t.find("examples 9"), std::string::npos) << t;
}

TEST(ConfusionMatrix, MarkdownIsOneRowPerTrueLabelWithABarInALabelEscaped) {
  EXPECT_EQ(example().to_markdown({"x", "y|z", "w"}),
            "| true / predicted | x | y\\|z | w |\n"
            "|---|---|---|---|\n"
            "| x | 3 | 1 | 0 |\n"
            "| y\\|z | 1 | 2 | 0 |\n"
            "| w | 1 | 1 | 0 |\n");
}

TEST(ConfusionMatrix, MarkdownOfManyLabelsListsTheLargestMistakesInstead) {
  const std::string md = example().to_markdown({"x", "y", "w"}, 2);
  EXPECT_EQ(md.substr(0, md.find('\n')), "3 labels: the 20 largest mistakes");
  EXPECT_NE(md.find("| x | y | 1 |\n| y | x | 1 |\n| w | x | 1 |\n| w | y | 1 |\n"),
            std::string::npos)
      << md;
}

TEST(ConfusionMatrix, MostConfusedCellsAreOffDiagonalLargestFirst) {
  ConfusionMatrix m = example();
  m.add(2, 1);
  EXPECT_EQ(m.most_confused(2), (std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {0, 1}}));
  EXPECT_EQ(m.most_confused(10).size(), 4u);
}

}  // namespace metrics_test
}  // namespace sift
