// A batch as plain vectors, free of any tensor type: the trainer turns it into tensors
// on the device it uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sift {

struct RawBatch {
  std::vector<int64_t> ids;      // all examples' ids, concatenated
  std::vector<int64_t> offsets;  // where each example's ids start in `ids`
  std::vector<int64_t> labels;   // one label id per example (multi-label: the first)
  // Multi-label batches only (empty otherwise, so single-label batches cost nothing more):
  // every example's label ids concatenated, and where each example's list starts.
  std::vector<int64_t> label_lists;
  std::vector<int64_t> label_starts;
  // Distillation only (empty otherwise): the same examples as the teacher's own encoder
  // reads them, concatenated, and where each starts (train.distill.teacher).
  std::vector<int64_t> teacher_ids;
  std::vector<int64_t> teacher_offsets;
  // StreamOptions::keep_text only (empty otherwise): each example's text as read, for the
  // final validation's confused examples (a few of them are kept, the rest dropped).
  std::vector<std::string> texts;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }

  // Where example i's ids, and (multi-label) its label list, end: the next example's
  // start, or the end of the concatenation.
  int64_t ids_end(int64_t i) const { return row_end(offsets, ids, i); }
  int64_t label_list_end(int64_t i) const { return row_end(label_starts, label_lists, i); }

  // Appends an example: its ids and its (first) label.
  void add(const std::vector<int64_t>& example_ids, int64_t label) {
    offsets.push_back(static_cast<int64_t>(ids.size()));
    ids.insert(ids.end(), example_ids.begin(), example_ids.end());
    labels.push_back(label);
  }
  // Multi-label: appends the last added example's label list (its first label, then more).
  void add_label_list(int64_t first, const std::vector<int64_t>& more) {
    label_starts.push_back(static_cast<int64_t>(label_lists.size()));
    label_lists.push_back(first);
    label_lists.insert(label_lists.end(), more.begin(), more.end());
  }

  // Distillation: appends the last added example's ids in the teacher's encoding.
  void add_teacher_ids(const std::vector<int64_t>& example_ids) {
    teacher_offsets.push_back(static_cast<int64_t>(teacher_ids.size()));
    teacher_ids.insert(teacher_ids.end(), example_ids.begin(), example_ids.end());
  }

  void clear() {
    ids.clear();
    teacher_ids.clear();
    teacher_offsets.clear();
    texts.clear();
    offsets.clear();
    labels.clear();
    label_lists.clear();
    label_starts.clear();
  }

 private:
  static int64_t row_end(const std::vector<int64_t>& starts, const std::vector<int64_t>& all,
                         int64_t i) {
    return i + 1 < static_cast<int64_t>(starts.size()) ? starts[static_cast<std::size_t>(i) + 1]
                                                       : static_cast<int64_t>(all.size());
  }
};

}  // namespace sift
