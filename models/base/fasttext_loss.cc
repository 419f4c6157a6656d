#include "models/base/fasttext_loss.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace sift {
namespace {

// Every output row's score over `hidden`, in a buffer of the calling thread (evaluation
// scores one example after another).
const std::vector<float>& all_scores(const OutputLayer& out, const float* hidden) {
  thread_local std::vector<float> scores;
  scores.resize(static_cast<size_t>(out.rows));
  for (int64_t r = 0; r < out.rows; ++r) scores[r] = out.score(hidden, r);
  return scores;
}

int64_t argmax(const std::vector<float>& scores) {
  return std::max_element(scores.begin(), scores.end()) - scores.begin();
}

// Softmax and cross-entropy in double (F::cross_entropy, summed).
Scored softmax_scored(const std::vector<float>& scores, int64_t label) {
  const int64_t best = argmax(scores);
  const double top = scores[best];
  double total = 0.0;
  for (const float z : scores) total += std::exp(double(z) - top);
  return {best, 1.0 / total, std::log(total) + top - double(scores[label])};
}

// Each label's probability, the sigmoid of its score in float.
LabelProbabilities sigmoid_top_k(const OutputLayer& out, const float* hidden, int64_t k,
                                 double threshold) {
  std::vector<float> p = all_scores(out, hidden);
  for (float& v : p) v = 1.0f / (1.0f + std::exp(-v));
  return best_labels(p, k, threshold);
}

// softmax and ova read every label's row, `label` the positive one.
class EveryLabelLoss : public FastTextLoss {
 public:
  explicit EveryLabelLoss(int64_t labels) : labels_(labels) {}
  void targets(int64_t label, uint64_t, int64_t, std::vector<int64_t>& rows,
               std::vector<uint8_t>& positive) const override {
    rows.clear();
    positive.clear();
    for (int64_t c = 0; c < labels_; ++c) {
      rows.push_back(c);
      positive.push_back(c == label);
    }
  }

 private:
  int64_t labels_;
};

class SoftmaxLoss : public EveryLabelLoss {
 public:
  using EveryLabelLoss::EveryLabelLoss;
  Scored score(const OutputLayer& out, const float* hidden, int64_t label) const override {
    return softmax_scored(all_scores(out, hidden), label);
  }
  LabelProbabilities top_k(const OutputLayer& out, const float* hidden, int64_t k,
                           double threshold) const override {
    std::vector<float> p = all_scores(out, hidden);
    softmax_in_place(p);
    return best_labels(p, k, threshold);
  }
};

// ns: the label and `negatives` drawn labels in training; evaluated as the LibTorch model
// evaluates it (softmax's cross-entropy over every score), predicted by each label's sigmoid.
class NsLoss : public SoftmaxLoss {
 public:
  NsLoss(int64_t labels, const NegativeSampler* sampler, int64_t negatives)
      : SoftmaxLoss(labels),
        sampler_(sampler ? std::make_unique<NegativeSampler>(*sampler) : nullptr),
        negatives_(negatives) {}
  LabelProbabilities top_k(const OutputLayer& out, const float* hidden, int64_t k,
                           double threshold) const override {
    return sigmoid_top_k(out, hidden, k, threshold);
  }
  void targets(int64_t label, uint64_t seed, int64_t index, std::vector<int64_t>& rows,
               std::vector<uint8_t>& positive) const override {
    if (!sampler_) throw Error("train.loss ns: the negatives' sampler is missing");
    rows.assign(1, label);
    positive.assign(1, 1);
    for (const int64_t r : sampler_->draw(label, negatives_, seed, index)) {
      rows.push_back(r);
      positive.push_back(0);
    }
  }

