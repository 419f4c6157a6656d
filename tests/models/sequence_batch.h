// Helpers shared by the sequence models' tests: shapes, hand-made padded batches and a
// short training loop.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "models/model.h"

namespace sift::test_util {

using Ids = std::vector<int64_t>;

inline ModelShape shape(int64_t ids = 30, int64_t classes = 3) {
  ModelShape s;
  s.num_ids = ids;
  s.num_classes = classes;
  return s;
}

// Sequences padded on the right to `length` (at least the longest) with `pad`: 0 as
// the data pipeline does, or another id to show the padding's content is never read.
inline ModelInput batch(const std::vector<Ids>& seqs, int64_t length = 0, int64_t pad = 0) {
  for (const auto& s : seqs) length = std::max<int64_t>(length, s.size());
  ModelInput in;
  in.ids = torch::full({static_cast<int64_t>(seqs.size()), length}, pad, torch::kInt64);
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < seqs.size(); ++i) {
    for (size_t t = 0; t < seqs[i].size(); ++t) in.ids[i][t] = seqs[i][t];
    lengths.push_back(static_cast<int64_t>(seqs[i].size()));
  }
  in.lengths = torch::tensor(lengths, torch::kInt64);
  return in;
}

// Trains `model` on one batch for `steps` Adam-style steps; returns the first and the last
// loss.
struct LossCurve {
  double first = 0, last = 0;
};
inline LossCurve train_on(ClassifierImpl& model, torch::optim::Optimizer& optimizer,
                          const ModelInput& input, const torch::Tensor& labels, int steps) {
  LossCurve curve;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model.forward(input), labels);
    loss.backward();
    optimizer.step();
    (step == 0 ? curve.first : curve.last) = loss.item<double>();
  }
  return curve;
}

inline double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace sift::test_util
