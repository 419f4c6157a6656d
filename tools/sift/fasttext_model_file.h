// A fastText model file as `fasttext` writes it: `supervised`'s .bin, and `quantize`'s .ftz
// (fastText 0.9.x, FastText::saveModel, little-endian). The layout: int32 magic 793712314,
// int32 version 12; Args (12 int32 and a double); Dictionary (int32 size, nwords, nlabels,
// int64 ntokens, pruneidx_size; per entry a NUL-terminated word, int64 count, int8 type;
// pruneidx_size int32 pairs); bool quantized; the input matrix; bool qout; the output
// matrix. A dense matrix is int64 m, n and m x n floats; a quantized one (QuantMatrix) is
// bool qnorm, int64 m, n, int32 codesize, codesize code bytes, its ProductQuantizer (int32
// dim, nsubq, dsub, lastdsub; dim x 256 floats of centroids) and, with qnorm, m norm code
// bytes and the norms' ProductQuantizer (dim 1).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sift::cli {

struct FastTextArgs {
  int32_t dim, ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn,
      lr_update_rate;
  double t;
  // fastText's -label: not in the file (Args::save leaves it out), so the reader's caller
  // says it (`sift import fasttext --label`).
  std::string label = "__label__";
};

// fastText's loss_name values in its args.
inline constexpr int32_t kFastTextLossHs = 1, kFastTextLossNs = 2, kFastTextLossOva = 4;

// "hs", "ns", "softmax", "ova" (or "unknown").
const char* fasttext_loss_name(int32_t loss);

struct FastTextEntry {
  std::string word;
  int64_t count;
};

// A product-quantized matrix (fastText's QuantMatrix and ProductQuantizer), as stored.
struct FastTextQuantMatrix {
  bool qnorm = false;
  int64_t rows = 0, cols = 0;
  // cols = (nsubq - 1) * dsub + lastdsub; lastdsub == dsub when dsub divides cols.
  int32_t nsubq = 0, dsub = 0, lastdsub = 0;
  std::vector<uint8_t> codes;  // rows x nsubq
  // cols x 256: sub-vector m's centroid k at (m * 256 + k) * dsub, the last sub-vector's at
  // m * 256 * dsub + k * lastdsub.
  std::vector<float> centroids;
  std::vector<uint8_t> norm_codes;    // rows, with qnorm
  std::vector<float> norm_centroids;  // 256, with qnorm
};

// Where the reader puts a dense matrix of rows x cols floats ("input" or "output"): memory
// of the caller's, so that a 2M-row table is read straight into its tensor.
using DenseTarget = std::function<float*(const char* matrix, int64_t rows, int64_t cols)>;

struct FastTextMatrix {
  int64_t rows = 0, cols = 0;
  std::optional<FastTextQuantMatrix> quantized;  // otherwise read into the DenseTarget
};

struct FastTextModel {
  int32_t version = 0;
  FastTextArgs args{};
  std::vector<FastTextEntry> words, labels;  // fastText's id order; labels as written
  // -cutoff (a pruned dictionary): the n-gram buckets kept, each with its row among the
  // input matrix's rows after the words' (fastText's pruneidx).
  bool pruned = false;
  std::vector<std::pair<int32_t, int32_t>> pruneidx;
  FastTextMatrix input, output;
};

// Reads a supervised model. sift::Error naming the file and what is wrong for a file that
// is not a fastText model, of another format version, an unsupervised model, truncated, or
// inconsistent (sizes that do not match its args and dictionary).
FastTextModel read_fasttext_model(const std::string& path, const DenseTarget& dense);

}  // namespace sift::cli
