#include "framework/train/base/row_journal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace sift {
namespace {

// A 5 x 2 table whose value at (row, column) is 10 * row + column.
std::vector<float> numbered_table() {
  std::vector<float> t(10);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 2; ++c) t[static_cast<size_t>(r * 2 + c)] = static_cast<float>(10 * r + c);
  }
  return t;
}

TEST(RowJournal, SwapsInTheRowsAsTheyStoodAtItsStartAndBackAgain) {
  std::vector<float> table = numbered_table();
  RowJournal journal(5, 2);
  EXPECT_FALSE(journal.active());
  journal.start();
  const std::vector<int64_t> ids{3, 1, 3};
  journal.keep(table.data(), ids.data(), 3);
  for (float& v : table) v += 100;  // a step changes every row; only rows 1 and 3 were kept
  const std::vector<float> trained = table;
  journal.swap(table.data());
  std::vector<float> expected = trained;
  for (int r : {1, 3}) {
    expected[static_cast<size_t>(r * 2)] = static_cast<float>(10 * r);
    expected[static_cast<size_t>(r * 2 + 1)] = static_cast<float>(10 * r + 1);
  }
  EXPECT_EQ(table, expected);
  journal.swap(table.data());
  EXPECT_EQ(table, trained);
  EXPECT_EQ(journal.bytes(), static_cast<int64_t>(2 * 2 * sizeof(float) + 2 * sizeof(int64_t)));
}

TEST(RowJournal, KeepsARowOnlyAtItsFirstChangeUntilItStartsOver) {
  std::vector<float> table = numbered_table();
  RowJournal journal(5, 2);
  journal.start();
  const int64_t row = 2;
  journal.keep(table.data(), &row, 1);
  table[4] = -1;  // the first change
  journal.keep(table.data(), &row, 1);
  table[4] = -2;  // the second: the journal still holds the value before the first
  journal.swap(table.data());
  EXPECT_EQ(table[4], 20.0f);
  journal.swap(table.data());
  journal.start();  // from here the table as it is now (-2) is what it keeps
  journal.keep(table.data(), &row, 1);
  table[4] = -3;
  journal.swap(table.data());
  EXPECT_EQ(table[4], -2.0f);
}

TEST(RowJournal, LeavesIdsOutsideTheTableToTheStepsCheck) {
  std::vector<float> table = numbered_table();
  RowJournal journal(5, 2);
  journal.start();
  const std::vector<int64_t> ids{-1, 5, 64};
  journal.keep(table.data(), ids.data(), 3);
  EXPECT_EQ(journal.bytes(), 0);
  journal.clear();
  EXPECT_FALSE(journal.active());
}

}  // namespace
}  // namespace sift
