#include "framework/runtime/export.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/crc32.h"
#include "core/error.h"
#include "core/file_bytes.h"
#include "datasets/unicode.h"
#include "framework/runtime/base/export_format.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/export_pq.h"
#include "models/kept_rows.h"
#include "models/model.h"
#include "models/script_writer.h"

namespace sift {
namespace {

// What `saved.save(stream)` writes: the vocabulary's and the labels' files.
template <class T>
std::string saved_bytes(const T& saved) {
  std::ostringstream out;
  saved.save(out);
  return out.str();
}

// BERT's vocab.txt: one token a line, its id the line's index.
std::string wordpiece_bytes(const WordPieceVocab& vocab) {
  std::string out;
  for (const auto& token : vocab.tokens()) out += token + "\n";
  return out;
}

// tokenizer.json's vocab_size: words, pieces (after the padding id) or WordPiece tokens.
int64_t vocabulary_size(const Task& task) {
  if (task.wordpiece) return static_cast<int64_t>(task.wordpiece->vocab().size());
  return task.pieces ? task.pieces->size() + 1 : task.vocab->size();
}

// "ONEDNN" -> "onednn", as Python's torch.backends.quantized.engine spells it.
std::string engine_name(at::QEngine engine) {
  std::string name = c10::toString(engine);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// train.prune's structured pruning: the units it zeroed leave the matrices, so the file
// is smaller and its products narrower, with the same logits.
// With --cutoff the lookup table's rows are cut by norm instead (export_pq.h), pruned
// rows first (their norm is zero): `cut_table` names it.
std::map<std::string, torch::Tensor> without_pruned_units(const ModelSpec& spec,
                                                          const SiftConfig& config,
                                                          std::map<std::string, torch::Tensor> t,
                                                          const std::string& cut_table) {
  if (!spec.prune_units) return t;
  std::vector<UnitGroup> groups;
  for (const PruneStructure s : config.train.prune.structure) {
    for (auto& g : spec.prune_units(config.model, s, t)) {
      if (!(g.lookup && g.slices.at(0).param == cut_table)) groups.push_back(std::move(g));
    }
  }
  return groups.empty() ? t : remove_pruned_units(std::move(t), groups);
}

// The codes of the product-quantized `table` in an exported module.
torch::Tensor pq_codes(const torch::jit::Module& module, std::string table) {
  std::replace(table.begin(), table.end(), '.', '_');
  if (!module.hasattr(table + "_codes")) {
    throw Error("--quantize pq: this model's export does not product-quantize its table");
  }
  return module.attr(table + "_codes").toTensor();
}

}  // namespace

uint32_t weights_crc(const torch::jit::Module& module) {
  // Sorted by name: the order of registration is not part of the format.
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& p : module.named_parameters(/*recurse=*/false)) tensors[p.name] = p.value;
  for (const auto& b : module.named_buffers(/*recurse=*/false)) tensors[b.name] = b.value;
  uint32_t crc = 0;
  for (const auto& [name, value] : tensors) {
    auto t = value.detach().to(torch::kCPU).contiguous();
    crc = crc32_update(crc, name);
    crc = crc32_update(crc, t.data_ptr(), t.nbytes());
  }
  for (const auto& name : packed_attributes(module)) {
    crc = crc32_update(crc, name);
    crc = packed_crc(crc, module.attr(name));
  }
  return crc;
}

std::vector<std::string> quantized_engines() {
  std::vector<std::string> names;
  for (const at::QEngine engine : at::globalContext().supportedQEngines()) {
    if (engine != at::QEngine::NoQEngine) names.push_back(engine_name(engine));
  }
  return names;
}

std::string quantized_engine() { return engine_name(at::globalContext().qEngine()); }

void use_quantized_engine(const std::string& name) {
  for (const at::QEngine engine : at::globalContext().supportedQEngines()) {
    if (engine != at::QEngine::NoQEngine && engine_name(engine) == name) {
      at::globalContext().setQEngine(engine);
      return;
    }
  }
  throw Error(
      fmt::format("--quantized-engine: this LibTorch has no quantized engine '{}'; it "
                  "has {}",
                  name, fmt::join(quantized_engines(), ", ")));
}

namespace {

void check_options(const ModelBundle& bundle, const ExportOptions& options) {
  if (options.quantize != "none" && options.quantize != "int8" && options.quantize != "pq") {
    throw Error(fmt::format("--quantize: expected none, int8 or pq, not '{}'", options.quantize));
  }
  if (options.dtype != "fp32" && options.dtype != "bf16") {
    throw Error(fmt::format("--dtype: expected fp32 or bf16, not '{}'", options.dtype));
  }
  if (options.dtype == "bf16" && options.quantize != "none") {
    throw Error(
        fmt::format("--dtype bf16 --quantize {}: a bf16 export keeps its weights in "
                    "bf16; choose one of the two",
                    options.quantize));
  }
  check_pq_options(bundle, options);
  if (options.quantize == "int8" && quantized_engines().empty()) {
    throw Error("--quantize int8: this LibTorch has no quantized engine to run int8 kernels");
  }
}

TensorMap model_tensors(const ModelBundle& bundle) {
  TensorMap tensors;
  for (const auto& p : bundle.model->named_parameters()) tensors[p.key()] = p.value();
  for (const auto& b : bundle.model->named_buffers()) tensors[b.key()] = b.value();
  return tensors;
}

// The bundle's model as a TorchScript module with forward(ids, offsets | lengths) -> logits
// and predict_proba(...) -> probabilities (eval mode, on the CPU), from the model's
// tensors as the export stores them.
torch::jit::Module script_tensors(const ModelBundle& bundle, TensorMap tensors,
                                  const ExportOptions& options) {
  const WeightFormat format = options.quantize == "int8" ? WeightFormat::int8
                              : options.dtype == "bf16"  ? WeightFormat::bf16
                                                         : WeightFormat::fp32;
  const ModelSpec& spec = find_model(bundle.config.model.type);
  const bool pq = options.quantize == "pq";
  const std::string cut_table = pq && options.cutoff > 0 ? pq_table(bundle) : "";
  tensors = without_pruned_units(spec, bundle.config, std::move(tensors), cut_table);
  // --cutoff: the table reduced to its kept rows; the ids of the others leave their bags
  // (fastText's pruned dictionary). The kept ids are stored sorted (4 bytes a kept row)
  // rather than as a rank per id: cutting a 2M-row table to 100k rows, 0.4 MB against
  // 2.1 MB, which would be most of the file.
  if (!cut_table.empty()) {
    keep_lookup_rows(tensors, cut_table, kept_rows(bundle, options), KeptMap::sorted_ids,
                     Unkept::nothing);
  }
  ScriptWriter writer(std::move(tensors), format, options.int8_min_macs);
  writer.set_loss(bundle.config.train.loss, bundle.config.data.multi_label);
  if (pq) writer.request_pq({{options.dsub, options.qnorm}, options.qout, options.pq_given});
  // A `sift pretrain` run has no classes: its encoder alone is exported.
  const ScriptSource& script = bundle.task.masked_lm ? spec.encoder_script : spec.script;
  if (!script) {
    throw Error(fmt::format("model.type: model '{}' has no TorchScript export", spec.traits.name));
  }
  const std::string source = script(bundle.config.model, writer);
  torch::jit::Module module = writer.finish(source);
  if (pq) pq_codes(module, pq_table(bundle));  // the model's script did quantize it
  return module;
}

// report.json's provenance of the training run in `run_dir`; null when it has none (a run
// still training, an imported run, a report.json from before provenance).
nlohmann::json training_provenance(const std::string& run_dir) {
  const std::string path = run_file(run_dir, kReportJsonFile);
  if (run_dir.empty() || !std::filesystem::exists(path)) return nullptr;
  const auto report = nlohmann::json::parse(read_file_bytes(path), nullptr, false);
  if (!report.is_object() || !report.contains("environment")) return nullptr;
  nlohmann::json trained;
  for (const char* key :
       {"sift_version", "git_commit", "command_line", "host", "started", "config_hash"}) {
    if (report["environment"].contains(key)) trained[key] = report["environment"][key];
  }
  return trained;
}

}  // namespace

int64_t export_run(const ModelBundle& original, const std::string& out,
                   const ExportOptions& original_options) {
  check_options(original, original_options);
  ModelBundle bundle = original;
  ExportOptions options = original_options;
  TensorMap tensors = model_tensors(bundle);
  if (options.quantize == "pq" && options.cutoff > 0) {
    without_cut_words(bundle, options, tensors);
  }
  torch::jit::Module module = script_tensors(bundle, std::move(tensors), options);
  const TextEncoder encoder = make_encoder(bundle.task);
  const auto& wordpiece = bundle.task.wordpiece;
  const TokenizerType type = wordpiece            ? TokenizerType::wordpiece
                             : bundle.task.pieces ? TokenizerType::sentencepiece
                                                  : TokenizerType::word;
  nlohmann::json tokenizer =
      tokenizer_json(bundle.task.encoder, type, vocabulary_size(bundle.task), encoder.num_ids());
  if (wordpiece) tokenizer["wordpiece"] = wordpiece_json(wordpiece->options());
  std::map<std::string, std::string> files = {
      {kExportLabelsFile, saved_bytes(bundle.task.labels)},
      {kExportVocabFile,
       wordpiece ? wordpiece_bytes(wordpiece->vocab()) : saved_bytes(*bundle.task.vocab)},
      {kExportConfigFile, dump_config(bundle.config)},
      {kExportTokenizerFile, tokenizer.dump(2)},
  };
  if (type == TokenizerType::sentencepiece) {
    files[kExportSentencePieceFile] = read_file_bytes(bundle.task.pieces->path());
  } else if (type == TokenizerType::word) {
    files[kExportUnicodeFile] = unicode_tables_json(bundle.task.encoder.tokenizer.nfkc).dump();
  }
  auto format = format_json(bundle.config.model.type, bundle.task.encoder.kind, options.quantize,
                            weights_crc(module), files);
  // Who wrote the file and from which config; and, when the run's report.json says, who
  // trained it (its environment: version, commit, command line, host, start, config).
  format["provenance"] = provenance_record(files[kExportConfigFile]);
  format["provenance"]["trained"] = training_provenance(bundle.run_dir);
  // Written only when used, so that fp32 exports keep their bytes.
  if (options.dtype != "fp32") format["dtype"] = options.dtype;
  if (bundle.task.masked_lm) format["encoder"] = true;  // forward gives states, not logits
  if (options.quantize == "pq") {
    format["pq"] =
        pq_json(options, pq_codes(module, pq_table(bundle)).size(0), bundle.task.vocab->size());
  }
  // The packed int8 weights, which readers that cannot list a module's attributes
  // (Python) need to check the weights' checksum.
  const auto packed = packed_attributes(module);
  if (!packed.empty()) format["packed"] = packed;
  torch::jit::ExtraFilesMap extra(files.begin(), files.end());
  extra[kExportFormatFile] = format.dump(2);
  std::ostringstream bytes;
  module.save(bytes, extra);
  const std::string archive = bytes.str();
  write_file_atomically(out, archive);
  return static_cast<int64_t>(archive.size());
}

ScriptedClassifierImpl::ScriptedClassifierImpl(torch::jit::Module module, InputKind kind)
    : module_(std::move(module)), kind_(kind) {}

torch::Tensor ScriptedClassifierImpl::forward(const ModelInput& input) {
  const auto& second = kind_ == InputKind::bag ? input.offsets : input.lengths;
  return module_.forward({input.ids, second}).toTensor();
}

}  // namespace sift
