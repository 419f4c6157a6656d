#include "framework/runtime/evaluation.h"

#include <fmt/format.h>

#include <algorithm>

#include "framework/runtime/collate.h"
#include "framework/runtime/loss.h"

namespace sift {

LabelMode label_mode(const SiftConfig& config) {
  LabelMode mode;
  mode.multi_label = config.data.multi_label;
  mode.loss = config.train.loss;
  mode.threshold = config.train.threshold;
  return mode;
}

nlohmann::json Evaluation::to_json(const std::vector<std::string>& names) const {
  nlohmann::json j = multi_label ? multi.to_json(names) : confusion.to_json(names);
  if (!multi_label && calibration.examples() > 0) j["calibration"] = calibration.to_json();
  if (top_k > 0) {
    j["k"] = top_k;
    j["precision_at_k"] = precision_at_k();
    j["recall_at_k"] = recall_at_k();
  }
  return j;
}

std::string Evaluation::to_text(const std::vector<std::string>& names) const {
  std::string text = multi_label ? multi.to_text(names) : confusion.to_text(names);
  if (top_k > 0) {
    // As `fasttext test` prints them (3 significant digits: std::setprecision(3)).
    text += fmt::format("N\t{}\nP@{}\t{:.3g}\nR@{}\t{:.3g}\n", examples(), top_k, precision_at_k(),
                        top_k, recall_at_k());
  }
  return text;
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

nlohmann::json Evaluation::per_class(const std::vector<std::string>& names) const {
  return per_class_json(names, multi_label ? multi.class_scores() : confusion.class_scores());
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

// fastText's test: the top k labels of each example against its gold label(s).
void count_top_k(const torch::Tensor& logits, const RawBatch& batch, Evaluation& result) {
  const int64_t k = std::min<int64_t>(result.top_k, logits.size(1));
  auto top = std::get<1>(logits.to(torch::kFloat32).topk(k, 1)).to(torch::kCPU).contiguous();
  const int64_t* idx = top.data_ptr<int64_t>();
  const bool lists = !batch.label_starts.empty();
  for (int64_t i = 0; i < batch.size(); ++i) {
    const int64_t* gold =
        lists ? batch.label_lists.data() + batch.label_starts[i] : &batch.labels[i];
    const int64_t gold_count = lists ? batch.label_list_end(i) - batch.label_starts[i] : 1;
    for (int64_t j = 0; j < k; ++j) {
      if (std::find(gold, gold + gold_count, idx[i * k + j]) != gold + gold_count)
        ++result.top_k_correct;
    }
    result.top_k_predicted += k;
    result.gold_labels += gold_count;
  }
}

}  // namespace

Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode, ConfusedExamples* confused) {
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
  double loss_sum = 0.0;
  RawBatch batch;
  batches.start_epoch(1);
  while (batches.next(batch)) {
    auto logits = model->forward(to_input(batch, kind, device));
    loss_sum += batch_loss(logits, batch, loss_options).item<double>();
    if (mode.top_k > 0) count_top_k(logits, batch, result);
    if (mode.multi_label) {
      count_multi_label(logits, batch, mode.threshold, result.multi);
      continue;
    }
    auto predicted = logits.argmax(1);
    // The predicted class's probability (argmax of the logits, so predictions stay as they were).
    auto top = probabilities(logits, false, mode.loss).gather(1, predicted.unsqueeze(1));
    predicted = predicted.to(torch::kCPU);
    top = top.to(torch::kCPU, torch::kFloat64).contiguous();
    const int64_t* p = predicted.data_ptr<int64_t>();
    const double* confidence = top.data_ptr<double>();
    const bool texts = confused != nullptr && batch.texts.size() == batch.labels.size();
    for (int64_t i = 0; i < batch.size(); ++i) {
      result.confusion.add(batch.labels[i], p[i]);
      result.calibration.add(confidence[i], p[i] == batch.labels[i]);
      if (texts && p[i] != batch.labels[i]) {
        confused->add(batch.labels[i], p[i], batch.texts[i], result.confusion);
      }
    }
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  if (was_training) model->train();
  return result;
}

}  // namespace sift
