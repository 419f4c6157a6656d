#include "framework/train/distill.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/export.h"
#include "models/autocast.h"

namespace sift {
namespace {

constexpr const char* kKey = "train.distill.teacher";

std::string label_list(const LabelSet& labels) {
  return fmt::format("{}", fmt::join(labels.names(), ", "));
}

// Where each of the run's labels is among the teacher's (undefined when in the same
// order); refuses different label sets.
torch::Tensor label_columns(const LabelSet& run, const LabelSet& teacher, const std::string& path) {
  std::vector<int64_t> columns;
  bool same_order = run.size() == teacher.size();
  for (int64_t k = 0; k < run.size(); ++k) {
    const int64_t column = teacher.id(run.names()[static_cast<size_t>(k)]);
    columns.push_back(column);
    same_order = same_order && column == k;
  }
  const bool same_set = run.size() == teacher.size() &&
                        std::find(columns.begin(), columns.end(), -1) == columns.end();
  if (!same_set) {
    throw Error(fmt::format(
        "{}: the teacher {} has the labels ({}), the data has ({}); a teacher must know "
        "exactly the data's labels",
        kKey, path, label_list(teacher), label_list(run)));
  }
  return same_order ? torch::Tensor() : torch::tensor(columns, torch::kInt64);
}

}  // namespace

Teacher::Teacher(ModelBundle loaded)
    : bundle(std::move(loaded)), encoder(make_encoder(bundle.task)) {}

std::shared_ptr<Teacher> load_teacher(const std::string& path, bool multi_label, const Task& task,
                                      torch::Device device) {
  if (!std::filesystem::exists(path)) {
    throw Error(
        fmt::format("{}: {} does not exist (a run folder or a `sift export` file)", kKey, path));
  }
  ModelBundle bundle;
  try {
    bundle = load_model(path);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", kKey, e.what()));
  }
  if (bundle.config.data.multi_label != multi_label) {
    throw Error(fmt::format(
        "{}: the teacher {} is {} (data.multi_label: {}), this run is {}; both must be alike", kKey,
        path, bundle.config.data.multi_label ? "multi-label" : "single-label",
        bundle.config.data.multi_label ? "true" : "false",
        multi_label ? "multi-label" : "single-label"));
  }
  auto teacher = std::make_shared<Teacher>(std::move(bundle));
  teacher->columns = label_columns(task.labels, teacher->bundle.task.labels, path);
  teacher->bundle.model->to(device);
  teacher->bundle.model->eval();
  teacher->bundle.device = device;
  for (auto& p : teacher->bundle.model->parameters()) p.set_requires_grad(false);
  return teacher;
}

torch::Tensor teacher_logits(Teacher& teacher, const RawBatch& batch, Precision precision,
                             torch::Device device) {
  RawBatch own;  // the batch in the teacher's encoding (to_input reads ids, offsets, size)
  own.ids = batch.teacher_ids;
  own.offsets = batch.teacher_offsets;
  own.labels = batch.labels;
  const ModelInput input = to_input(own, teacher.encoder.options().kind, device);
  torch::NoGradGuard no_grad;
  torch::Tensor logits;
  {
    AutocastGuard autocast(precision, device);
    logits = teacher.bundle.model->forward(input);
  }
  logits = logits.to(torch::kFloat32);
  if (teacher.columns.defined()) logits = logits.index_select(1, teacher.columns.to(device));
  return logits;
}

std::string teacher_note(double teacher_seconds, double elapsed_seconds) {
  return fmt::format("teacher {:.0f}%",
                     elapsed_seconds > 0 ? 100.0 * teacher_seconds / elapsed_seconds : 0.0);
}

}  // namespace sift
