#include "framework/runtime/evaluation.h"

#include <fmt/format.h>

#include "framework/runtime/collate.h"
#include "framework/runtime/loss.h"

namespace sift {

LabelMode label_mode(const SiftConfig& config) {
  return {config.data.multi_label, config.train.threshold};
}

nlohmann::json Evaluation::to_json(const std::vector<std::string>& names) const {
  return multi_label ? multi.to_json(names) : confusion.to_json(names);
}

std::string Evaluation::to_text(const std::vector<std::string>& names) const {
  return multi_label ? multi.to_text(names) : confusion.to_text(names);
}

nlohmann::json Evaluation::summary() const {
  if (!multi_label) {
    return {{"loss", loss}, {"accuracy", confusion.accuracy()}, {"macro_f1", confusion.macro_f1()}};
  }
  return {{"loss", loss},
          {"accuracy", multi.subset_accuracy()},
          {"macro_f1", multi.macro_f1()},
          {"micro_f1", multi.micro_f1()},
          {"hamming_loss", multi.hamming_loss()}};
}

std::string Evaluation::headline() const {
  const nlohmann::json s = summary();
  std::string line = fmt::format("accuracy {:.4f}, macro-F1 {:.4f}", s["accuracy"].get<double>(),
                                 s["macro_f1"].get<double>());
  if (multi_label) line += fmt::format(", micro-F1 {:.4f}", s["micro_f1"].get<double>());
  return line + fmt::format(", loss {:.4f}", loss);
}

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

}  // namespace

Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  Evaluation result{ConfusionMatrix(mode.multi_label ? 0 : classes),
                    MultiLabelCounts(mode.multi_label ? classes : 0), mode.multi_label, 0.0};
  LossOptions loss_options;
  loss_options.multi_label = mode.multi_label;
  loss_options.sum = true;
  double loss_sum = 0.0;
  RawBatch batch;
  batches.start_epoch(1);
  while (batches.next(batch)) {
    auto logits = model->forward(to_input(batch, kind, device));
    loss_sum += batch_loss(logits, batch, loss_options).item<double>();
    if (mode.multi_label) {
      count_multi_label(logits, batch, mode.threshold, result.multi);
      continue;
    }
    auto predicted = logits.argmax(1).to(torch::kCPU);
    const int64_t* p = predicted.data_ptr<int64_t>();
    for (int64_t i = 0; i < batch.size(); ++i) result.confusion.add(batch.labels[i], p[i]);
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  if (was_training) model->train();
  return result;
}

}  // namespace sift
