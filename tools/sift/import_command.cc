// `sift import fasttext MODEL.bin --out RUN`: a fastText supervised model as a Sift run
// folder. The .bin layout (fastText 0.9.x, FastText::saveModel): int32 magic 793712314,
// int32 version 12; Args (12 int32 and a double); Dictionary (int32 size, nwords, nlabels,
// int64 ntokens, pruneidx_size; per entry a NUL-terminated word, int64 count, int8 type;
// pruneidx pairs); bool quantized; input matrix (int64 m, n; m x n floats: nwords word rows,
// then bucket n-gram rows); bool qout; output matrix (nlabels x dim). Little-endian, as the
// machines fastText runs on write it.
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/open_for_writing.h"
#include "datasets/labels.h"
#include "datasets/text_encoder.h"
#include "datasets/vocab.h"
#include "framework/runtime/checkpoint.h"
#include "framework/runtime/hf_model.h"
#include "framework/runtime/run_folder.h"
#include "framework/train/training_state.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

constexpr int32_t kFastTextMagic = 793712314;
constexpr int32_t kFastTextVersion = 12;
constexpr const char* kFastTextLabelPrefix = "__label__";  // fastText's default -label

struct ImportArgs {
  std::string format;
  std::string model;
  std::string out;
  bool force = false;
  std::vector<std::string> labels;  // hf: a new head's labels, for a folder without one
};

// Makes the run folder `a.out`, refusing one that holds a model unless --force.
void make_run_folder(const ImportArgs& a) {
  if (std::filesystem::exists(std::filesystem::path(a.out) / kBestCheckpointFile) && !a.force) {
    throw Error(fmt::format("{} already holds a model; give --force to replace it", a.out));
  }
  check_own_folder(a.out, "--out", /*create=*/true);
}

