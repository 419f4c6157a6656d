#include "tools/sift/import_fasttext.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "config/loader.h"
#include "core/error.h"
#include "datasets/encoder_config.h"
#include "datasets/labels.h"
#include "datasets/vocab.h"
#include "framework/runtime/checkpoint.h"
#include "framework/runtime/export.h"
#include "framework/runtime/loss.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/base/training_state.h"
#include "models/base/fasttext_forward.h"
#include "tools/sift/fasttext_model_file.h"
#include "tools/sift/fasttext_pq.h"
#include "tools/sift/imported_run.h"

namespace sift::cli {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSpecials = Vocab::kUnk + 1;  // Sift's <pad> and <unk>

// The dense matrices of a .bin, read straight into the checkpoint's tensors: the input
// rows after Sift's <pad> and <unk>.
struct DenseTensors {
  torch::Tensor input, output;
  float* target(const std::string& matrix, int64_t rows, int64_t cols) {
    if (matrix == "input matrix") {
      input = torch::zeros({kSpecials + rows, cols});
      return input.data_ptr<float>() + kSpecials * cols;
    }
    output = torch::empty({rows, cols});
    return output.data_ptr<float>();
  }
};

// The labels without their -label prefix.
std::vector<std::string> label_names(const FastTextModel& m, const std::string& path) {
  const std::string& prefix = m.args.label;
  std::vector<std::string> labels;
  for (const FastTextEntry& e : m.labels) {
    if (e.word.compare(0, prefix.size(), prefix) != 0 || e.word.size() == prefix.size()) {
      throw Error(
          fmt::format("{}: label '{}' does not start with {}: give the prefix the model was "
                      "trained with (fastText's -label) as --label",
                      path, e.word, prefix));
    }
    labels.push_back(e.word.substr(prefix.size()));
  }
  const LabelSet checked(labels, path);  // before anything is written
  return labels;
}

Vocab vocab_of(const FastTextModel& m) {
  Vocab vocab;
  for (const FastTextEntry& e : m.words) vocab.add(e.word, static_cast<uint64_t>(e.count));
  return vocab;
}

bool hashed(const FastTextArgs& args) { return args.word_ngrams > 1 || args.maxn > 0; }

// The buckets Sift's table has after the words: fastText's, when it hashes anything.
int64_t bucket_rows(const FastTextArgs& args) { return hashed(args) ? args.bucket : 0; }

SiftConfig imported_config(const FastTextModel& m, const std::string& path) {
  const FastTextArgs& args = m.args;
  SiftConfig config = load_config("");
  const std::vector<std::string> overrides = {
      "model.type=fasttext",
      fmt::format("model.dim={}", args.dim),
      fmt::format("model.ngrams={}", args.word_ngrams),
      fmt::format("model.buckets={}", hashed(args) ? args.bucket : config.model.buckets),
      fmt::format("model.minn={}", args.maxn > 0 ? args.minn : 0),
      fmt::format("model.maxn={}", std::max(0, args.maxn)),
      "tokenizer.type=word",
      "tokenizer.lowercase=false",
      "tokenizer.split_punctuation=false",
      "tokenizer.fasttext_compat=true",
      fmt::format("tokenizer.min_count={}", std::max(1, args.min_count)),
      "data.format=fasttext",
      // fastText keeps no training data path; this names where the weights came from.
      "data.train.path=" + yaml_quoted_list({"fasttext-import:" + fs::absolute(path).string()}),
      fmt::format("train.epochs={}", args.epoch),
      fmt::format("train.loss={}", fasttext_loss_name(args.loss)),
  };
  for (const auto& o : overrides) apply_override(config, o);
  config.data.label_prefix = args.label;  // as given: no YAML reading of its characters
  if (args.loss == kFastTextLossNs) apply_override(config, fmt::format("train.neg={}", args.neg));
  check_options(config);
  return config;
}

// hs: fastText keeps a row per label, of which the labels - 1 internal nodes of the tree
// use the first (node labels + r is row r), as Sift's hs output layer holds them.
int64_t output_rows(const FastTextModel& m, const std::string& path) {
  const auto labels = static_cast<int64_t>(m.labels.size());
  if (m.args.loss != kFastTextLossHs) return labels;
  if (labels < 2) {
    throw Error(
        fmt::format("{}: a hierarchical softmax (-loss hs) over fewer than two labels", path));
  }
  return labels - 1;
}

// FastTextImpl's parameter names: embedding (EmbeddingBag, mean), output (Linear); hs and
// ns keep the label counts (the tree, the draws) as the buffer label_counts.
Checkpoint imported_checkpoint(const FastTextModel& m, const std::string& path,
                               const torch::Tensor& embedding, const torch::Tensor& output) {
  Checkpoint c;
  const char* loss = fasttext_loss_name(m.args.loss);
  c.meta = checkpoint_meta("fasttext", static_cast<int64_t>(m.labels.size()), 0, 0);
  c.meta["imported_from"] = {{"format", "fasttext"},
                             {"path", fs::absolute(path).string()},
                             {"version", m.version},
                             {"loss", loss}};
  c.tensor_blobs["model"] = {{kFastTextTable, embedding},
                             {kFastTextOutput, output},
                             {kFastTextBias, torch::zeros({output.size(0)})}};
  if (m.args.loss == kFastTextLossHs || m.args.loss == kFastTextLossNs) {
    std::vector<int64_t> counts;  // hs builds its tree from them, ns its draws
    for (const FastTextEntry& e : m.labels) counts.push_back(e.count);
    c.tensor_blobs["model"].emplace_back(kFastTextLabelCounts,
                                         torch::tensor(counts, torch::kInt64));
  }
  return c;
}

std::string summary(const FastTextModel& m) {
  return fmt::format("{} words, {} labels, dim {}, wordNgrams {}, bucket {}, loss {}",
                     m.words.size(), m.labels.size(), m.args.dim, m.args.word_ngrams,
                     bucket_rows(m.args), fasttext_loss_name(m.args.loss));
}

// Sift's row of each of fastText's input rows (word i is Sift's id kSpecials + i, bucket h
// kSpecials + words + h; with -cutoff, row words + j is pruneidx's bucket with j), as
// [fastText rows, Sift rows]; rows Sift does not read (the buckets of a model that hashes
// nothing) are left out.
std::pair<torch::Tensor, torch::Tensor> row_map(const FastTextModel& m) {
  const auto words = static_cast<int64_t>(m.words.size());
  const int64_t buckets = bucket_rows(m.args);
  std::vector<int64_t> ft, sift;
  for (int64_t i = 0; i < words; ++i) {
    ft.push_back(i);
    sift.push_back(kSpecials + i);
  }
  if (m.pruned) {
    for (const auto& [bucket, row] : m.pruneidx) {
      if (bucket >= buckets) continue;
      ft.push_back(words + row);
      sift.push_back(kSpecials + words + bucket);
    }
  } else {
    for (int64_t h = 0; h < buckets; ++h) {
      ft.push_back(words + h);
      sift.push_back(kSpecials + words + h);
    }
  }
  const torch::Tensor s = torch::tensor(sift, torch::kLong);
  const torch::Tensor order = std::get<1>(torch::sort(s));
  return {torch::tensor(ft, torch::kLong).index_select(0, order), s.index_select(0, order)};
}

PqTable select_rows(const PqTable& pq, const torch::Tensor& rows) {
  PqTable out = pq;
  out.codes = pq.codes.index_select(0, rows);
  if (pq.norm_codes.defined()) out.norm_codes = pq.norm_codes.index_select(0, rows);
  return out;
}

// `lead` rows of code 0 before the others: Sift's <pad> and <unk>, which a bag never
// holds (an unknown word leaves its bag), so they are never read.
PqTable with_leading_rows(PqTable pq, int64_t lead) {
  const auto zeros = [lead](const torch::Tensor& codes) {
    return torch::cat({torch::zeros({lead, codes.size(1)}, torch::kUInt8), codes});
  };
  pq.codes = zeros(pq.codes);
  if (pq.norm_codes.defined()) pq.norm_codes = zeros(pq.norm_codes);
  return pq;
}

void import_bin(const FastTextModel& m, DenseTensors& dense, const std::string& path,
                const std::string& out, bool force) {
  const std::vector<std::string> labels = label_names(m, path);
  const SiftConfig config = imported_config(m, path);
  const int64_t rows = kSpecials + static_cast<int64_t>(m.words.size()) + bucket_rows(m.args);
  const torch::Tensor embedding = dense.input.narrow(0, 0, rows).contiguous();
  const torch::Tensor output = dense.output.narrow(0, 0, output_rows(m, path)).contiguous();
  make_run_folder(out, force);
  write_imported_run(out, path, config, labels, vocab_of(m),
                     imported_checkpoint(m, path, embedding, output));
  std::cout << fmt::format("imported {}: {} -> {}\n", path, summary(m), out);
}

// The export file `out`: refused when it is a folder, or exists and not `force`.
void check_export_file(const std::string& out, bool force) {
  if (fs::is_directory(out)) {
    throw Error(fmt::format(
        "--out {}: a folder; a quantized model (.ftz) imports as an export file: give a file "
        "name (model.pt)",
        out));
  }
  if (fs::exists(out) && !force) {
    throw Error(fmt::format("--out {} exists; give --force to replace it", out));
  }
}

// What the import says of the codes it kept.
std::string pq_summary(const FastTextModel& m, const PqTable& input) {
  const FastTextQuantMatrix& q = *m.input.quantized;
  std::string s = fmt::format("product-quantized, dsub {}", q.dsub);
  if (q.lastdsub != q.dsub) {
    s += fmt::format(
        " (its last sub-vector has {} dims: stored as sub-vectors of {}, each with its "
        "sub-vector's code, the same values from {}x the codes)",
        q.lastdsub, input.centroids.size(1), q.dsub / input.centroids.size(1));
  }
  if (q.qnorm) s += ", qnorm";
  if (m.output.quantized) s += ", qout";
  if (m.pruned) s += fmt::format(", cutoff: {} n-gram buckets kept", m.pruneidx.size());
  return s;
}

// The run the .ftz stands for, as load_run would read it from the folder import_bin
// writes, without writing it (an 800 MB table for fastText's 2M buckets): an ordinary
// model, its rows decoded.
ModelBundle imported_bundle(const FastTextModel& m, const std::string& path, const Checkpoint& c) {
  ModelBundle b;
  b.config = imported_config(m, path);
  b.task.labels = LabelSet(label_names(m, path), path);
  b.task.vocab = std::make_shared<Vocab>(vocab_of(m));
  b.task.encoder = encoder_options(b.config, find_model(b.config.model.type).input);
  for (const FastTextEntry& e : m.labels) b.task.label_counts.push_back(e.count);
  b.model = create_model(b.config.model, b.config.train.optimizer, b.task, resolve_loss(b.config));
  torch::NoGradGuard no_grad;
  auto parameters = b.model->named_parameters();
  auto buffers = b.model->named_buffers();
  for (const auto& [name, tensor] : c.tensor_blobs.at("model")) {
    torch::Tensor* target = parameters.find(name);
    if (target == nullptr) target = buffers.find(name);
    if (target == nullptr) throw Error(fmt::format("import: the model has no tensor '{}'", name));
    target->set_data(tensor);
  }
  b.model->eval();
  return b;
}

// A .ftz: the run it stands for, exported with fastText's codes as the pq export's.
void import_ftz(const FastTextModel& m, DenseTensors& dense, const std::string& path,
                const std::string& out, bool force) {
  check_export_file(out, force);
  const PqTable input = pq_table_of(*m.input.quantized);
  const auto [ft_rows, sift_rows] = row_map(m);
  const int64_t rows = kSpecials + static_cast<int64_t>(m.words.size()) + bucket_rows(m.args);
  torch::Tensor embedding = torch::zeros({rows, m.args.dim});
  embedding.index_copy_(0, sift_rows, pq_decode(select_rows(input, ft_rows)));
  const int64_t labels_rows = output_rows(m, path);
  const std::optional<PqTable> out_pq =
      m.output.quantized ? std::optional(select_rows(pq_table_of(*m.output.quantized),
                                                     torch::arange(labels_rows, torch::kLong)))
                         : std::nullopt;
  const torch::Tensor output =
      out_pq ? pq_decode(*out_pq) : dense.output.narrow(0, 0, labels_rows).contiguous();

  const ModelBundle bundle =
      imported_bundle(m, path, imported_checkpoint(m, path, embedding, output));
  ExportOptions options;
  options.quantize = "pq";
  options.dsub = input.centroids.size(1);
  options.qnorm = m.input.quantized->qnorm;
  options.qout = out_pq.has_value();
  PqTable table = select_rows(input, ft_rows);
  if (m.pruned) {  // -cutoff: the ids of the rows it dropped leave their bags
    options.kept_rows = torch::zeros({rows}, torch::kBool).index_fill_(0, sift_rows, true);
    options.cutoff = sift_rows.size(0);
  } else {
    table = with_leading_rows(std::move(table), kSpecials);
  }
  options.pq_given[kFastTextTable] = std::move(table);
  if (out_pq) options.pq_given[kFastTextOutput] = *out_pq;
  const int64_t bytes = export_run(bundle, out, options);
  std::cout << fmt::format("imported {}: {}; {} -> {} ({} bytes, a pq export)\n", path, summary(m),
                           pq_summary(m, input), out, bytes);
}

}  // namespace

void import_fasttext(const std::string& model, const std::string& out, bool force,
                     const std::string& label_prefix) {
  DenseTensors dense;
  FastTextModel m =
      read_fasttext_model(model, [&dense](const char* matrix, int64_t rows, int64_t cols) {
        return dense.target(matrix, rows, cols);
      });
  m.args.label = label_prefix;
  if (m.input.quantized) {
    import_ftz(m, dense, model, out, force);
  } else {
    import_bin(m, dense, model, out, force);
  }
}

}  // namespace sift::cli
