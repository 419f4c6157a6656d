#include "models/base/label_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "core/error.h"

namespace sift {

int64_t LabelTree::depth() const {
  size_t d = 0;
  for (const auto& p : paths) d = std::max(d, p.size());
  return static_cast<int64_t>(d);
}

namespace {

// The merge of buildTree over counts sorted most frequent first: leaves 0..n-1 (in that
// order) and internal nodes n..2n-2 in the order they are made.
void merge(const std::vector<int64_t>& sorted, LabelTree& t) {
  const int64_t n = t.labels;
  std::vector<double> count(static_cast<size_t>(2 * n - 1), 1e15);
  for (int64_t i = 0; i < n; ++i) count[i] = static_cast<double>(sorted[i]);
  int64_t leaf = n - 1, node = n;
  for (int64_t i = n; i < 2 * n - 1; ++i) {
    int64_t mini[2];
    for (int64_t& m : mini) m = (leaf >= 0 && count[leaf] < count[node]) ? leaf-- : node++;
    t.left[i] = mini[0];
    t.right[i] = mini[1];
    count[i] = count[mini[0]] + count[mini[1]];
    t.parent[mini[0]] = i;
    t.parent[mini[1]] = i;
    t.code[mini[1]] = 1;
  }
}

}  // namespace

int64_t fasttext_output_rows(Loss loss, int64_t labels) {
  if (loss != Loss::hs) return labels;
  if (labels < 2) {
    throw Error(fmt::format("train.loss: hs needs at least two labels (the data has {})", labels));
  }
  return labels - 1;
}

std::vector<int64_t> label_counts_of(const std::vector<uint64_t>& counts, int64_t labels) {
  std::vector<int64_t> out(static_cast<size_t>(labels), 0);
  for (size_t i = 0; i < counts.size() && i < out.size(); ++i) {
    out[i] = static_cast<int64_t>(counts[i]);
  }
  return out;
}

LabelTree build_label_tree(const std::vector<int64_t>& counts) {
  const int64_t n = static_cast<int64_t>(counts.size());
  if (n < 2) throw Error(fmt::format("train.loss hs: a tree needs at least two labels ({})", n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return counts[a] > counts[b]; });
  std::vector<int64_t> sorted;
  for (int64_t id : order) sorted.push_back(counts[id]);
  LabelTree t;
  t.labels = n;
  const size_t nodes = static_cast<size_t>(2 * n - 1);
  t.parent.assign(nodes, -1);
  t.left.assign(nodes, -1);
  t.right.assign(nodes, -1);
  t.code.assign(nodes, 0);
  merge(sorted, t);
  // Leaf i of the merge is label order[i]: renumber the leaves as label ids.
  LabelTree out = t;
  auto label_of = [&](int64_t node) { return node >= 0 && node < n ? order[node] : node; };
  for (int64_t i = 0; i < n; ++i) {
    out.parent[order[i]] = t.parent[i];
    out.code[order[i]] = t.code[i];
  }
  for (int64_t i = n; i < 2 * n - 1; ++i) {
    out.left[i] = label_of(t.left[i]);
    out.right[i] = label_of(t.right[i]);
  }
  out.paths.resize(static_cast<size_t>(n));
  out.codes.resize(static_cast<size_t>(n));
  for (int64_t label = 0; label < n; ++label) {
    for (int64_t j = label; out.parent[j] != -1; j = out.parent[j]) {
      out.paths[label].push_back(out.parent[j] - n);
      out.codes[label].push_back(out.code[j]);
    }
  }
  return out;
}

double log_sigmoid(double x) {
  return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}

namespace {

struct Search {
  const LabelTree& tree;
  const std::function<double(int64_t)>& node_score;
  size_t k;
  double floor;
  // A min-heap on (log-probability, then the higher label first out): its front is the
  // k-th best.
  std::vector<std::pair<double, int64_t>> heap;
  static bool better(const std::pair<double, int64_t>& a, const std::pair<double, int64_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  }

  void visit(int64_t node, double score) {
    if (score < floor) return;
    if (heap.size() == k && score < heap.front().first) return;
    if (node < tree.labels) {
      heap.emplace_back(score, node);
      std::push_heap(heap.begin(), heap.end(), better);
      if (heap.size() > k) {
        std::pop_heap(heap.begin(), heap.end(), better);
        heap.pop_back();
      }
      return;
    }
    const double f = node_score(node - tree.labels);
    visit(tree.left[node], score + log_sigmoid(-f));
    visit(tree.right[node], score + log_sigmoid(f));
  }
};

}  // namespace

std::vector<std::pair<double, int64_t>> tree_top_k(const LabelTree& tree,
                                                   const std::function<double(int64_t)>& node_score,
                                                   int64_t k, double min_probability) {
  Search s{tree,
           node_score,
           static_cast<size_t>(std::max<int64_t>(k, 0)),
           min_probability > 0 ? std::log(min_probability) : -INFINITY,
           {}};
  if (s.k > 0) s.visit(2 * tree.labels - 2, 0.0);
  std::sort_heap(s.heap.begin(), s.heap.end(), Search::better);
  return s.heap;
}

}  // namespace sift
