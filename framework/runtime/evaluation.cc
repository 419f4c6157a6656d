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

// fastText's test: the top k labels of each example against its gold label(s); `top`
// holds each example's k label indices, row by row.
void count_top_k(const int64_t* top, int64_t k, const RawBatch& batch, Evaluation& result) {
  const bool lists = !batch.label_starts.empty();
  for (int64_t i = 0; i < batch.size(); ++i) {
    const int64_t* gold =
        lists ? batch.label_lists.data() + batch.label_starts[i] : &batch.labels[i];
    const int64_t gold_count = lists ? batch.label_list_end(i) - batch.label_starts[i] : 1;
    for (int64_t j = 0; j < k; ++j) {
      if (std::find(gold, gold + gold_count, top[i * k + j]) != gold + gold_count)
        ++result.top_k_correct;
    }
    result.top_k_predicted += k;
    result.gold_labels += gold_count;
  }
}

void count_top_k(const torch::Tensor& logits, const RawBatch& batch, Evaluation& result) {
  const int64_t k = std::min<int64_t>(result.top_k, logits.size(1));
  auto top = std::get<1>(logits.to(torch::kFloat32).topk(k, 1)).to(torch::kCPU).contiguous();
  count_top_k(top.data_ptr<int64_t>(), k, batch, result);
}

// Single-label: each example's prediction `p` and its probability `confidence`.
void count_predictions(const int64_t* p, const double* confidence, const RawBatch& batch,
                       Evaluation& result, ConfusedExamples* confused) {
  const bool texts = confused != nullptr && batch.texts.size() == batch.labels.size();
  for (int64_t i = 0; i < batch.size(); ++i) {
    result.confusion.add(batch.labels[i], p[i]);
    result.calibration.add(confidence[i], p[i] == batch.labels[i]);
    if (texts && p[i] != batch.labels[i]) {
      confused->add(batch.labels[i], p[i], batch.texts[i], result.confusion);
    }
  }
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
  if (result.top_k > 0) count_top_k(labels.data_ptr<int64_t>(), k, batch, result);
  const torch::Tensor predicted = labels.select(1, 0).contiguous();
  const torch::Tensor confidence = probabilities.select(1, 0).to(torch::kFloat64).contiguous();
  count_predictions(predicted.data_ptr<int64_t>(), confidence.data_ptr<double>(), batch, result,
                    confused);
  return true;
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
    const ModelInput input = to_input(batch, kind, device);
    if (!mode.multi_label && count_by_search(*model, input, batch, result, loss_sum, confused)) {
      continue;
    }
    auto logits = model->forward(input);
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
    count_predictions(predicted.data_ptr<int64_t>(), top.data_ptr<double>(), batch, result,
                      confused);
  }
  if (result.examples() > 0) result.loss = loss_sum / static_cast<double>(result.examples());
  if (was_training) model->train();
  return result;
}

}  // namespace sift
