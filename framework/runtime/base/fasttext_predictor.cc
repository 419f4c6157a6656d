#include "framework/runtime/base/fasttext_predictor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "framework/runtime/base/run_weights.h"
#include "models/base/fasttext_forward.h"
#include "models/base/fasttext_loss.h"

namespace sift {

FloatTable FloatTable::dense(int64_t rows, int64_t width, std::vector<float> values) {
  FloatTable t(rows, width);
  t.values_ = std::move(values);
  return t;
}

FloatTable FloatTable::filled(int64_t rows, int64_t width, ChangedRows changed) {
  FloatTable t(rows, width);
  t.values_ = std::move(changed.values);
  t.fill_ = changed.fill;
  t.filled_ = true;
  t.changed_ = RankedRows(rows, changed.indices);
  return t;
}

RankedRows::RankedRows(int64_t rows, const std::vector<int64_t>& indices)
    : bits_(static_cast<size_t>((rows + 63) / 64), 0), before_(bits_.size()) {
  for (int64_t r : indices) bits_[static_cast<size_t>(r / 64)] |= uint64_t{1} << (r % 64);
  int64_t before = 0;
  for (size_t w = 0; w < bits_.size(); ++w) {
    before_[w] = before;
    before += __builtin_popcountll(bits_[w]);
  }
}

FloatTable FloatTable::product_quantized(int64_t rows, int64_t width, PqRows pq) {
  FloatTable t(rows, width);
  t.pq_ = std::make_unique<PqRows>(std::move(pq));
  return t;
}

void FloatTable::add_row(int64_t r, float* sum) const {
  if (pq_) {  // as the export's forward: the centroids of the row's codes, times its norm
    const int64_t subs = static_cast<int64_t>(pq_->sub.size());
    const uint8_t* codes = pq_->codes.data() + r * subs;
    for (int64_t j = 0; j < subs; ++j) {
      const float* c = pq_->centroids.data() + (codes[j] + pq_->sub[j]) * pq_->dsub;
      for (int64_t d = 0; d < pq_->dsub; ++d) {
        sum[j * pq_->dsub + d] += pq_->norms.empty() ? c[d] : c[d] * pq_->norms[r];
      }
    }
    return;
  }
  const int64_t at = filled_ ? changed_.position(r) : r;
  if (at >= 0) {
    const float* row = values_.data() + at * width_;
    for (int64_t d = 0; d < width_; ++d) sum[d] += row[d];
    return;
  }
  const auto first = static_cast<uint64_t>(r * width_);  // the row still holds its fill
  for (int64_t d = 0; d < width_; ++d) sum[d] += fill_.at(first + static_cast<uint64_t>(d));
}

void FloatTable::copy_to(float* out) const {
  const auto n = static_cast<size_t>(rows_ * width_);
  if (pq_) {
    std::fill(out, out + n, 0.0f);
    for (int64_t r = 0; r < rows_; ++r) add_row(r, out + r * width_);
  } else if (!filled_) {
    std::copy(values_.begin(), values_.end(), out);
  } else {  // the fill, then the rows that differ from it
    fill_.values(0, out, n);
    for (int64_t r = 0; r < rows_; ++r) {
      if (const int64_t at = changed_.position(r); at >= 0) {
        std::copy_n(values_.data() + at * width_, width_, out + r * width_);
      }
    }
  }
}

namespace {

bool finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace

bool FloatTable::all_finite() const {
  return finite(values_) && (!pq_ || (finite(pq_->centroids) && finite(pq_->norms)));
}

namespace {

std::vector<float> read_floats(FileCursor& in, const TensorRecordHead& head) {
  int64_t n = 1;
  for (int64_t d : head.shape) n *= d;
  if (head.bytes != static_cast<uint64_t>(n) * sizeof(float)) {
    throw_corrupted_tensor(in.path(), head.name);
  }
  std::vector<float> values(static_cast<size_t>(n));
  in.read_into(reinterpret_cast<char*>(values.data()), head.bytes);
  return values;
}

FloatTable read_table(FileCursor& in, const TensorRecordHead& head) {
  if (head.changed_rows) {
    return FloatTable::filled(head.shape[0], head.shape[1], read_changed_rows(in, head, in.path()));
  }
  return FloatTable::dense(head.shape[0], head.shape[1], read_floats(in, head));
}

}  // namespace

std::optional<FastTextWeights> read_fasttext_weights(const SectionRef& section, std::string* why) {
  FileCursor in(section);
  FastTextWeights w;
  const auto count = in.get<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    const TensorRecordHead head = read_record_head(in);
    const bool matrix = head.shape.size() == 2, vector = head.shape.size() == 1;
    if (head.name == kFastTextLabelCounts && head.dtype == kLongCode && vector) {
      w.label_counts.resize(static_cast<size_t>(head.shape[0]));
      if (head.bytes != w.label_counts.size() * sizeof(int64_t)) {
        throw_corrupted_tensor(section.path, head.name);
      }
      in.read_into(reinterpret_cast<char*>(w.label_counts.data()), head.bytes);
    } else if (head.dtype != kFloatCode) {
      *why = fmt::format("tensor '{}' is not fp32", head.name);
      return std::nullopt;
    } else if (head.name == kFastTextTable && matrix) {
      w.embedding = read_table(in, head);
    } else if (head.name == kFastTextOutput && matrix && !head.changed_rows) {
      w.output = read_floats(in, head);
      w.output_width = head.shape[1];
    } else if (head.name == kFastTextBias && vector) {
      w.bias = read_floats(in, head);
    } else {
      *why = fmt::format("tensor '{}' is not a fastText model's", head.name);
      return std::nullopt;
    }
  }
  if (!w.embedding || w.output_width != w.embedding->width() ||
      w.output.size() != w.bias.size() * static_cast<size_t>(w.output_width)) {
    *why = "the weights are not a fastText model's";
    return std::nullopt;
  }
  return w;
}

bool FastTextPredictor::serves(const SiftConfig& c, std::string* why) {
  if (c.model.type != "fasttext") {
    *why = fmt::format("model.type {}", c.model.type);
  } else if (c.run.device != "cpu" && c.run.device != "auto") {
    *why = fmt::format("run.device {}", c.run.device);
  }
  return why->empty();
}

std::unique_ptr<FastTextPredictor> FastTextPredictor::open(const std::string& run_dir,
                                                           std::string* why) {
  RunText run = load_run_text(run_dir, {}, [](const std::string&) { return InputKind::bag; });
  if (!serves(run.config, why)) return nullptr;
  std::string path;
  const StoredCheckpoint checkpoint = load_run_weights(run_dir, &path);
  if (checkpoint.meta.value("model", "") != run.config.model.type) {
    *why = fmt::format("{} holds another model", path);
    return nullptr;
  }
  std::optional<FastTextWeights> w = read_fasttext_weights(checkpoint.on_disk.at("model"), why);
  if (!w) return nullptr;
  return make(std::move(run), std::move(*w), path, why);
}

std::unique_ptr<FastTextPredictor> FastTextPredictor::make(RunText run, FastTextWeights w,
                                                           const std::string& path,
                                                           std::string* why) {
  TextEncoder encoder(run.vocab, run.encoder, run.pieces);
  const int64_t labels = run.labels.size();
  const SiftConfig& c = run.config;
  const bool hs = c.train.loss == Loss::hs && !c.data.multi_label;
  const bool ids_fit = w.kept_ids.empty()
                           ? encoder.num_ids() == w.embedding->rows()
                           : static_cast<int64_t>(w.kept_ids.size()) == w.embedding->rows() &&
                                 w.kept_ids.back() < encoder.num_ids();
  if (!ids_fit || w.bias.size() != static_cast<size_t>(hs ? labels - 1 : labels) ||
      (hs && (labels < 2 || w.label_counts.size() != static_cast<size_t>(labels)))) {
    *why = fmt::format("{}: the weights do not fit the vocabulary and labels", path);
    return nullptr;
  }
  if (!w.embedding->all_finite() || !finite(w.output) || !finite(w.bias)) {
    *why = fmt::format("{}: the weights hold NaN/inf", path);
    return nullptr;
  }
  std::unique_ptr<FastTextPredictor> p(new FastTextPredictor(std::move(run), std::move(encoder)));
  p->embedding_ = std::move(*w.embedding);
  p->output_ = std::move(w.output);
  p->bias_ = std::move(w.bias);
  if (!w.kept_ids.empty()) {
    p->kept_ = RankedRows(w.kept_ids.back() + 1,
                          std::vector<int64_t>(w.kept_ids.begin(), w.kept_ids.end()));
  }
  const LabelTree tree = hs ? build_label_tree(w.label_counts) : LabelTree{};
  // A multi-label hs run predicts each label's sigmoid (label_probabilities); its top_k
  // takes the scores' softmax, as the LibTorch model does without a tree.
  const Loss loss = c.train.loss == Loss::hs && !hs ? Loss::softmax : c.train.loss;
  p->loss_ = fasttext_loss({loss, labels, &tree, nullptr, 0});
  return p;
}

// EmbeddingBag's mean: the rows summed in order, then divided by their number.
// With --cutoff, an id whose row was cut leaves its bag, as fastText's pruned dictionary
// drops the word.
std::vector<float> FastTextPredictor::hidden(const std::vector<int64_t>& ids) const {
  std::vector<float> h(static_cast<size_t>(embedding_.width()), 0.0f);
  int64_t n = 0;
  for (int64_t id : ids) {
    const int64_t row = kept_ ? kept_->position(id) : id;
    if (row < 0) continue;
    embedding_.add_row(row, h.data());
    ++n;
  }
  if (n > 0) {
    const auto count = static_cast<float>(n);
    for (float& v : h) v /= count;
  }
  return h;
}

OutputLayer FastTextPredictor::output_layer() const {
  return {output_.data(), bias_.data(), static_cast<int64_t>(bias_.size()), embedding_.width()};
}

std::vector<float> FastTextPredictor::scores(const std::vector<float>& h) const {
  const OutputLayer out = output_layer();
  std::vector<float> z(bias_.size());
  for (size_t r = 0; r < z.size(); ++r) z[r] = out.score(h.data(), static_cast<int64_t>(r));
  return z;
}

LabelProbabilities FastTextPredictor::top_k(const std::vector<int64_t>& ids, int64_t k,
                                            double threshold) const {
  return loss_->top_k(output_layer(), hidden(ids).data(), k, threshold);
}

std::vector<float> FastTextPredictor::label_probabilities(const std::vector<int64_t>& ids) const {
  std::vector<float> p = scores(hidden(ids));
  for (float& v : p) v = 1.0f / (1.0f + std::exp(-v));
  return p;
}

}  // namespace sift
