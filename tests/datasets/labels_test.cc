#include "datasets/labels.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace labels_test {

using sift::testing::error_of;
using sift::testing::make_temp_dir;
using sift::testing::slurp;
using Names = std::vector<std::string>;

TEST(LabelSet, StreamSaveMatchesFileSave) {
  const LabelSet labels(Names{"sports", "world", "business"});
  std::ostringstream out;
  labels.save(out);
  EXPECT_EQ(out.str(), "sports\nworld\nbusiness\n");
  const std::string path = make_temp_dir("sift_labels") + "/labels.txt";
  labels.save(path);
  EXPECT_EQ(slurp(path), out.str());
  EXPECT_EQ(LabelSet::load(path).names(), labels.names());
}

TEST(LabelSet, StreamLoadSkipsBlankLinesAndTrailingSpace) {
  std::istringstream in("b\r\n\na \nc\n");
  EXPECT_EQ(LabelSet::load(in, "labels.txt").names(), (Names{"b", "a", "c"}));
}

TEST(LabelSet, StreamLoadErrorsNameTheEntry) {
  std::istringstream empty("\n\n");
  EXPECT_EQ(error_of([&] { LabelSet::load(empty, "model.pt:labels.txt"); }),
            "label file model.pt:labels.txt holds no label");
  std::istringstream twice("a\na\n");
  EXPECT_EQ(error_of([&] { LabelSet::load(twice, "labels.txt"); }), "label 'a' is listed twice");
}

}  // namespace labels_test
}  // namespace sift

namespace sift {
namespace labels_test {

TEST(CheckLabelCount, LabelWithAControlByteIsRefusedNamingTheLocation) {
  const auto where = [] { return std::string("train.jsonl:7"); };
  const std::string m = sift::testing::error_of(
      [&] { check_label_count({std::string("a\nb\0c", 5)}, false, where); });
  EXPECT_CONTAINS(m, "train.jsonl:7: the label 'a\\nb\\x00c' holds a control character");
  EXPECT_NO_THROW(check_label_count({"caf\xc3\xa9 ok"}, false, where));
}

}  // namespace labels_test
}  // namespace sift
