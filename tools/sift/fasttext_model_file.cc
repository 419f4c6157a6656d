#include "tools/sift/fasttext_model_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace sift::cli {
namespace {

constexpr int32_t kFastTextMagic = 793712314;
constexpr int32_t kFastTextVersion = 12;
constexpr int64_t kCentroids = 256;  // fastText's ksub: one byte per code

class BinReader {
 public:
  explicit BinReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw Error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  template <class T>
  T read(const char* what) {
    T value{};
    in_.read(reinterpret_cast<char*>(&value), sizeof(T));
    if (!in_) truncated(what);
    return value;
  }
  std::string read_cstring(const char* what) {
    std::string s;
    for (;;) {
      const int c = in_.get();
      if (c == EOF) truncated(what);
      if (c == 0) return s;
      s.push_back(static_cast<char>(c));
    }
  }
  template <class T>
  void read_array(T* out, int64_t count, const char* what) {
    in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(count * sizeof(T)));
    if (!in_) truncated(what);
  }
  template <class T>
  std::vector<T> read_vector(int64_t count, const char* what) {
    std::vector<T> v(static_cast<size_t>(count));
    read_array(v.data(), count, what);
    return v;
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(fmt::format("{}: {}", path_, message));
  }

 private:
  [[noreturn]] void truncated(const char* what) const {
    fail(fmt::format("file ends inside the {} (a truncated or non-fastText file)", what));
  }
  std::string path_;
  std::ifstream in_;
};

FastTextArgs read_args(BinReader& in, int32_t version) {
  FastTextArgs args{};
  for (int32_t* field :
       {&args.dim, &args.ws, &args.epoch, &args.min_count, &args.neg, &args.word_ngrams, &args.loss,
        &args.model, &args.bucket, &args.minn, &args.maxn, &args.lr_update_rate}) {
    *field = in.read<int32_t>("args");
  }
  args.t = in.read<double>("args");
  if (version == 11) args.maxn = 0;  // as fastText: version 11 supervised models had no subwords
  if (args.model != 3) {
    in.fail(
        "an unsupervised (word-vector) model; only supervised classifiers "
        "(fasttext supervised) can be imported");
  }
  if (args.loss < kFastTextLossHs || args.loss > kFastTextLossOva)
    in.fail(fmt::format("unknown loss {} in the args", args.loss));
  if (args.maxn > 0 && (args.minn < 0 || args.minn > args.maxn || args.maxn > 16)) {
    in.fail(
        fmt::format("inconsistent character n-grams (-minn {} -maxn {})", args.minn, args.maxn));
  }
  const bool hashed = args.word_ngrams > 1 || args.maxn > 0;
  if (args.word_ngrams < 1 || args.dim < 1 || (hashed && args.bucket < 1)) {
    in.fail(fmt::format("inconsistent args (dim {}, wordNgrams {}, bucket {})", args.dim,
                        args.word_ngrams, args.bucket));
  }
  return args;
}

// Words first (type 0), then labels (type 1), each in fastText's id order; then pruneidx.
void read_dictionary(BinReader& in, FastTextModel& m) {
  const auto size = in.read<int32_t>("dictionary");
  const auto nwords = in.read<int32_t>("dictionary");
  const auto nlabels = in.read<int32_t>("dictionary");
  in.read<int64_t>("dictionary");  // ntokens
  const auto pruneidx_size = in.read<int64_t>("dictionary");
  if (size != nwords + nlabels || nwords < 1 || nlabels < 1) {
    in.fail(
        fmt::format("dictionary of {} entries with {} words and {} labels", size, nwords, nlabels));
  }
  for (int32_t i = 0; i < size; ++i) {
    std::string word = in.read_cstring("dictionary");
    const auto count = in.read<int64_t>("dictionary");
    const auto type = in.read<int8_t>("dictionary");
    if (type != (i < nwords ? 0 : 1))
      in.fail(fmt::format("dictionary entry {} has type {}", i, type));
    (i < nwords ? m.words : m.labels).push_back({std::move(word), count});
  }
  m.pruned = pruneidx_size >= 0;
  for (int64_t i = 0; i < pruneidx_size; ++i) {
    const auto bucket = in.read<int32_t>("dictionary's pruned n-grams");
    const auto row = in.read<int32_t>("dictionary's pruned n-grams");
    if (bucket < 0 || bucket >= m.args.bucket || row < 0 || row >= pruneidx_size) {
      in.fail(fmt::format("pruned n-gram {} -> row {}: outside the {} buckets or {} rows", bucket,
                          row, m.args.bucket, pruneidx_size));
    }
    m.pruneidx.emplace_back(bucket, row);
  }
}

