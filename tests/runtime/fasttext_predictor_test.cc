// FloatTable, the table sift-lite predicts from: a table kept as its uniform fill and the
// rows that changed gives every row as the whole table does (rows at the edges of the
// rank words, rows wider than a stack buffer, the first and last row); RankedRows, the
// constant-time lookup of changed rows and kept ids.
#include "framework/runtime/base/fasttext_predictor.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace sift {
namespace fasttext_predictor_test {

// The whole table: the fill, then `changed` rows overwritten with 100 + row + d / 1000.
std::vector<float> whole(const UniformFill& fill, int64_t rows, int64_t width,
                         const std::vector<int64_t>& changed) {
  std::vector<float> values(static_cast<size_t>(rows * width));
  fill.values(0, values.data(), values.size());
  for (int64_t r : changed) {
    for (int64_t d = 0; d < width; ++d) {
      values[static_cast<size_t>(r * width + d)] = 100.0f + static_cast<float>(r) + d / 1000.0f;
    }
  }
  return values;
}

ChangedRows changed_rows(const std::vector<float>& values, int64_t width, const UniformFill& fill,
                         const std::vector<int64_t>& changed) {
  ChangedRows c;
  c.fill = fill;
  c.indices = changed;
  for (int64_t r : changed) {
    c.values.insert(c.values.end(), values.begin() + r * width, values.begin() + (r + 1) * width);
  }
  return c;
}

TEST(FloatTable, AFilledTableGivesEveryRowAsTheWholeTableDoes) {
  const UniformFill fill{12345, -0.1, 0.1};
  for (const int64_t width : {int64_t{10}, int64_t{100}}) {
    const int64_t rows = 300;
    const std::vector<int64_t> changed = {0, 1, 62, 63, 64, 127, 128, 200, 299};
    const std::vector<float> values = whole(fill, rows, width, changed);
    const FloatTable dense = FloatTable::dense(rows, width, values);
    const FloatTable filled =
        FloatTable::filled(rows, width, changed_rows(values, width, fill, changed));
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> a(static_cast<size_t>(width), 1.0f), b(a);
      dense.add_row(r, a.data());
      filled.add_row(r, b.data());
      ASSERT_EQ(a, b) << "row " << r << ", width " << width;
    }
  }
}

TEST(RankedRows, MembersGetTheirPlaceAndOthersMinusOne) {
  const std::vector<int64_t> kept = {0, 5, 63, 64, 65, 127, 128, 1000};
  const RankedRows ranked(1001, kept);
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(ranked.position(kept[i]), int64_t(i));
  for (const int64_t r : {int64_t{1}, int64_t{62}, int64_t{66}, int64_t{129}, int64_t{999}}) {
    EXPECT_EQ(ranked.position(r), -1) << r;
  }
  EXPECT_EQ(ranked.position(-1), -1);
  EXPECT_EQ(ranked.position(5000), -1);  // past the rows: an id no kept row has
}

TEST(FloatTable, NonFiniteStoredValuesAreFound) {
  const UniformFill fill{7, -0.5, 0.5};
  std::vector<float> values = whole(fill, 4, 3, {2});
  EXPECT_TRUE(FloatTable::dense(4, 3, values).all_finite());
  values[7] = std::numeric_limits<float>::quiet_NaN();  // row 2, a changed row
  EXPECT_FALSE(FloatTable::dense(4, 3, values).all_finite());
  EXPECT_FALSE(FloatTable::filled(4, 3, changed_rows(values, 3, fill, {2})).all_finite());
}

}  // namespace fasttext_predictor_test
}  // namespace sift
