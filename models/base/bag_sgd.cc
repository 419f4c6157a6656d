#include "models/base/bag_sgd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "models/base/fasttext_forward.h"
#include "models/base/fasttext_loss.h"

namespace sift {
namespace {

// What every loss's step shares: the bag's mean (hidden_), each example's gradient of its
// embedding rows (d_hidden_), and their update.
class BagSgd : public FusedSgd {
 public:
  explicit BagSgd(const BagTables& t)
      : embedding_(t.embedding),
        weight_(t.weight),
        bias_(t.bias),
        classes_(t.classes),
        dim_(t.dim),
        rows_(t.rows) {
    d_weight_.resize(static_cast<size_t>(classes_ * dim_));
    d_bias_.resize(static_cast<size_t>(classes_));
  }

 protected:
  // hidden_ = the mean of example i's embedding rows; returns their count (0: none).
  float mean_of(const RawBatch& batch, int64_t i) {
    const int64_t begin = batch.offsets[i], end = batch.ids_end(i);
    for (int64_t k = begin; k < end; ++k) {
      const int64_t id = batch.ids[k];
      if (id < 0 || id >= rows_) throw Error(fmt::format("fused SGD: id {} out of range", id));
    }
    hidden_.resize(static_cast<size_t>(dim_));
    bag_mean(embedding_, dim_, batch.ids.data() + begin, end - begin, hidden_.data());
    return static_cast<float>(end - begin);
  }

  // Output row r's share of an example's gradient, g = dloss/dscore: into the row's
  // gradient and the example's hidden gradient `d_hidden` (at the weights before the step).
  void add_row(int64_t r, float g, float* d_hidden) {
    d_bias_[r] += g;
    const float* w = weight_ + r * dim_;
    float* dw = &d_weight_[static_cast<size_t>(r * dim_)];
    for (int64_t d = 0; d < dim_; ++d) {
      dw[d] += g * hidden_[d];
      d_hidden[d] += g * w[d];
    }
  }

  // The bag's mean spreads the hidden gradient over its `count` rows.
  void spread(float* d_hidden, float count) const {
    if (count > 0) {
      for (int64_t d = 0; d < dim_; ++d) d_hidden[d] /= count;
    }
  }

  // Each embedding row of example i gets its d_hidden_ (already divided by the count).
  void apply_embedding(const RawBatch& batch, float step) {
    for (int64_t i = 0; i < batch.size(); ++i) {
      const float* g = &d_hidden_[static_cast<size_t>(i * dim_)];
      for (int64_t k = batch.offsets[i], end = batch.ids_end(i); k < end; ++k) {
        float* row = embedding_ + batch.ids[k] * dim_;
        for (int64_t d = 0; d < dim_; ++d) row[d] -= step * g[d];
      }
    }
  }

  float* embedding_;
  float* weight_;  // [classes, dim], row-major as torch::nn::Linear keeps it
  float* bias_;
  int64_t classes_ = 0, dim_ = 0, rows_ = 0;
  std::vector<float> hidden_, d_weight_, d_bias_;
  std::vector<float> d_hidden_;  // [batch, dim]: each example's per-row gradient
};

// train.loss softmax: mean of embedding rows, linear layer, softmax, cross-entropy.
class SoftmaxSgd : public BagSgd {
 public:
  explicit SoftmaxSgd(const BagTables& t) : BagSgd(t) {
    logits_.resize(static_cast<size_t>(classes_));
  }

  double gradient(const RawBatch& batch, double scale) override {
    const int64_t n = batch.size();
    d_hidden_.assign(static_cast<size_t>(n * dim_), 0.0f);
    std::fill(d_weight_.begin(), d_weight_.end(), 0.0f);
    std::fill(d_bias_.begin(), d_bias_.end(), 0.0f);
    double loss = 0.0;
    for (int64_t i = 0; i < n; ++i) loss += example(batch, i, static_cast<float>(scale));
    return loss;
  }

  void apply(const RawBatch& batch, double lr) override {
    const float step = static_cast<float>(lr);
    apply_embedding(batch, step);
    for (int64_t j = 0; j < classes_ * dim_; ++j) weight_[j] -= step * d_weight_[j];
    for (int64_t c = 0; c < classes_; ++c) bias_[c] -= step * d_bias_[c];
  }

