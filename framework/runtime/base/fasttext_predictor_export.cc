// FastTextPredictor::open_export: a fastText model from a file of `sift export`, read
// without LibTorch (export_archive.h), checked as load_export checks it (the format, the
// extra files' and the weights' checksums).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "config/loader.h"
#include "core/crc32.h"
#include "core/error.h"
#include "core/scratch_dir.h"
#include "framework/runtime/base/export_archive.h"
#include "framework/runtime/base/export_format.h"
#include "framework/runtime/base/fasttext_predictor.h"

namespace sift {
namespace {

// Reads each tensor once, keeping its CRC-32, so that the weights checksum needs no second
// pass over them (an fp32 table is 81 MB).
class TensorReads {
 public:
  TensorReads(const ExportArchive& archive, const std::map<std::string, ArchiveTensor>& tensors)
      : archive_(archive), tensors_(tensors) {}
  template <class T>
  std::vector<T> read(const ArchiveTensor& t) {
    std::vector<T> out(static_cast<size_t>(t.numel()));
    archive_.read_tensor(t, out.data(), sizeof(T));
    const uint64_t bytes = out.size() * sizeof(T);
    crcs_[&t] = {crc32_update(0, out.data(), bytes), bytes};
    return out;
  }
  // The weights CRC of sift_format.json (each tensor's name, then its bytes, by name);
  // nullopt while a tensor is unread.
  std::optional<uint32_t> weights_crc() const {
    uint32_t crc = 0;
    for (const auto& [name, t] : tensors_) {
      auto it = crcs_.find(&t);
      if (it == crcs_.end()) return std::nullopt;
      crc = crc32_combine(crc32_update(crc, name), it->second.first, it->second.second);
    }
    return crc;
  }

