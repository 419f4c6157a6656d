// `sift predict` of a fastText run folder or export without LibTorch: the text files, the
// weights as plain arrays and the model's forward (mean of embedding rows, output layer,
// softmax / sigmoid / hs tree search). Loading LibTorch takes 0.35-0.6 s here, longer
// than `fasttext predict` takes for all 7,600 AG News test texts (bench/RESULTS.md, #15).
// The scores equal the LibTorch model's within float rounding (the output layer's sums
// run in another order): tests/tools/lite_predict_cli_test.cc.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "datasets/text_encoder.h"
#include "framework/runtime/base/checkpoint_file.h"
#include "framework/runtime/base/run_text.h"
#include "models/base/fasttext_loss.h"

namespace sift {

// A set of row indices answering "is r in it, and how many before it" in constant time: a
// bit per row and a count per 64 rows. A binary search over the indices was half of
// predict's time (changed rows of a checkpoint, kept ids of a --cutoff export).
class RankedRows {
 public:
  RankedRows() = default;
  RankedRows(int64_t rows, const std::vector<int64_t>& indices);
  // The position of r among the indices, or -1 when it is not one of them.
  int64_t position(int64_t r) const {
    if (r < 0 || static_cast<size_t>(r / 64) >= bits_.size()) return -1;
    const auto w = static_cast<size_t>(r / 64);
    const uint64_t bit = uint64_t{1} << (r % 64);
    if ((bits_[w] & bit) == 0) return -1;
    return before_[w] + __builtin_popcountll(bits_[w] & (bit - 1));
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<int64_t> before_;  // indices before each word of bits_
};

// A product-quantized table as `sift export --quantize pq` stores it: per row one code per
// sub-vector of `dsub` values, a codebook of 256 centroids per sub-vector, and with
// --qnorm each row's norm (applied as the export's forward does: centroid x norm).
struct PqRows {
  int64_t dsub = 2;
  std::vector<uint8_t> codes;    // rows x subs
  std::vector<float> centroids;  // (subs x 256) x dsub
  std::vector<int64_t> sub;      // subs: each sub-vector's first centroid (j x 256)
  std::vector<float> norms;      // rows, or empty
};

// A [rows, width] float table: dense, its uniform fill with the rows that differ (a
// checkpoint's changed rows, kept as stored: a fastText table of 2M rows whose training
// changed a few thousand is never built in full), or product-quantized (an export).
class FloatTable {
 public:
  FloatTable() = default;
  static FloatTable dense(int64_t rows, int64_t width, std::vector<float> values);
  static FloatTable filled(int64_t rows, int64_t width, ChangedRows changed);
  static FloatTable product_quantized(int64_t rows, int64_t width, PqRows pq);
  int64_t rows() const { return rows_; }
  int64_t width() const { return width_; }
  // Adds row r to `sum` (width values).
  void add_row(int64_t r, float* sum) const;
  // Writes every row to `out` (rows x width values), each value as stored.
  void copy_to(float* out) const;
  // Whether every stored value is finite (a fill always is).
  bool all_finite() const;

 private:
  FloatTable(int64_t rows, int64_t width) : rows_(rows), width_(width) {}
  int64_t rows_ = 0, width_ = 0;
  std::vector<float> values_;  // dense: rows x width; filled: the changed rows
  RankedRows changed_;         // filled: the rows that differ from the fill
  UniformFill fill_;
  bool filled_ = false;
  std::unique_ptr<PqRows> pq_;  // product-quantized
};

// A fastText model's tensors as read from a checkpoint or an export.
struct FastTextWeights {
  std::optional<FloatTable> embedding;
  std::vector<float> output, bias;  // [rows, output_width], [rows]
  int64_t output_width = 0;
  std::vector<int64_t> label_counts;  // train.loss hs
  std::vector<int32_t> kept_ids;      // --cutoff: the ids kept (one per row), increasing
};

// The "model" section of a fastText checkpoint or export as plain arrays: the one reader of
// the section without LibTorch (`sift predict`, sift-lite's trainer). nullopt with `why` set
// when a tensor is not what a fastText model holds in fp32.
std::optional<FastTextWeights> read_fasttext_weights(const SectionRef& section, std::string* why);

class FastTextPredictor {
 public:
  // The run folder's fastText model, or nullptr with `why` set when this path does not
  // serve it (another model type, a device other than the CPU, weights that are not fp32
  // or not finite): the LibTorch path then runs, and reports any error.
  static std::unique_ptr<FastTextPredictor> open(const std::string& run_dir, std::string* why);
  // The same from a file of `sift export` (fp32, or pq with or without --cutoff and
  // --qnorm; not int8, bf16, --qout or pruned tables, which it declines with `why`).
  static std::unique_ptr<FastTextPredictor> open_export(const std::string& path, std::string* why);

  const RunText& run() const { return run_; }
  TextEncoder& encoder() { return encoder_; }
  bool multi_label() const { return run_.config.data.multi_label; }
  // Single-label: the k most probable labels (id, probability), best first, only those
  // with probability >= threshold (threshold < 0: all).
  LabelProbabilities top_k(const std::vector<int64_t>& ids, int64_t k, double threshold) const;
  // Multi-label: every label's probability (sigmoid of its score).
  std::vector<float> label_probabilities(const std::vector<int64_t>& ids) const;

 private:
  FastTextPredictor(RunText run, TextEncoder encoder)
      : run_(std::move(run)), encoder_(std::move(encoder)) {}
  // The predictor of `w`, or nullptr with `why` when they do not fit `run` (`path`
  // names their file).
  static std::unique_ptr<FastTextPredictor> make(RunText run, FastTextWeights w,
                                                 const std::string& path, std::string* why);
  // Whether this path reads a model of `config` (fastText, on the CPU); `why` if not.
  static bool serves(const SiftConfig& config, std::string* why);
  std::vector<float> hidden(const std::vector<int64_t>& ids) const;
  OutputLayer output_layer() const;
  std::vector<float> scores(const std::vector<float>& h) const;

  RunText run_;
  TextEncoder encoder_;
  FloatTable embedding_;
  std::vector<float> output_;  // [rows, dim]: labels, or hs's labels - 1 tree nodes
  std::vector<float> bias_;
  std::unique_ptr<FastTextLoss> loss_;  // hs: its tree from the label counts
  // --cutoff: the ids whose rows were kept (row i: the i-th); the others leave their bags.
  std::optional<RankedRows> kept_;
};

}  // namespace sift