 private:
  // Example i's loss; adds its gradient to the output layer's and keeps the one each of
  // its embedding rows gets (the hidden gradient / its number of ids: the bag's mean).
  double example(const RawBatch& batch, int64_t i, float scale) {
    const float count = mean_of(batch, i);
    float top = -INFINITY;
    for (int64_t c = 0; c < classes_; ++c) {
      logits_[c] = row_score(weight_, bias_, dim_, c, hidden_.data());
      top = std::max(top, logits_[c]);
    }
    double total = 0.0;
    for (int64_t c = 0; c < classes_; ++c) total += std::exp(double(logits_[c] - top));
    const int64_t label = batch.labels[i];
    const double loss = std::log(total) + top - logits_[label];
    float* d_hidden = &d_hidden_[static_cast<size_t>(i * dim_)];
    for (int64_t c = 0; c < classes_; ++c) {
      const double p = std::exp(double(logits_[c] - top)) / total;
      add_row(c, static_cast<float>(p - (c == label ? 1.0 : 0.0)) * scale, d_hidden);
    }
    spread(d_hidden, count);
    return loss;
  }

  std::vector<float> logits_;
};

// train.loss hs, ns, ova: a binary logistic loss on each of some output rows (hs: the
// label's path, ns: the label and its negatives, ova: every label), so a step reads and
// updates only those rows: O(depth) or O(neg + 1) instead of O(labels).
class LogisticSgd : public BagSgd {
 public:
  explicit LogisticSgd(const BagTables& t)
      : BagSgd(t),
        ns_(t.loss == Loss::ns),
        loss_(fasttext_loss({t.loss, t.classes, t.tree, t.sampler, t.negatives})),
        seed_(t.seed) {
    touched_flag_.assign(static_cast<size_t>(classes_), 0);
  }

  double gradient(const RawBatch& batch, double scale) override {
    const int64_t n = batch.size();
    d_hidden_.assign(static_cast<size_t>(n * dim_), 0.0f);
    for (const int64_t r : touched_) touched_flag_[r] = 0;
    touched_.clear();
    const uint64_t seed = ns_ ? seed_() : 0;
    double loss = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      loss_->targets(batch.labels[i], seed, i, rows_of_, positive_);
      loss += example(batch, i, static_cast<float>(scale));
    }
    return loss;
  }

  void apply(const RawBatch& batch, double lr) override {
    const float step = static_cast<float>(lr);
    apply_embedding(batch, step);
    for (const int64_t r : touched_) {
      float* w = weight_ + r * dim_;
      const float* dw = &d_weight_[static_cast<size_t>(r * dim_)];
      for (int64_t d = 0; d < dim_; ++d) w[d] -= step * dw[d];
      bias_[r] -= step * d_bias_[r];
    }
  }

 private:
  // Zeroes row r's gradient the first time the batch touches it.
  void touch(int64_t r) {
    if (touched_flag_[r]) return;
    touched_flag_[r] = 1;
    touched_.push_back(r);
    std::fill_n(d_weight_.begin() + r * dim_, dim_, 0.0f);
    d_bias_[r] = 0.0f;
  }

  double example(const RawBatch& batch, int64_t i, float scale) {
    const float count = mean_of(batch, i);
    float* d_hidden = &d_hidden_[static_cast<size_t>(i * dim_)];
    double loss = 0.0;
    for (size_t j = 0; j < rows_of_.size(); ++j) {
      const int64_t r = rows_of_[j];
      const float z = row_score(weight_, bias_, dim_, r, hidden_.data());
      const double signed_z = positive_[j] ? z : -double(z);
      loss -= log_sigmoid(signed_z);
      const double p = 1.0 / (1.0 + std::exp(-double(z)));
      const float g = static_cast<float>(p - (positive_[j] ? 1.0 : 0.0)) * scale;
      touch(r);
      add_row(r, g, d_hidden);
    }
    spread(d_hidden, count);
    return loss;
  }

  bool ns_;  // a seed per batch for the draws
  std::unique_ptr<FastTextLoss> loss_;
  std::function<uint64_t()> seed_;
  std::vector<int64_t> rows_of_;  // example i's output rows (FastTextLoss::targets)
  std::vector<uint8_t> positive_;
  std::vector<int64_t> touched_;  // output rows with a gradient this batch
  std::vector<uint8_t> touched_flag_;
};

}  // namespace

std::unique_ptr<FusedSgd> bag_sgd(const BagTables& tables) {
  if (tables.loss == Loss::softmax) return std::make_unique<SoftmaxSgd>(tables);
  return std::make_unique<LogisticSgd>(tables);
}

}  // namespace sift
