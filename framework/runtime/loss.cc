#include "framework/runtime/loss.h"

#include <algorithm>

namespace sift {

namespace {

// The leading rows that carry a label: distillation's unlabelled rows (label -1) are
// appended after them.
int64_t labelled_rows(const RawBatch& batch) {
  int64_t n = 0;
  while (n < batch.size() && batch.labels[static_cast<size_t>(n)] >= 0) ++n;
  return n;
}

}  // namespace

torch::Tensor multi_hot(const RawBatch& batch, int64_t classes) {
  const auto n = static_cast<int64_t>(batch.label_starts.size());
  auto targets = torch::zeros({n, classes}, torch::kFloat32);
  float* t = targets.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t end = batch.label_list_end(i);
    for (int64_t k = batch.label_starts[i]; k < end; ++k)
      t[i * classes + batch.label_lists[k]] = 1.0f;
  }
  return targets;
}

torch::Tensor probabilities(const torch::Tensor& scores, bool multi_label, Loss loss) {
  const torch::Tensor s = scores.to(torch::kFloat32);
  return sigmoid_scores(multi_label, loss) ? torch::sigmoid(s) : torch::softmax(s, 1);
}

namespace {

torch::Tensor labels_of(const RawBatch& batch, torch::Device device) {
  return torch::from_blob(const_cast<int64_t*>(batch.labels.data()), {batch.size()}, torch::kInt64)
      .to(device);
}

}  // namespace

torch::Tensor model_loss(ClassifierImpl& model, const ModelInput& input, const RawBatch& batch,
                         const LossOptions& options) {
  if (options.multi_label || (options.loss != Loss::hs && options.loss != Loss::ns)) return {};
  const torch::Tensor losses = model.example_losses(input, labels_of(batch, input.ids.device()));
  if (!losses.defined()) return {};
  const torch::Tensor total = losses.to(torch::kFloat32).sum();
  return options.sum ? total : total / static_cast<double>(batch.size());
}

torch::Tensor batch_loss(const torch::Tensor& logits, const RawBatch& batch,
                         const LossOptions& options, const torch::Tensor& class_weights) {
  namespace F = torch::nn::functional;
  const int64_t rows = labelled_rows(batch);
  if (rows == 0) return logits.sum() * 0.0;  // zero, and still a part of the graph
  const torch::Tensor labelled = rows < logits.size(0) ? logits.narrow(0, 0, rows) : logits;
  if (!options.multi_label && sigmoid_scores(false, options.loss)) {  // ns, ova: one-vs-all
    const auto labels =
        torch::from_blob(const_cast<int64_t*>(batch.labels.data()), {rows}, torch::kInt64)
            .to(logits.device());
    // The binary cross-entropy against one-hot targets without building them: BCE(s, 0) =
    // softplus(s) and BCE(s, 1) = softplus(s) - s, so the sum over labels is softplus summed,
    // less each example's own score. One pass over [rows, labels]: with 10,000 labels the
    // one-hot targets (int64, then float) made the test pass of a 200k-line ns run 22 s of
    // its 26 (bench/many_labels.sh).
    const torch::Tensor s = labelled.to(torch::kFloat32);
    const auto loss = F::softplus(s).sum() - s.gather(1, labels.unsqueeze(1)).sum();
    return options.sum ? loss : loss / static_cast<double>(rows);
  }
  if (!options.multi_label) {
    auto o = F::CrossEntropyFuncOptions().label_smoothing(options.label_smoothing);
    if (options.sum) o.reduction(torch::kSum);
    if (class_weights.defined()) o.weight(class_weights);
    auto labels = torch::from_blob(const_cast<int64_t*>(batch.labels.data()), {rows}, torch::kInt64)
                      .to(logits.device());
    return F::cross_entropy(labelled, labels, o);
  }
  auto targets = multi_hot(batch, logits.size(1)).narrow(0, 0, rows).to(logits.device());
  if (options.label_smoothing > 0) {
    targets = targets * (1.0 - options.label_smoothing) + 0.5 * options.label_smoothing;
  }
  auto o = F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kSum);
  if (class_weights.defined()) o.pos_weight(class_weights);
  auto loss = F::binary_cross_entropy_with_logits(labelled.to(torch::kFloat32), targets, o);
  return options.sum ? loss : loss / static_cast<double>(rows);
}

torch::Tensor distill_loss(const torch::Tensor& student, const torch::Tensor& teacher,
                           double temperature, bool multi_label, bool sum) {
  namespace F = torch::nn::functional;
  const torch::Tensor s = student.to(torch::kFloat32) / temperature;
  const torch::Tensor t = teacher.to(torch::kFloat32).detach() / temperature;
  torch::Tensor total;
  if (!multi_label) {
    total = F::kl_div(torch::log_softmax(s, 1), torch::softmax(t, 1),
                      F::KLDivFuncOptions().reduction(torch::kSum));
  } else {
    const torch::Tensor p = torch::sigmoid(t);
    auto o = F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kSum);
    total =
        F::binary_cross_entropy_with_logits(s, p, o) - F::binary_cross_entropy_with_logits(t, p, o);
  }
  total = total * (temperature * temperature);
  return sum ? total : total / static_cast<double>(std::max<int64_t>(student.size(0), 1));
}

DistilledLoss distilled_loss(const torch::Tensor& hard, const torch::Tensor& student,
                             const torch::Tensor& teacher, double alpha, double temperature,
                             bool multi_label, bool sum) {
  DistilledLoss out;
  out.soft = distill_loss(student, teacher, temperature, multi_label, sum);
  out.total = alpha * hard + (1.0 - alpha) * out.soft;
  return out;
}

torch::Tensor balanced_pos_weight(const std::vector<uint64_t>& label_counts, uint64_t records) {
  std::vector<float> w;
  for (uint64_t count : label_counts) {
    w.push_back(count == 0 || count >= records
                    ? (count == 0 ? 0.0f : 1.0f)
                    : static_cast<float>(records - count) / static_cast<float>(count));
  }
  return torch::tensor(w);
}

}  // namespace sift