// config.yaml, labels.txt, the vocabulary and best.ckpt of an imported run.
void write_imported_run(const ImportArgs& a, const SiftConfig& config,
                        const std::vector<std::string>& labels, const Vocab& vocab,
                        const Checkpoint& c) {
  write_file_atomically(run_file(a.out, kConfigFile), dump_config(config));
  LabelSet(labels, a.model).save(run_file(a.out, kLabelsFile));
  vocab.save(run_file(a.out, kVocabFile));
  save_checkpoint(run_file(a.out, kBestCheckpointFile), c);
}

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
  void read_floats(float* out, int64_t count, const char* what) {
    in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(count * sizeof(float)));
    if (!in_) truncated(what);
  }
  void skip(int64_t bytes, const char* what) {
    in_.seekg(bytes, std::ios::cur);
    if (!in_) truncated(what);
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

struct FastTextArgs {
  int32_t dim, ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn,
      lr_update_rate;
  double t;
};

// fastText's loss_name values in its args.
constexpr int32_t kLossHs = 1, kLossNs = 2, kLossOva = 4;

const char* loss_name(int32_t loss) {
  switch (loss) {
    case 1:
      return "hs";
    case 2:
      return "ns";
    case 3:
      return "softmax";
    case 4:
      return "ova";
    default:
      return "unknown";
  }
}

void run_import(const ImportArgs& a) {
  namespace fs = std::filesystem;
  BinReader in(a.model);
  const auto magic = in.read<int32_t>("header");
  if (magic != kFastTextMagic) in.fail("not a fastText model (wrong magic number)");
  const auto version = in.read<int32_t>("header");
  if (version > kFastTextVersion || version < 11) {
    in.fail(
        fmt::format("fastText model format version {}; this importer reads 11 and 12", version));
  }
  FastTextArgs args{};
  args.dim = in.read<int32_t>("args");
  args.ws = in.read<int32_t>("args");
  args.epoch = in.read<int32_t>("args");
  args.min_count = in.read<int32_t>("args");
  args.neg = in.read<int32_t>("args");
  args.word_ngrams = in.read<int32_t>("args");
  args.loss = in.read<int32_t>("args");
  args.model = in.read<int32_t>("args");
  args.bucket = in.read<int32_t>("args");
  args.minn = in.read<int32_t>("args");
  args.maxn = in.read<int32_t>("args");
  args.lr_update_rate = in.read<int32_t>("args");
  args.t = in.read<double>("args");
  if (version == 11) args.maxn = 0;  // as fastText: version 11 supervised models had no subwords
  if (args.model != 3) {
    in.fail(
        "an unsupervised (word-vector) model; only supervised classifiers "
        "(fasttext supervised) can be imported");
  }
  if (args.loss < kLossHs || args.loss > kLossOva)
    in.fail(fmt::format("unknown loss {} in the args", args.loss));
  if (args.maxn > 0 && (args.minn < 0 || args.minn > args.maxn || args.maxn > 16)) {
    in.fail(fmt::format("inconsistent character n-grams (-minn {} -maxn {})", args.minn, args.maxn));
  }
  const bool hashed = args.word_ngrams > 1 || args.maxn > 0;
  if (args.word_ngrams < 1 || args.dim < 1 || (hashed && args.bucket < 1)) {
    in.fail(fmt::format("inconsistent args (dim {}, wordNgrams {}, bucket {})", args.dim,
                        args.word_ngrams, args.bucket));
  }

  // Dictionary: words first (type 0), then labels (type 1), each in fastText's id order.
  const auto size = in.read<int32_t>("dictionary");
  const auto nwords = in.read<int32_t>("dictionary");
  const auto nlabels = in.read<int32_t>("dictionary");
  in.read<int64_t>("dictionary");  // ntokens
  const auto pruneidx_size = in.read<int64_t>("dictionary");
  if (size != nwords + nlabels || nwords < 1 || nlabels < 1) {
    in.fail(
        fmt::format("dictionary of {} entries with {} words and {} labels", size, nwords, nlabels));
  }
  Vocab vocab;
  std::vector<std::string> labels;
  std::vector<int64_t> label_counts;  // hs builds its tree from them, ns its draws
  for (int32_t i = 0; i < size; ++i) {
    std::string word = in.read_cstring("dictionary");
    const auto count = in.read<int64_t>("dictionary");
    const auto type = in.read<int8_t>("dictionary");
    if (type != (i < nwords ? 0 : 1))
      in.fail(fmt::format("dictionary entry {} has type {}", i, type));
    if (i < nwords) {
      vocab.add(std::move(word), static_cast<uint64_t>(count));
    } else {
      const std::string prefix = kFastTextLabelPrefix;
      if (word.compare(0, prefix.size(), prefix) != 0 || word.size() == prefix.size()) {
        in.fail(
            fmt::format("label '{}' does not start with {} (models trained with another "
                        "-label prefix are not supported)",
                        word, prefix));
      }
      labels.push_back(word.substr(prefix.size()));
      label_counts.push_back(count);
    }
  }
  if (pruneidx_size >= 0) {
    in.fail("a quantized/pruned model (.ftz); import the .bin that `fasttext supervised` wrote");
  }
  if (in.read<uint8_t>("quantization flag") != 0) {
    in.fail("a quantized model (.ftz); import the .bin that `fasttext supervised` wrote");
  }

  // Input matrix: word rows, then bucket rows. Sift's ids: <pad>, <unk>, words, buckets.
  const auto rows = in.read<int64_t>("input matrix");
  const auto cols = in.read<int64_t>("input matrix");
  const int64_t buckets = hashed ? args.bucket : 0;
  if (cols != args.dim || rows != nwords + std::max<int64_t>(args.bucket, 0)) {
    in.fail(fmt::format("input matrix is {} x {}, expected {} x {}", rows, cols,
                        nwords + int64_t{args.bucket}, args.dim));
  }
  const int64_t specials = vocab.size() - nwords;  // <pad>, <unk>
  torch::Tensor embedding = torch::zeros({specials + nwords + buckets, cols});
  in.read_floats(embedding.data_ptr<float>() + specials * cols, (nwords + buckets) * cols,
                 "input matrix");
  if (rows > nwords + buckets) in.skip((rows - nwords - buckets) * cols * 4, "input matrix");
  if (in.read<uint8_t>("output quantization flag") != 0) in.fail("a quantized output matrix");
  const auto out_rows = in.read<int64_t>("output matrix");
  const auto out_cols = in.read<int64_t>("output matrix");
  if (out_rows != nlabels || out_cols != args.dim) {
    in.fail(fmt::format("output matrix is {} x {}, expected {} x {}", out_rows, out_cols, nlabels,
                        args.dim));
  }
  torch::Tensor output = torch::empty({out_rows, out_cols});
  in.read_floats(output.data_ptr<float>(), out_rows * out_cols, "output matrix");
  // hs: fastText keeps a row per label, of which the labels - 1 internal nodes of the tree
  // use the first (node labels + r is row r), as Sift's hs output layer holds them.
  const char* loss = loss_name(args.loss);
  if (args.loss == kLossHs) {
    if (nlabels < 2) in.fail("a hierarchical softmax (-loss hs) over fewer than two labels");
    output = output.narrow(0, 0, nlabels - 1).contiguous();
  }

  const LabelSet checked(labels, a.model);  // before anything is written
  make_run_folder(a);
  SiftConfig config = load_config("");
  const std::vector<std::string> overrides = {
      "model.type=fasttext",
      fmt::format("model.dim={}", args.dim),
      fmt::format("model.ngrams={}", args.word_ngrams),
      fmt::format("model.buckets={}", hashed ? args.bucket : config.model.buckets),
      fmt::format("model.minn={}", args.maxn > 0 ? args.minn : 0),
      fmt::format("model.maxn={}", std::max(0, args.maxn)),
      "tokenizer.type=word",
      "tokenizer.lowercase=false",
      "tokenizer.split_punctuation=false",
      "tokenizer.fasttext_compat=true",
      fmt::format("tokenizer.min_count={}", std::max(1, args.min_count)),
      "data.format=fasttext",
      // fastText keeps no training data path; this names where the weights came from.
      "data.train.path=" + yaml_quoted_list({"fasttext-import:" + fs::absolute(a.model).string()}),
      fmt::format("train.epochs={}", args.epoch),
      fmt::format("train.loss={}", loss),
  };
  for (const auto& o : overrides) apply_override(config, o);
  if (args.loss == kLossNs) apply_override(config, fmt::format("train.neg={}", args.neg));
  check_options(config);
  Checkpoint c;
  c.meta = checkpoint_meta("fasttext", nlabels, 0, 0);
  c.meta["imported_from"] = {{"format", "fasttext"},
                             {"path", fs::absolute(a.model).string()},
                             {"version", version},
                             {"loss", loss}};
  // FastTextImpl's parameter names: embedding (EmbeddingBag, mean), output (Linear); hs
  // and ns keep the label counts (the tree, the draws) as the buffer label_counts.
  c.tensor_blobs["model"] = {{"embedding.weight", embedding},
                             {"output.weight", output},
                             {"output.bias", torch::zeros({output.size(0)})}};
  if (args.loss == kLossHs || args.loss == kLossNs) {
    c.tensor_blobs["model"].emplace_back("label_counts",
                                         torch::tensor(label_counts, torch::kInt64));
  }
  write_imported_run(a, config, labels, vocab, c);
  std::cout << fmt::format(
      "imported {}: {} words, {} labels, dim {}, wordNgrams {}, bucket {}, loss {} -> {}\n",
      a.model, nwords, nlabels, args.dim, args.word_ngrams, buckets, loss, a.out);
}

// The labels of a Hugging Face folder's head, or a new head's from --labels.
std::vector<std::string> hf_labels(const ImportArgs& a, HfModel& m) {
  if (a.labels.empty()) {
    if (m.labels.empty()) {
      throw Error(fmt::format(
          "{} has no classification head (a base model): give --labels A,B,... to start a new "
          "head, then fine-tune the run (train.init_from)",
          a.model));
    }
    return m.labels;
  }
  const int64_t rows = static_cast<int64_t>(a.labels.size());
  if (!m.labels.empty() && rows != static_cast<int64_t>(m.labels.size())) {
    throw Error(
        fmt::format("--labels: {} labels, the folder's head has {}", rows, m.labels.size()));
  }
  if (m.labels.empty()) add_new_linear(m, "output", rows, m.model.dim);
  return a.labels;
}

SiftConfig hf_config(const ImportArgs& a, const HfModel& m, const std::string& vocab) {
  namespace fs = std::filesystem;
  SiftConfig config = load_config("");
  const ModelConfig& o = m.model;
  for (const std::string& s : std::vector<std::string>{
           "model.type=bert", fmt::format("model.dim={}", o.dim),
           fmt::format("model.layers={}", o.layers), fmt::format("model.heads={}", o.heads),
           fmt::format("model.ff_dim={}", o.ff_dim),
           fmt::format("model.max_positions={}", o.max_positions),
           fmt::format("model.token_types={}", o.token_types),
           fmt::format("model.embedding_dim={}", o.embedding_dim),
           fmt::format("model.layer_norm_eps={}", o.layer_norm_eps),
           "model.head_activation=" + o.head_activation, "model.pooling=cls",
           fmt::format("model.dropout={}", o.dropout), "tokenizer.type=wordpiece",
           "tokenizer.model=" + yaml_quoted(vocab),
           fmt::format("tokenizer.lowercase={}", m.lowercase),
           fmt::format("data.max_length={}", o.max_positions),
           // Hugging Face keeps no training data path; this names where the weights came from.
           "data.train.path=" + yaml_quoted_list({"hf-import:" + fs::absolute(a.model).string()}),
           "train.optimizer.type=adamw", "train.optimizer.lr=3e-5"}) {
    apply_override(config, s);
  }
  check_options(config);
  return config;
}

void run_import_hf(const ImportArgs& a) {
  HfModel m = read_hf_model(a.model);
  const std::vector<std::string> labels = hf_labels(a, m);
  make_run_folder(a);
  const std::string vocab = run_file(a.out, kTokenizerModelFile);
  copy_file_atomically(m.vocab_path, vocab);
  const SiftConfig config = hf_config(a, m, std::filesystem::absolute(vocab).string());
  Checkpoint c;
  c.meta = checkpoint_meta("bert", static_cast<int64_t>(labels.size()), 0, 0);
  c.meta["imported_from"] = {{"format", "hf"},
                             {"path", std::filesystem::absolute(a.model).string()},
                             {"model_type", m.model_type}};
  for (const NamedTensor& t : m.tensors) {
    c.tensor_blobs["model"].emplace_back(t.name, torch::tensor(t.values).view(t.shape).clone());
  }
  write_imported_run(a, config, labels, Vocab(), c);
  std::cout << fmt::format(
      "imported {} ({}): {} layers, dim {}, {} heads, {} WordPiece tokens, {} labels -> {}\n",
      a.model, m.model_type, m.model.layers, m.model.dim, m.model.heads, m.vocab_size,
      labels.size(), a.out);
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import",
      "Turn another tool's model into a Sift run folder (fastText supervised .bin; a Hugging "
      "Face BERT, DistilBERT or ELECTRA folder).");
  cmd->add_option("format", args->format, "The model's format: fasttext or hf")
      ->required()
      ->check(CLI::IsMember({"fasttext", "hf"}));
  cmd->add_option("model", args->model,
                  "The fastText model (.bin from `fasttext supervised`), or the Hugging Face model "
                  "folder (config.json, model.safetensors, vocab.txt)")
      ->required();
  cmd->add_option("--labels", args->labels,
                  "hf: labels of a new classification head, for a folder without one")
      ->delimiter(',');
  cmd->add_option("--out", args->out, "Run folder to write")->required();
  cmd->add_flag("--force", args->force, "Replace the model in an existing run folder");
  cmd->callback([args] { args->format == "hf" ? run_import_hf(*args) : run_import(*args); });
}

}  // namespace sift::cli
