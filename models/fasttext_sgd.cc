#include "models/fasttext_sgd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "models/model.h"

namespace sift {
namespace {

float* weights_of(ClassifierImpl& model, const std::string& name) {
  torch::Tensor* t = model.named_parameters().find(name);
  if (t == nullptr || t->scalar_type() != torch::kFloat32 || !t->is_contiguous() ||
      !t->device().is_cpu()) {
    throw Error(fmt::format("fused SGD: the model has no contiguous fp32 CPU '{}'", name));
  }
  return t->data_ptr<float>();
}

class FastTextSgd : public FusedSgd {
 public:
  explicit FastTextSgd(ClassifierImpl& model)
      : embedding_(weights_of(model, "embedding.weight")),
        weight_(weights_of(model, "output.weight")),
        bias_(weights_of(model, "output.bias")) {
    const auto& w = *model.named_parameters().find("output.weight");
    classes_ = w.size(0);
    dim_ = w.size(1);
    rows_ = model.named_parameters().find("embedding.weight")->size(0);
    d_weight_.resize(static_cast<size_t>(classes_ * dim_));
    d_bias_.resize(static_cast<size_t>(classes_));
    logits_.resize(static_cast<size_t>(classes_));
  }

  double gradient(const RawBatch& batch, double scale) override {
    const int64_t n = batch.size();
    d_hidden_.assign(static_cast<size_t>(n * dim_), 0.0f);
    hidden_.resize(static_cast<size_t>(dim_));
    std::fill(d_weight_.begin(), d_weight_.end(), 0.0f);
    std::fill(d_bias_.begin(), d_bias_.end(), 0.0f);
    double loss = 0.0;
    for (int64_t i = 0; i < n; ++i) loss += example(batch, i, static_cast<float>(scale));
    return loss;
  }

  void apply(const RawBatch& batch, double lr) override {
    const float step = static_cast<float>(lr);
    for (int64_t i = 0; i < batch.size(); ++i) {
      const float* g = &d_hidden_[static_cast<size_t>(i * dim_)];
      for (int64_t k = batch.offsets[i], end = batch.ids_end(i); k < end; ++k) {
        float* row = embedding_ + batch.ids[k] * dim_;
        for (int64_t d = 0; d < dim_; ++d) row[d] -= step * g[d];
      }
    }
    for (int64_t j = 0; j < classes_ * dim_; ++j) weight_[j] -= step * d_weight_[j];
    for (int64_t c = 0; c < classes_; ++c) bias_[c] -= step * d_bias_[c];
  }

 private:
  // Example i's loss; adds its gradient to the output layer's and keeps the one each of
  // its embedding rows gets (the hidden gradient / its number of ids: the bag's mean).
  double example(const RawBatch& batch, int64_t i, float scale) {
    const int64_t begin = batch.offsets[i], end = batch.ids_end(i);
    std::fill(hidden_.begin(), hidden_.end(), 0.0f);
    for (int64_t k = begin; k < end; ++k) {
      const int64_t id = batch.ids[k];
      if (id < 0 || id >= rows_) throw Error(fmt::format("fused SGD: id {} out of range", id));
      const float* row = embedding_ + id * dim_;
      for (int64_t d = 0; d < dim_; ++d) hidden_[d] += row[d];
    }
    const float count = static_cast<float>(end - begin);
    if (end > begin) {
      for (auto& h : hidden_) h /= count;
    }
    float top = -INFINITY;
    for (int64_t c = 0; c < classes_; ++c) {
      const float* w = weight_ + c * dim_;
      float z = bias_[c];
      for (int64_t d = 0; d < dim_; ++d) z += w[d] * hidden_[d];
      logits_[c] = z;
      top = std::max(top, z);
    }
    double total = 0.0;
    for (int64_t c = 0; c < classes_; ++c) total += std::exp(double(logits_[c] - top));
    const int64_t label = batch.labels[i];
    const double loss = std::log(total) + top - logits_[label];
    float* d_hidden = &d_hidden_[static_cast<size_t>(i * dim_)];
    for (int64_t c = 0; c < classes_; ++c) {
      const double p = std::exp(double(logits_[c] - top)) / total;
      const float g = static_cast<float>(p - (c == label ? 1.0 : 0.0)) * scale;
      d_bias_[c] += g;
      const float* w = weight_ + c * dim_;
      float* dw = &d_weight_[static_cast<size_t>(c * dim_)];
      for (int64_t d = 0; d < dim_; ++d) {
        dw[d] += g * hidden_[d];
        d_hidden[d] += g * w[d];
      }
    }
    if (end > begin) {
      for (int64_t d = 0; d < dim_; ++d) d_hidden[d] /= count;
    }
    return loss;
  }

  float* embedding_;
  float* weight_;  // [classes, dim], row-major as torch::nn::Linear keeps it
  float* bias_;
  int64_t classes_ = 0, dim_ = 0, rows_ = 0;
  std::vector<float> hidden_, logits_, d_weight_, d_bias_;
  std::vector<float> d_hidden_;  // [batch, dim]: each example's per-row gradient
};

}  // namespace

std::unique_ptr<FusedSgd> fasttext_sgd(ClassifierImpl& model) {
  return std::make_unique<FastTextSgd>(model);
}

}  // namespace sift
