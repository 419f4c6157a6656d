// Cross-validation folds by record hash: each record is held out in exactly one fold,
// and train, valid and held-out parts of one fold never overlap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "datasets/example_stream.h"
#include "tests/test_files.h"

namespace sift {
namespace folds_test {

namespace fs = std::filesystem;

TEST(Folds, EveryRecordIsHeldOutOnceAndPartsAreDisjoint) {
  const std::string dir = sift::testing::make_temp_dir("sift_folds");
  const std::string path = dir + "/data.txt";
  constexpr int kRecords = 2000, kFolds = 10;
  {
    std::ofstream out(path);
    for (int i = 0; i < kRecords; ++i) out << "__label__" << i % 2 << " text " << i << "\n";
  }
  TextFormat format;
  std::map<std::string, int> held_out;  // times each text was held out
  for (int64_t k = 0; k < kFolds; ++k) {
    std::map<std::string, int> seen;  // parts a text fell in, for this fold
    int sizes[3] = {0, 0, 0};
    const HashPart parts[3] = {HashPart::train, HashPart::valid, HashPart::held_out};
    for (int p = 0; p < 3; ++p) {
      ExampleStream s({path}, format, {}, parts[p], 0.1, 7, Folds{kFolds, k});
      Example e;
      while (s.next(e)) {
        ++seen[e.text];
        ++sizes[p];
        if (parts[p] == HashPart::held_out) ++held_out[e.text];
      }
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(kRecords)) << "fold " << k;
    for (const auto& [text, n] : seen) ASSERT_EQ(n, 1) << text << " in fold " << k;
    // Shares near 10% held out, 9% valid (10% of the rest), 81% train.
    EXPECT_NEAR(sizes[2], kRecords / kFolds, 60) << "fold " << k;
    EXPECT_NEAR(sizes[1], kRecords * 0.09, 60) << "fold " << k;
    EXPECT_GT(sizes[1], 0);
  }
  EXPECT_EQ(held_out.size(), static_cast<size_t>(kRecords));
  for (const auto& [text, n] : held_out) ASSERT_EQ(n, 1) << text;
  fs::remove_all(dir);
}

TEST(Folds, FoldOfSpansTheHashRange) {
  EXPECT_EQ(fold_of(0, 10), 0);
  EXPECT_EQ(fold_of(~uint64_t{0}, 10), 9);
  EXPECT_EQ(fold_of(uint64_t{1} << 63, 2), 1);
  EXPECT_EQ(fold_of((uint64_t{1} << 63) - 1, 2), 0);
}

}  // namespace folds_test
}  // namespace sift
