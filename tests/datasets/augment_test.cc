// Tang et al. 2019's transfer-set augmentation (datasets/augment.h): deterministic in its
// seed, and masking and n-gram sampling at their probabilities.
#include "datasets/augment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace sift {
namespace augment_test {

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

const std::string kText = "a b c d e f g h i j k l m n o p q r s t";  // 20 distinct words

TEST(Augment, TheSameSeedGivesTheSameTextAndOtherSeedsOthers) {
  const AugmentOptions o{0.3, 0.5};
  std::vector<std::string> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const std::string once = augment_text(kText, o, seed);
    EXPECT_EQ(once, augment_text(kText, o, seed));
    seen.push_back(once);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_GT(std::unique(seen.begin(), seen.end()) - seen.begin(), 40);
}

TEST(Augment, NoProbabilitiesKeepTheWordsAndAllMaskAll) {
  EXPECT_EQ(augment_text("  one\ttwo  three ", {0.0, 0.0}, 7), "one two three");
  EXPECT_EQ(augment_text("one two three", {1.0, 0.0}, 7), "<mask> <mask> <mask>");
  EXPECT_EQ(augment_text("", {0.5, 1.0}, 7), "");
}

TEST(Augment, AnNgramIsOneToFiveConsecutiveWordsOfTheText) {
  const auto all = words_of(kText);
  std::vector<int> lengths(6, 0);
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    const auto kept = words_of(augment_text(kText, {0.0, 1.0}, seed));
    ASSERT_GE(kept.size(), 1u);
    ASSERT_LE(kept.size(), 5u);
    ++lengths[kept.size()];
    const auto at = std::find(all.begin(), all.end(), kept[0]) - all.begin();
    for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i], all[at + i]);
  }
  for (int n = 1; n <= 5; ++n) EXPECT_NEAR(lengths[n] / 2000.0, 0.2, 0.04) << "n = " << n;
  // A text shorter than n keeps all of its words.
  EXPECT_EQ(words_of(augment_text("x y", {0.0, 1.0}, 3)).size() <= 2u, true);
}

TEST(Augment, MaskingAndSamplingHappenAtTheirProbabilities) {
  const int trials = 20000;
  int masked = 0, words = 0, sampled = 0;
  for (uint64_t seed = 0; seed < trials; ++seed) {
    const auto out = words_of(augment_text(kText, {0.1, 0.25}, augment_seed(1, 2, 3, 4, seed)));
    if (out.size() < 20) ++sampled;
    for (const auto& w : out) {
      ++words;
      masked += w == kMaskToken;
    }
  }
  EXPECT_NEAR(static_cast<double>(masked) / words, 0.1, 0.01);
  EXPECT_NEAR(static_cast<double>(sampled) / trials, 0.25, 0.015);
}

TEST(Augment, TheSeedDependsOnEveryPart) {
  const uint64_t base = augment_seed(1, 2, 3, 4, 5);
  EXPECT_NE(base, augment_seed(9, 2, 3, 4, 5));
  EXPECT_NE(base, augment_seed(1, 9, 3, 4, 5));
  EXPECT_NE(base, augment_seed(1, 2, 9, 4, 5));
  EXPECT_NE(base, augment_seed(1, 2, 3, 9, 5));
  EXPECT_NE(base, augment_seed(1, 2, 3, 4, 9));
  EXPECT_EQ(base, augment_seed(1, 2, 3, 4, 5));
}

}  // namespace augment_test
}  // namespace sift