// One ProductQuantizer: its sizes, checked against the matrix's `cols`, and centroids.
void read_quantizer(BinReader& in, int64_t cols, FastTextQuantMatrix& q, bool norms) {
  const char* what = norms ? "norms' quantizer" : "product quantizer";
  const auto dim = in.read<int32_t>(what);
  const auto nsubq = in.read<int32_t>(what);
  const auto dsub = in.read<int32_t>(what);
  const auto lastdsub = in.read<int32_t>(what);
  const int64_t want = norms ? 1 : cols;
  if (dim != want || dsub < 1 || lastdsub < 1 || lastdsub > dsub || nsubq < 1 ||
      int64_t{nsubq - 1} * dsub + lastdsub != dim) {
    in.fail(fmt::format("{} of dim {}, {} sub-vectors of {} (last {}); the matrix has {} columns",
                        what, dim, nsubq, dsub, lastdsub, want));
  }
  std::vector<float> centroids = in.read_vector<float>(int64_t{dim} * kCentroids, what);
  if (norms) {
    q.norm_centroids = std::move(centroids);
    return;
  }
  q.nsubq = nsubq;
  q.dsub = dsub;
  q.lastdsub = lastdsub;
  q.centroids = std::move(centroids);
}

FastTextQuantMatrix read_quant_matrix(BinReader& in, const char* what) {
  FastTextQuantMatrix q;
  q.qnorm = in.read<uint8_t>(what) != 0;
  q.rows = in.read<int64_t>(what);
  q.cols = in.read<int64_t>(what);
  const auto codesize = in.read<int32_t>(what);
  if (q.rows < 1 || q.cols < 1 || codesize < q.rows) {
    in.fail(fmt::format("quantized {} of {} x {} with {} codes", what, q.rows, q.cols, codesize));
  }
  q.codes = in.read_vector<uint8_t>(codesize, what);
  read_quantizer(in, q.cols, q, /*norms=*/false);
  if (int64_t{codesize} != q.rows * q.nsubq) {
    in.fail(fmt::format("quantized {}: {} codes for {} rows of {} sub-vectors", what, codesize,
                        q.rows, q.nsubq));
  }
  if (q.qnorm) {
    q.norm_codes = in.read_vector<uint8_t>(q.rows, what);
    read_quantizer(in, q.cols, q, /*norms=*/true);
  }
  return q;
}

FastTextMatrix read_matrix(BinReader& in, bool quantized, const char* what,
                           const DenseTarget& dense) {
  FastTextMatrix m;
  if (quantized) {
    m.quantized = read_quant_matrix(in, what);
    m.rows = m.quantized->rows;
    m.cols = m.quantized->cols;
    return m;
  }
  m.rows = in.read<int64_t>(what);
  m.cols = in.read<int64_t>(what);
  if (m.rows < 1 || m.cols < 1) in.fail(fmt::format("{} of {} x {}", what, m.rows, m.cols));
  in.read_array(dense(what, m.rows, m.cols), m.rows * m.cols, what);
  return m;
}

// The input matrix's rows: the words, then every bucket, or the buckets -cutoff kept.
void check_sizes(const BinReader& in, const FastTextModel& m) {
  const int64_t words = static_cast<int64_t>(m.words.size());
  const int64_t kept =
      m.pruned ? static_cast<int64_t>(m.pruneidx.size()) : std::max<int64_t>(m.args.bucket, 0);
  if (m.input.cols != m.args.dim || m.input.rows != words + kept) {
    in.fail(fmt::format("input matrix is {} x {}, expected {} x {}", m.input.rows, m.input.cols,
                        words + kept, m.args.dim));
  }
  const int64_t labels = static_cast<int64_t>(m.labels.size());
  if (m.output.rows != labels || m.output.cols != m.args.dim) {
    in.fail(fmt::format("output matrix is {} x {}, expected {} x {}", m.output.rows, m.output.cols,
                        labels, m.args.dim));
  }
}

}  // namespace

const char* fasttext_loss_name(int32_t loss) {
  // fastText's loss_name codes: hs 1, ns 2, softmax 3, ova 4.
  static const char* const kNames[] = {"unknown", "hs", "ns", "softmax", "ova"};
  return loss >= kFastTextLossHs && loss <= kFastTextLossOva ? kNames[loss] : kNames[0];
}

FastTextModel read_fasttext_model(const std::string& path, const DenseTarget& dense) {
  BinReader in(path);
  FastTextModel m;
  if (in.read<int32_t>("header") != kFastTextMagic) {
    in.fail("not a fastText model (wrong magic number)");
  }
  m.version = in.read<int32_t>("header");
  if (m.version > kFastTextVersion || m.version < 11) {
    in.fail(
        fmt::format("fastText model format version {}; this importer reads 11 and 12", m.version));
  }
  m.args = read_args(in, m.version);
  read_dictionary(in, m);
  const bool quantized = in.read<uint8_t>("quantization flag") != 0;
  m.input = read_matrix(in, quantized, "input matrix", dense);
  const bool qout = in.read<uint8_t>("output quantization flag") != 0;
  if (qout && !quantized) in.fail("a quantized output matrix without a quantized input matrix");
  m.output = read_matrix(in, qout, "output matrix", dense);
  check_sizes(in, m);
  return m;
}

}  // namespace sift::cli
