#include "framework/runtime/base/confused_examples.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sift {
namespace confused_examples_test {

const std::string kEllipsis = "\xE2\x80\xA6";

// Adds one misclassification to the matrix and to the examples, as evaluate() does.
void miss(ConfusedExamples& e, ConfusionMatrix& m, int64_t truth, int64_t predicted,
          const std::string& text) {
  m.add(truth, predicted);
  e.add(truth, predicted, text, m);
}

TEST(ConfusedExamples, KeepsTheFirstFewTextsOfEachPairAndNoneOfCorrectPredictions) {
  ConfusionMatrix m(3);
  ConfusedExamples e(2);
  for (const char* text : {"a", "b", "c"}) miss(e, m, 0, 1, text);
  miss(e, m, 2, 0, "d");
  m.add(1, 1);
  e.add(1, 1, "right", m);
  EXPECT_EQ(e.texts(0, 1), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(e.texts(2, 0), (std::vector<std::string>{"d"}));
  EXPECT_TRUE(e.texts(1, 1).empty());
  EXPECT_EQ(e.pairs_held(), 2u);
}

TEST(ConfusedExamples, ASnippetIsCutOnACharacterBoundaryAndEndsInAnEllipsis) {
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xC3\xA9";  // é, two bytes each
  const std::string cut = text_snippet(accents, 200);
  EXPECT_EQ(cut, accents.substr(0, 400) + kEllipsis);
  EXPECT_EQ(text_snippet(accents.substr(0, 400), 200), accents.substr(0, 400));  // fits: whole
}

TEST(ConfusedExamples, ControlBytesBecomeSpacesAndBytesThatAreNotUtf8TheReplacementCharacter) {
  EXPECT_EQ(text_snippet("a\tb\nc\x7f"
                         "d",
                         200),
            "a b c d");
  EXPECT_EQ(text_snippet("x\xFFy", 200), "x\xEF\xBF\xBDy");
  EXPECT_EQ(text_snippet("\xC3", 200), "\xEF\xBF\xBD");  // a sequence cut short
}

TEST(ConfusedExamples, WhenEverySlotIsTakenALargerPairReplacesTheSmallestHeld) {
  ConfusionMatrix m(4);
  ConfusedExamples e(3, 2);
  miss(e, m, 0, 1, "a1");
  miss(e, m, 0, 1, "a2");
  miss(e, m, 0, 2, "b1");
  miss(e, m, 0, 3, "c1");  // one mistake, as (0, 2): no room
  EXPECT_TRUE(e.texts(0, 3).empty());
  miss(e, m, 0, 3, "c2");  // two now: more than (0, 2), which leaves
  EXPECT_EQ(e.texts(0, 3), (std::vector<std::string>{"c2"}));
  EXPECT_TRUE(e.texts(0, 2).empty());
  EXPECT_EQ(e.texts(0, 1), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(e.pairs_held(), 2u);
}

TEST(ConfusedExamples, MergingAnotherRanksTextsKeepsThisRanksFirstAndTheLimit) {
  ConfusionMatrix m(2);
  ConfusedExamples mine(2), theirs(2);
  miss(mine, m, 0, 1, "mine");
  miss(theirs, m, 0, 1, "theirs 1");
  miss(theirs, m, 0, 1, "theirs 2");
  miss(theirs, m, 1, 0, "theirs 3");
  const std::string long_text = text_snippet(std::string(300, 'x'), 200);
  miss(theirs, m, 1, 0, long_text);
  ConfusedExamples all(2);
  all.merge(mine.held(), m);
  all.merge(theirs.held(), m);
  EXPECT_EQ(all.texts(0, 1), (std::vector<std::string>{"mine", "theirs 1"}));
  // Already a snippet: not cut a second time.
  EXPECT_EQ(all.texts(1, 0), (std::vector<std::string>{"theirs 3", long_text}));
}

TEST(ConfusedExamples, MostConfusedListsTheLargestMistakesFirstWithTheirShareAndTexts) {
  ConfusionMatrix m(3);
  ConfusedExamples e;
  for (int i = 0; i < 6; ++i) m.add(0, 0);
  miss(e, m, 0, 2, "zero as two");
  miss(e, m, 0, 2, "zero as two again");
  miss(e, m, 1, 0, "one as zero");
  miss(e, m, 2, 1, "two as one");
  const auto top = e.most_confused(m, {"a", "b", "c"}, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0]["true"], "a");
  EXPECT_EQ(top[0]["predicted"], "c");
  EXPECT_EQ(top[0]["count"], 2);
  EXPECT_DOUBLE_EQ(top[0]["share_of_true"].get<double>(), 2.0 / 8.0);
  EXPECT_EQ(top[0]["texts"], nlohmann::json({"zero as two", "zero as two again"}));
  // A tie between (1, 0) and (2, 1): row-major order.
  EXPECT_EQ(top[1]["true"], "b");
  EXPECT_EQ(top[1]["predicted"], "a");
}

}  // namespace confused_examples_test
}  // namespace sift
