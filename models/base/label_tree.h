// train.loss hs: fastText's Huffman tree over the training label counts
// (HierarchicalSoftmaxLoss::buildTree in fastText's loss.cc), and its top-k search.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "config/enums.h"

namespace sift {

// The rows of the fastText model's output layer for `labels` labels: one per label, or
// with train.loss hs one per internal node of the tree (labels - 1), which needs at least
// two labels (an error says so otherwise).
int64_t fasttext_output_rows(Loss loss, int64_t labels);

// The tree's (and the negative sampler's) counts: the training counts of labels 0 ..
// labels - 1, zero for those past `counts`.
std::vector<int64_t> label_counts_of(const std::vector<uint64_t>& counts, int64_t labels);

// A binary tree with one leaf per label and labels - 1 internal nodes. Node ids: leaf i is
// label i; internal node labels + r is row r of the output matrix (the root, last, is
// node 2 * labels - 2). A label's probability is the product over its path of
// sigmoid(score of the node) where its code is 1 (right child), 1 - sigmoid where 0.
struct LabelTree {
  int64_t labels = 0;
  std::vector<int64_t> parent, left, right;  // [2 * labels - 1]; -1: none
  std::vector<uint8_t> code;                 // a node's side under its parent: 1 right
  // Per label, from the leaf up: the output rows of the internal nodes and the codes.
  std::vector<std::vector<int64_t>> paths;
  std::vector<std::vector<uint8_t>> codes;
  int64_t depth() const;  // the longest path
};

// fastText's construction: leaves sorted by count, most frequent first (a stable sort, so
// labels already in fastText's order, as an import reads them, keep it and give fastText's
// own tree), then the two-queue Huffman merge, the less frequent node the left child.
// At least two labels.
LabelTree build_label_tree(const std::vector<int64_t>& counts);

// The k most probable labels and their log-probabilities, best first: fastText's
// depth-first search from the root with the running log-probability, cut where it falls
// below the k-th best found so far (or below log(min_probability)). `node_score(r)` gives
// the score of output row r. Ties keep the lower label first.
std::vector<std::pair<double, int64_t>> tree_top_k(const LabelTree& tree,
                                                   const std::function<double(int64_t)>& node_score,
                                                   int64_t k, double min_probability = 0.0);

// log(sigmoid(x)), without overflow for large |x|.
double log_sigmoid(double x);

}  // namespace sift