 private:
  std::unique_ptr<NegativeSampler> sampler_;  // null where only evaluated or predicted
  int64_t negatives_;
};

// ova: a binary logistic loss per label against one-hot targets.
class OvaLoss : public EveryLabelLoss {
 public:
  using EveryLabelLoss::EveryLabelLoss;
  // The sigmoid of the best score, and every label's binary loss (softplus summed, less
  // the label's own score, as loss.cc computes it).
  Scored score(const OutputLayer& out, const float* hidden, int64_t label) const override {
    const std::vector<float>& scores = all_scores(out, hidden);
    const int64_t best = argmax(scores);
    double softplus = 0.0;
    for (const float z : scores) softplus -= log_sigmoid(-double(z));
    return {best, 1.0 / (1.0 + std::exp(-double(scores[best]))), softplus - double(scores[label])};
  }
  LabelProbabilities top_k(const OutputLayer& out, const float* hidden, int64_t k,
                           double threshold) const override {
    return sigmoid_top_k(out, hidden, k, threshold);
  }
};

// hs: binary logistic losses along the label's path in the Huffman tree of the label
// counts; fastText's depth-first search for the most probable labels.
class HsLoss : public FastTextLoss {
 public:
  explicit HsLoss(const LabelTree& tree) : tree_(tree) {}
  Scored score(const OutputLayer& out, const float* hidden, int64_t label) const override {
    auto node = [&](int64_t row) { return double(out.score(hidden, row)); };
    const auto best = tree_top_k(tree_, node, 1, 0.0);
    Scored s;
    if (!best.empty()) s = {best[0].second, std::exp(best[0].first), 0.0};
    const auto& path = tree_.paths[static_cast<size_t>(label)];
    const auto& code = tree_.codes[static_cast<size_t>(label)];
    for (size_t j = 0; j < path.size(); ++j) {
      s.loss -= log_sigmoid(code[j] ? node(path[j]) : -node(path[j]));
    }
    return s;
  }
  LabelProbabilities top_k(const OutputLayer& out, const float* hidden, int64_t k,
                           double threshold) const override {
    auto node = [&](int64_t row) { return static_cast<double>(out.score(hidden, row)); };
    LabelProbabilities best;
    for (const auto& [log_p, label] : tree_top_k(tree_, node, k, threshold)) {
      best.emplace_back(label, static_cast<float>(std::exp(log_p)));
    }
    return best;
  }
  void targets(int64_t label, uint64_t, int64_t, std::vector<int64_t>& rows,
               std::vector<uint8_t>& positive) const override {
    rows = tree_.paths[static_cast<size_t>(label)];
    positive.assign(tree_.codes[label].begin(), tree_.codes[label].end());
  }

 private:
  LabelTree tree_;
};

}  // namespace

void softmax_in_place(std::vector<float>& scores) {
  if (scores.empty()) return;
  const float top = *std::max_element(scores.begin(), scores.end());
  float sum = 0.0f;
  for (float& v : scores) sum += (v = std::exp(v - top));
  for (float& v : scores) v /= sum;
}

std::unique_ptr<FastTextLoss> fasttext_loss(const LossShape& shape) {
  switch (shape.loss) {
    case Loss::hs:
      return std::make_unique<HsLoss>(*shape.tree);
    case Loss::ns:
      return std::make_unique<NsLoss>(shape.labels, shape.sampler, shape.negatives);
    case Loss::ova:
      return std::make_unique<OvaLoss>(shape.labels);
    case Loss::softmax:
      break;
  }
  return std::make_unique<SoftmaxLoss>(shape.labels);
}

LabelProbabilities best_labels(const std::vector<float>& probabilities, int64_t k,
                               double threshold) {
  LabelProbabilities best;
  for (size_t i = 0; i < probabilities.size(); ++i) {
    best.emplace_back(static_cast<int64_t>(i), probabilities[i]);
  }
  const auto n = static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(best.size())));
  std::partial_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(n), best.end(),
                    [](const auto& a, const auto& b) {
                      return a.second > b.second || (a.second == b.second && a.first < b.first);
                    });
  best.resize(n);
  while (!best.empty() && best.back().second < threshold) best.pop_back();
  return best;
}

}  // namespace sift
