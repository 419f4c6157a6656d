#include "framework/train/fine_tuning.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/file_bytes.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/setup.h"

namespace sift {
namespace {

constexpr const char* kOutputLayer = "output.";  // the classifier's rows, one per label

// The labels of run folder `from`; empty for a checkpoint file or a folder without them.
std::vector<std::string> run_labels(const std::string& from) {
  const std::string path = run_file(from, kLabelsFile);
  if (!std::filesystem::is_directory(from) || !std::filesystem::exists(path)) return {};
  // A pretraining run (`sift pretrain`) has no labels: its labels.txt is empty.
  if (read_file_bytes(path).find_first_not_of(" \t\r\n") == std::string::npos) return {};
  return LabelSet::load(path).names();
}

std::string listed(const std::vector<std::string>& names) {
  return names.size() <= 8
             ? fmt::format("{}", fmt::join(names, ", "))
             : fmt::format("{}, ... ({} labels)", fmt::join(names.begin(), names.begin() + 6, ", "),
                           names.size());
}

}  // namespace

void take_label_order(LabelSet& labels, std::vector<uint64_t>& counts, const std::string& from) {
  const std::vector<std::string> theirs = run_labels(from);
  const std::vector<std::string>& mine = labels.names();
  if (theirs.empty() || theirs == mine) return;
  if (std::set<std::string>(theirs.begin(), theirs.end()) !=
      std::set<std::string>(mine.begin(), mine.end())) {
    return;
  }
  std::vector<uint64_t> reordered(theirs.size(), 0);
  for (size_t i = 0; i < theirs.size(); ++i) {
    const int64_t id = labels.id(theirs[i]);
    if (id < static_cast<int64_t>(counts.size())) reordered[i] = counts[static_cast<size_t>(id)];
  }
  labels = LabelSet::load(run_file(from, kLabelsFile));
  counts = std::move(reordered);
}

std::string fine_tune_from(ClassifierImpl& model, const std::string& from, const LabelSet& labels) {
  std::map<std::string, torch::Tensor> initial;
  for (const auto& p : model.named_parameters()) {
    if (p.key().rfind(kOutputLayer, 0) == 0) initial[p.key()] = p.value().detach().clone();
  }
  // What the loader left out or started anew (a pretraining run's masked-token head, an
  // output layer of another shape), on a line of its own.
  std::string loaded = init_from(model, from);
  if (!loaded.empty()) loaded += "\n";
  const std::vector<std::string> theirs = run_labels(from);
  if (theirs.empty()) return loaded;
  if (theirs == labels.names()) {
    return loaded +
           fmt::format("train.init_from: {}'s classification head is kept (the same labels: {})",
                       from, listed(theirs));
  }
  torch::NoGradGuard no_grad;
  auto params = model.named_parameters();
  std::vector<std::string> names;
  for (const auto& [name, values] : initial) {
    params[name].copy_(values);
    names.push_back(name);
  }
  return loaded +
         fmt::format(
             "train.init_from: the labels ({}) are not {}'s ({}): a new classification head ({}) "
             "starts from the model's initialisation",
             listed(labels.names()), from, listed(theirs), fmt::join(names, ", "));
}

}  // namespace sift
