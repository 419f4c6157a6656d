#include "framework/runtime/evaluation.h"

#include <fmt/format.h>

#include <algorithm>

#include "framework/runtime/collate.h"
#include "framework/runtime/loss.h"

namespace sift {

namespace {

// Multi-label: labels whose probability exceeds the threshold, against the true sets.
void count_multi_label(const torch::Tensor& logits, const RawBatch& batch, double threshold,
                       MultiLabelCounts& counts) {
  const int64_t classes = logits.size(1);
  auto predicted = (torch::sigmoid(logits.to(torch::kFloat32)) > threshold)
                       .to(torch::kCPU, torch::kUInt8)
                       .contiguous();
  auto truth = multi_hot(batch, classes).to(torch::kUInt8);
  const uint8_t* p = predicted.data_ptr<uint8_t>();
  const uint8_t* t = truth.data_ptr<uint8_t>();
  for (int64_t i = 0; i < batch.size(); ++i) counts.add(t + i * classes, p + i * classes);
}

// The labels of `top` whose probability is under the threshold, as -1 (not predicted).
torch::Tensor above_threshold(torch::Tensor top, const torch::Tensor& probabilities,
                              double threshold) {
  if (threshold <= 0) return top;
  return torch::where(probabilities >= threshold, top, torch::full_like(top, -1));
}

void count_top_k(const torch::Tensor& logits, const RawBatch& batch, Loss loss,
                 Evaluation& result) {
  const int64_t k = std::min<int64_t>(result.top_k, logits.size(1));
  torch::Tensor top = std::get<1>(logits.to(torch::kFloat32).topk(k, 1));
  if (result.top_k_threshold > 0) {
    const torch::Tensor p = probabilities(logits.to(torch::kFloat32), false, loss).gather(1, top);
    top = above_threshold(top, p, result.top_k_threshold);
  }
  top = top.to(torch::kCPU).contiguous();
  count_top_k(top.data_ptr<int64_t>(), k, batch, result);
}

// Single-label batches of a model that finds its most probable labels by search (the
// fastText model's hs: down its tree) and computes each example's loss from the rows it
// touches: neither needs every label's score. With 10,000 labels, scoring them all for
// 20,000 test lines took 3.8 s of a 7.7 s run. Returns false, having counted nothing, for
// other models.
bool count_by_search(ClassifierImpl& model, const ModelInput& input, const RawBatch& batch,
                     Evaluation& result, double& loss_sum, ConfusedExamples* confused) {
  // As count_top_k over logits: at most every label (a search for more finds fewer).
  const int64_t k = std::min(std::max<int64_t>(1, result.top_k), result.confusion.classes());
  auto [probabilities, labels] = model.top_k(input, k, 0.0);
  if (!labels.defined()) return false;
  const auto gold = torch::tensor(batch.labels, torch::kInt64).to(input.ids.device());
  const torch::Tensor losses = model.example_losses(input, gold);
  if (!losses.defined() || labels.size(1) < k) return false;
  loss_sum += losses.sum().item<double>();
  labels = labels.contiguous();
  if (result.top_k > 0) {
    const torch::Tensor top =
        above_threshold(labels, probabilities, result.top_k_threshold).to(torch::kCPU).contiguous();
    count_top_k(top.data_ptr<int64_t>(), k, batch, result);
  }
  const torch::Tensor predicted = labels.select(1, 0).contiguous();
  const torch::Tensor confidence = probabilities.select(1, 0).to(torch::kFloat64).contiguous();
  count_predictions(predicted.data_ptr<int64_t>(), confidence.data_ptr<double>(), batch, result,
                    confused);
  return true;
}

}  // namespace

bool LockstepBatches::next(RawBatch& batch) {
  while (true) {
    const bool mine = !ended_ && stream_.next(batch);
    ended_ = !mine;
    if (!lockstep_) return mine;
    if (!lockstep_->any(mine)) return false;
    if (mine) return true;
    lockstep_->idle();
  }
}

Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode, ConfusedExamples* confused,
                    const Lockstep* lockstep) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  Evaluation result{ConfusionMatrix(mode.multi_label ? 0 : classes),
                    MultiLabelCounts(mode.multi_label ? classes : 0),
                    mode.multi_label,
                    0.0,
                    {}};
  LossOptions loss_options;
  loss_options.multi_label = mode.multi_label;
  loss_options.loss = mode.loss;
  loss_options.sum = true;
  result.top_k = mode.top_k;
  result.top_k_threshold = mode.top_k_threshold;
  double loss_sum = 0.0;
  RawBatch batch;
  batches.start_epoch(1);
  LockstepBatches turns(batches, lockstep);
  while (turns.next(batch)) {
    const ModelInput input = to_input(batch, kind, device);
    if (!mode.multi_label && count_by_search(*model, input, batch, result, loss_sum, confused)) {
      continue;
    }
    auto logits = model->forward(input);
    loss_sum += batch_loss(logits, batch, loss_options).item<double>();
    if (mode.top_k > 0) count_top_k(logits, batch, mode.loss, result);
    if (mode.multi_label) {
      count_multi_label(logits, batch, mode.threshold, result.multi);
      continue;
    }
    auto predicted = logits.argmax(1);
    // The predicted class's probability (argmax of the logits, so predictions stay as they were).
    auto top = probabilities(logits, false, mode.loss).gather(1, predicted.unsqueeze(1));
    predicted = predicted.to(torch::kCPU);
    top = top.to(torch::kCPU, torch::kFloat64).contiguous();
    count_predictions(predicted.data_ptr<int64_t>(), top.data_ptr<double>(), batch, result,
                      confused);
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  if (was_training) model->train();
  return result;
}

}  // namespace sift
