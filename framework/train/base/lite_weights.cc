#include "framework/train/base/lite_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "core/error.h"
#include "framework/runtime/base/checkpoint_file.h"
#include "framework/runtime/base/fasttext_predictor.h"
#include "models/base/fasttext_forward.h"

namespace sift {

uint64_t torch_first_random64(uint64_t seed) {
  // at::mt19937 seeds as std::mt19937 does from the seed's low 32 bits (init_with_uint32).
  std::mt19937 engine(static_cast<uint32_t>(seed & 0xffffffffu));
  const uint64_t high = engine();
  const uint64_t low = engine();
  return (high << 32) | low;
}

FastTextTables::FastTextTables(int64_t rows, int64_t labels, int64_t dim, uint64_t seed, Loss loss,
                               const std::vector<uint64_t>& label_counts)
    : rows_(rows),
      labels_(labels),
      classes_(fasttext_output_rows(loss, labels)),
      dim_(dim),
      loss_(loss),
      own_embedding_(new float[static_cast<size_t>(rows * dim)]),
      own_output_(static_cast<size_t>(classes_ * dim), 0.0f),
      own_bias_(static_cast<size_t>(classes_), 0.0f),
      embedding_(own_embedding_.get()),
      output_(own_output_.data()),
      bias_(own_bias_.data()) {
  if (loss == Loss::hs) {  // models/fasttext.cc's buffer and tree
    label_counts_ = label_counts_of(label_counts, labels);
    own_tree_ = build_label_tree(label_counts_);
  }
  const double bound = 1.0 / static_cast<double>(dim);  // models/embeddings.cc make_bag_table
  const UniformFill fill{torch_first_random64(seed), -bound, bound};
  fill.values(0, embedding_, static_cast<size_t>(rows * dim));
  own_fills_[kFastTextTable] = fill;
}

FastTextTables::FastTextTables(const BagTables& t, int64_t labels, const TensorFills* fills)
    : rows_(t.rows),
      labels_(labels),
      classes_(t.classes),
      dim_(t.dim),
      loss_(t.loss),
      fills_(fills),
      embedding_(t.embedding),
      output_(t.weight),
      bias_(t.bias) {
  if (t.tree != nullptr) tree_ = t.tree;
  if (t.label_counts != nullptr) label_counts_.assign(t.label_counts, t.label_counts + labels);
}

BagTables FastTextTables::bag() {
  BagTables t;
  t.embedding = embedding_;
  t.weight = output_;
  t.bias = bias_;
  t.rows = rows_;
  t.classes = classes_;
  t.dim = dim_;
  t.loss = loss_;
  if (loss_ == Loss::hs) t.tree = tree_;
  if (!label_counts_.empty()) t.label_counts = label_counts_.data();
  return t;
}

std::vector<TensorView> FastTextTables::views() const {
  std::vector<TensorView> v = {
      {kFastTextTable, kFloatCode, {rows_, dim_}, embedding_, sizeof(float), {}},
      {kFastTextOutput, kFloatCode, {classes_, dim_}, output_, sizeof(float), {}},
      {kFastTextBias, kFloatCode, {classes_}, bias_, sizeof(float), {}}};
  if (!label_counts_.empty()) {  // a buffer: after the parameters, as named_tensors lists them
    v.push_back(
        {kFastTextLabelCounts, kLongCode, {labels_}, label_counts_.data(), sizeof(int64_t), {}});
  }
  return v;
}

void FastTextTables::add_to(CheckpointParts& checkpoint) const {
  checkpoint.tensors["model"] = views();
  if (const auto it = fills_->find(kFastTextTable); it != fills_->end()) {
    checkpoint.fills["model"][kFastTextTable] = it->second;
  }
}

int64_t FastTextTables::bytes() const {
  return static_cast<int64_t>(sizeof(float)) * (rows_ * dim_ + classes_ * dim_ + classes_) +
         static_cast<int64_t>(sizeof(int64_t) * label_counts_.size());
}

bool FastTextTables::all_finite() const {
  auto finite = [](const float* v, int64_t n) {
    return std::all_of(v, v + n, [](float x) { return std::isfinite(x); });
  };
  return finite(embedding_, rows_ * dim_) && finite(output_, classes_ * dim_) &&
         finite(bias_, classes_);
}

void FastTextTables::load(const std::string& path) {
  const StoredCheckpoint c = read_checkpoint(path, {"model"});
  const auto section = c.on_disk.find("model");
  if (section == c.on_disk.end()) throw Error(fmt::format("{} holds no model state", path));
  std::string why;
  std::optional<FastTextWeights> w = read_fasttext_weights(section->second, &why);
  if (!w) throw Error(fmt::format("{}: {}", path, why));
  // The tree's counts are fixed for the run, and every shape is this model's.
  if (w->label_counts != label_counts_) throw_corrupted_tensor(path, kFastTextLabelCounts);
  if (w->embedding->rows() != rows_ || w->embedding->width() != dim_) {
    throw_corrupted_tensor(path, kFastTextTable);
  }
  if (static_cast<int64_t>(w->output.size()) != classes_ * dim_) {
    throw_corrupted_tensor(path, kFastTextOutput);
  }
  if (static_cast<int64_t>(w->bias.size()) != classes_) throw_corrupted_tensor(path, kFastTextBias);
  w->embedding->copy_to(embedding_);
  std::copy(w->output.begin(), w->output.end(), output_);
  std::copy(w->bias.begin(), w->bias.end(), bias_);
}

}  // namespace sift