 private:
  const ExportArchive& archive_;
  const std::map<std::string, ArchiveTensor>& tensors_;
  std::map<const ArchiveTensor*, std::pair<uint32_t, uint64_t>> crcs_;
};

// The extra files of the export, by name, and the checked sift_format.json.
nlohmann::json read_extra_files(const ExportArchive& archive, const std::string& path,
                                std::map<std::string, std::string>& files) {
  for (const char* name : {kExportTokenizerFile, kExportLabelsFile, kExportVocabFile,
                           kExportSentencePieceFile, kExportConfigFile, kExportUnicodeFile}) {
    const std::string entry = std::string("extra/") + name;
    if (archive.has(entry)) files[name] = archive.read(entry);
  }
  return check_format(archive.read(std::string("extra/") + kExportFormatFile), path, files);
}

RunText run_text_of(std::map<std::string, std::string>& files, const std::string& path) {
  RunText run;
  ScratchDir scratch;
  run.config = load_config(scratch.write(kExportConfigFile, files.at(kExportConfigFile)));
  std::istringstream labels(files.at(kExportLabelsFile)), vocab(files.at(kExportVocabFile));
  run.labels = LabelSet::load(labels, path + ":" + kExportLabelsFile);
  run.vocab = std::make_shared<Vocab>(Vocab::load(vocab, path + ":" + kExportVocabFile));
  TokenizerType type = TokenizerType::word;
  run.encoder = encoder_options_from_json(files.at(kExportTokenizerFile), path, &type);
  if (type == TokenizerType::sentencepiece) {
    run.pieces = SentencePieceModel::open(
        scratch.write(kExportSentencePieceFile, files.at(kExportSentencePieceFile)));
  }
  return run;
}

// The tensors of an fp32 or pq fastText export, or nullopt with `why`.
std::optional<FastTextWeights> weights_of(TensorReads& reads,
                                          const std::map<std::string, ArchiveTensor>& tensors,
                                          const nlohmann::json& format, std::string* why) {
  const auto find = [&](const std::string& name, const char* type, size_t dims) {
    auto it = tensors.find(name);
    return it != tensors.end() && it->second.type == type && it->second.shape.size() == dims
               ? &it->second
               : nullptr;
  };
  FastTextWeights w;
  const ArchiveTensor* out = find("output_weight", "Float", 2);
  const ArchiveTensor* bias = find("output_bias", "Float", 1);
  size_t known = 2;
  if (const ArchiveTensor* table = find("embedding_weight", "Float", 2)) {
    w.embedding = FloatTable::dense(table->shape[0], table->shape[1], reads.read<float>(*table));
    ++known;
  } else if (const ArchiveTensor* codes = find("embedding_weight_codes", "Byte", 2)) {
    const ArchiveTensor* centroids = find("embedding_weight_centroids", "Float", 2);
    const ArchiveTensor* sub = find("embedding_weight_sub", "Long", 1);
    const ArchiveTensor* norm_codes = find("embedding_weight_norm_codes", "Byte", 2);
    const ArchiveTensor* norm_centroids = find("embedding_weight_norm_centroids", "Float", 2);
    if (centroids == nullptr || sub == nullptr ||
        (norm_codes == nullptr) != (norm_centroids == nullptr)) {
      *why = "an incomplete product-quantized table";
      return std::nullopt;
    }
    PqRows pq;
    pq.dsub = centroids->shape[1];
    pq.codes = reads.read<uint8_t>(*codes);
    pq.centroids = reads.read<float>(*centroids);
    pq.sub = reads.read<int64_t>(*sub);
    const int64_t rows = codes->shape[0];
    known += 3;
    if (norm_codes != nullptr) {
      const std::vector<uint8_t> n = reads.read<uint8_t>(*norm_codes);
      const std::vector<float> c = reads.read<float>(*norm_centroids);
      for (uint8_t code : n) pq.norms.push_back(c.at(code));
      known += 2;
    }
    const int64_t width = static_cast<int64_t>(pq.sub.size()) * pq.dsub;
    w.embedding = FloatTable::product_quantized(rows, width, std::move(pq));
    if (const ArchiveTensor* kept = find("embedding_kept_ids", "Int", 1)) {
      // --cutoff drops the ids whose rows were cut from their bags (fasttext_script.cc).
      if (format.value("pq", nlohmann::json::object()).value("cutoff", 0) <= 0) {
        *why = "kept ids without --cutoff";
        return std::nullopt;
      }
      w.kept_ids = reads.read<int32_t>(*kept);
      if (w.kept_ids.empty() || w.kept_ids[0] < 0 ||
          std::adjacent_find(w.kept_ids.begin(), w.kept_ids.end(),
                             [](int32_t a, int32_t b) { return a >= b; }) != w.kept_ids.end()) {
        *why = "kept ids out of order";
        return std::nullopt;
      }
      ++known;
    }
  }
  // hs: the label counts, whose tree is searched as a run folder's is; the tree's levels,
  // which the export's own forward walks, are read for the weights' checksum only.
  if (const ArchiveTensor* counts = find("label_counts", "Long", 1)) {
    w.label_counts = reads.read<int64_t>(*counts);
    ++known;
    for (const char* level : {"hs_nodes", "hs_parents", "hs_steps"}) {
      if (const ArchiveTensor* t = find(level, "Long", 1)) {
        reads.read<int64_t>(*t);
        ++known;
      }
    }
  }
  if (!w.embedding || out == nullptr || bias == nullptr || known != tensors.size()) {
    *why = "tensors this path does not read (int8, bf16, --qout or a pruned table)";
    return std::nullopt;
  }
  w.output = reads.read<float>(*out);
  w.output_width = out->shape[1];
  w.bias = reads.read<float>(*bias);
  if (w.output_width != w.embedding->width() ||
      w.output.size() != w.bias.size() * static_cast<size_t>(w.output_width)) {
    *why = "the weights are not a fastText model's";
    return std::nullopt;
  }
  return w;
}

}  // namespace

std::unique_ptr<FastTextPredictor> FastTextPredictor::open_export(const std::string& path,
                                                                  std::string* why) {
  const ExportArchive archive(path);
  std::map<std::string, std::string> files;
  const nlohmann::json format = read_extra_files(archive, path, files);
  const std::string quantize = format.value("quantize", "");
  if (format.value("model", "") != "fasttext" || (quantize != "none" && quantize != "pq")) {
    *why = fmt::format("a {} export, --quantize {}", format.value("model", "?"), quantize);
    return nullptr;
  }
  RunText run = run_text_of(files, path);
  if (!serves(run.config, why)) return nullptr;
  const std::map<std::string, ArchiveTensor> tensors = archive.tensors();
  TensorReads reads(archive, tensors);
  std::optional<FastTextWeights> w = weights_of(reads, tensors, format, why);
  if (!w) return nullptr;
  if (format.value("crc32", nlohmann::json::object()).value("weights", uint32_t{0}) !=
      reads.weights_crc()) {
    *why = "the weights do not match their checksum";
    return nullptr;
  }
  return make(std::move(run), std::move(*w), path, why);
}

}  // namespace sift
