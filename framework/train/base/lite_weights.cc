#include "framework/train/base/lite_weights.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/error.h"
#include "framework/runtime/base/checkpoint_file.h"

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
      embedding_(new float[static_cast<size_t>(rows * dim)]),
      output_(static_cast<size_t>(classes_ * dim), 0.0f),
      bias_(static_cast<size_t>(classes_), 0.0f) {
  if (loss == Loss::hs) {  // models/fasttext.cc's buffer and tree
    label_counts_ = label_counts_of(label_counts, labels);
    tree_ = build_label_tree(label_counts_);
  }
  const double bound = 1.0 / static_cast<double>(dim);  // models/embeddings.cc make_bag_table
  fill_ = UniformFill{torch_first_random64(seed), -bound, bound};
  fill_.values(0, embedding_.get(), static_cast<size_t>(rows * dim));
}

BagTables FastTextTables::bag() {
  BagTables t;
  t.embedding = embedding_.get();
  t.weight = output_.data();
  t.bias = bias_.data();
  t.rows = rows_;
  t.classes = classes_;
  t.dim = dim_;
  t.loss = loss_;
  if (loss_ == Loss::hs) t.tree = &tree_;
  return t;
}

std::vector<TensorView> FastTextTables::views() const {
  std::vector<TensorView> v = {
      {"embedding.weight", kFloatCode, {rows_, dim_}, embedding_.get(), sizeof(float)},
      {"output.weight", kFloatCode, {classes_, dim_}, output_.data(), sizeof(float)},
      {"output.bias", kFloatCode, {classes_}, bias_.data(), sizeof(float)}};
  if (!label_counts_.empty()) {  // a buffer: after the parameters, as named_tensors lists them
    v.push_back({"label_counts", kLongCode, {labels_}, label_counts_.data(), sizeof(int64_t)});
  }
  return v;
}

void FastTextTables::add_to(CheckpointParts& checkpoint) const {
  checkpoint.tensors["model"] = views();
  checkpoint.fills["model"]["embedding.weight"] = fill_;
}

int64_t FastTextTables::bytes() const {
  return static_cast<int64_t>(sizeof(float)) * (rows_ * dim_ + classes_ * dim_ + classes_) +
         static_cast<int64_t>(sizeof(int64_t) * label_counts_.size());
}

bool FastTextTables::all_finite() const {
  auto finite = [](const float* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(v[i])) return false;
    }
    return true;
  };
  return finite(embedding_.get(), rows_ * dim_) && finite(output_.data(), classes_ * dim_) &&
         finite(bias_.data(), classes_);
}

float* FastTextTables::target(const TensorRecordHead& head, const std::string& path) {
  const std::vector<int64_t> matrix{rows_, dim_}, output{classes_, dim_}, bias{classes_};
  if (head.dtype == kFloatCode) {
    if (head.name == "embedding.weight" && head.shape == matrix) return embedding_.get();
    if (head.name == "output.weight" && head.shape == output) return output_.data();
    if (head.name == "output.bias" && head.shape == bias) return bias_.data();
  }
  throw_corrupted_tensor(path, head.name);
}

void FastTextTables::load(const std::string& path) {
  const StoredCheckpoint c = read_checkpoint(path, {"model"});
  const auto section = c.on_disk.find("model");
  if (section == c.on_disk.end()) throw Error(fmt::format("{} holds no model state", path));
  FileCursor in(section->second);
  const auto count = in.get<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    const TensorRecordHead head = read_record_head(in);
    if (head.name == "label_counts") {  // the tree's counts: fixed for the run
      std::vector<int64_t> counts(label_counts_.size());
      if (head.dtype != kLongCode || head.bytes != counts.size() * sizeof(int64_t)) {
        throw_corrupted_tensor(path, head.name);
      }
      in.read_into(reinterpret_cast<char*>(counts.data()), head.bytes);
      if (counts != label_counts_) throw_corrupted_tensor(path, head.name);
      continue;
    }
    float* data = target(head, path);
    const uint64_t values = static_cast<uint64_t>(head.shape.size() == 2 ? head.shape[1] : 1) *
                            static_cast<uint64_t>(head.shape[0]);
    if (head.changed_rows) {
      const ChangedRows changed = read_changed_rows(in, head, path);
      changed.fill.values(0, data, values);
      for (size_t k = 0; k < changed.indices.size(); ++k) {
        std::memcpy(data + changed.indices[k] * dim_, changed.values.data() + k * dim_,
                    static_cast<size_t>(dim_) * sizeof(float));
      }
    } else {
      if (head.bytes != values * sizeof(float)) throw_corrupted_tensor(path, head.name);
      in.read_into(reinterpret_cast<char*>(data), head.bytes);
    }
  }
}

}  // namespace sift
