#include "tools/sift/predict_batch.h"

#include <algorithm>
#include <tuple>

#include "framework/runtime/collate.h"
#include "framework/runtime/loss.h"

namespace sift::cli {

namespace {

// Multi-label: every label over its text's threshold, most probable first.
std::vector<Predictions> multi_label(const ModelBundle& b, const torch::Tensor& probs,
                                     const std::vector<PredictQuery>& queries) {
  std::vector<Predictions> out;
  for (size_t i = 0; i < queries.size(); ++i) {
    const float* row = probs.data_ptr<float>() + static_cast<int64_t>(i) * probs.size(1);
    out.push_back(labels_over(row, b.task.labels.names(), queries[i].threshold));
  }
  return out;
}

// Single-label: `values`, `indices` [batch, >= k] best first (a label -1 ends a row early);
// each text keeps its own k and those at or over its threshold (as `fasttext predict FILE
// k threshold`).
std::vector<Predictions> single_label(const ModelBundle& b, const torch::Tensor& values,
                                      const torch::Tensor& indices,
                                      const std::vector<PredictQuery>& queries) {
  const torch::Tensor v = values.to(torch::kFloat32).contiguous();
  const torch::Tensor idx = indices.to(torch::kInt64).contiguous();
  std::vector<Predictions> out(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    const float* vi = v.data_ptr<float>() + static_cast<int64_t>(i) * v.size(1);
    const int64_t* ii = idx.data_ptr<int64_t>() + static_cast<int64_t>(i) * idx.size(1);
    const int64_t k = std::min(queries[i].k, idx.size(1));
    for (int64_t j = 0; j < k && ii[j] >= 0 && vi[j] >= queries[i].threshold; ++j) {
      out[i].emplace_back(b.task.labels.name(ii[j]), vi[j]);
    }
  }
  return out;
}

}  // namespace

std::vector<Predictions> predict_batch(ModelBundle& bundle, const RawBatch& batch,
                                       const std::vector<PredictQuery>& queries) {
  if (queries.empty()) return {};
  int64_t k = 1;
  double threshold = queries[0].threshold;
  for (const auto& q : queries) {
    k = std::max(k, q.k);
    threshold = std::min(threshold, q.threshold);  // each text then keeps its own
  }
  const ModelInput input = to_input(batch, bundle.task.encoder.kind, bundle.device);
  if (bundle.config.data.multi_label) {
    const torch::Tensor probs = torch::sigmoid(bundle.model->forward(input).to(torch::kFloat32))
                                    .to(torch::kCPU)
                                    .contiguous();
    return multi_label(bundle, probs, queries);
  }
  // hs: fastText's search down the tree instead of every label's probability.
  torch::Tensor values, indices;
  std::tie(values, indices) = bundle.model->top_k(input, k, threshold);
  if (!values.defined()) {
    const torch::Tensor probs =
        probabilities(bundle.model->forward(input), false, bundle.config.train.loss);
    std::tie(values, indices) = probs.to(torch::kCPU).topk(k, 1);
  }
  return single_label(bundle, values, indices, queries);
}

}  // namespace sift::cli
