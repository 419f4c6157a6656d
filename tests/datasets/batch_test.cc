#include "datasets/batch.h"

#include <gtest/gtest.h>

#include <vector>

namespace sift {
namespace batch_test {

using Ids = std::vector<int64_t>;

TEST(RawBatch, AddConcatenatesExamplesAndRowsEndAtTheNextStart) {
  RawBatch batch;
  batch.add({5, 6, 7}, 1);
  batch.add({}, 0);
  batch.add({8}, 2);
  EXPECT_EQ(batch.ids, (Ids{5, 6, 7, 8}));
  EXPECT_EQ(batch.offsets, (Ids{0, 3, 3}));
  EXPECT_EQ(batch.labels, (Ids{1, 0, 2}));
  EXPECT_EQ(batch.ids_end(0), 3);
  EXPECT_EQ(batch.ids_end(1), 3);
  EXPECT_EQ(batch.ids_end(2), 4);
  EXPECT_TRUE(batch.label_lists.empty());
}

TEST(RawBatch, LabelListsOfMultiLabelExamples) {
  RawBatch batch;
  batch.add({1}, 0);
  batch.add_label_list(0, {2, 3});
  batch.add({2}, 1);
  batch.add_label_list(1, {});
  EXPECT_EQ(batch.label_lists, (Ids{0, 2, 3, 1}));
  EXPECT_EQ(batch.label_starts, (Ids{0, 3}));
  EXPECT_EQ(batch.label_list_end(0), 3);
  EXPECT_EQ(batch.label_list_end(1), 4);
  batch.clear();
  EXPECT_EQ(batch.size(), 0);
}

}  // namespace batch_test
}  // namespace sift
