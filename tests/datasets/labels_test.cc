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
  const LabelSet labels(Names{"sports", "world", "business"}, "data.labels");
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
  EXPECT_EQ(error_of([&] { LabelSet::load(twice, "labels.txt"); }),
            "labels.txt: the label 'a' is listed twice");
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

namespace sift {
namespace labels_test {

// Issue #42: `--set 'data.labels=["a\nb",ham,spam]'` trained and wrote 4 lines to labels.txt
// for 3 labels; every origin of a label set is checked the same way, naming it.
TEST(LabelSet, EveryOriginRefusesControlCharactersDuplicatesAndEmptyNamesNamingTheKey) {
  EXPECT_EQ(error_of([] {
              LabelSet::from_option({"a\nb", "ham", "spam"});
            }),
            "data.labels: the label 'a\\nb' holds a control character (newline, tab, NUL, ...); "
            "labels are stored one per line in labels.txt and must not");
  EXPECT_EQ(error_of([] {
              LabelSet::from_option({"ham", "spam", "ham"});
            }),
            "data.labels: the label 'ham' is listed twice");
  EXPECT_EQ(error_of([] { LabelSet::from_option({"ham", ""}); }), "data.labels: a label is empty");
  EXPECT_CONTAINS(error_of([] {
                    LabelSet::from_option({"ham ", "spam"});
                  }),
                  "data.labels: the label 'ham ' ends with a space");
  const std::string file = make_temp_dir("sift_labels") + "/labels.list";
  sift::testing::write_file(file, "ham\ta\nspam\n");
  EXPECT_CONTAINS(error_of([&] { LabelSet::from_option({file}); }),
                  "data.labels: " + file + ": the label 'ham\\ta'");
  EXPECT_CONTAINS(error_of([] {
                    LabelSet(Names{"x", "x"}, "model.bin");
                  }),
                  "model.bin: the label 'x' is listed twice");
}

}  // namespace labels_test
}  // namespace sift
