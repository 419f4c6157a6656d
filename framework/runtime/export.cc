#include "framework/runtime/export.h"

#include <fmt/format.h>
#include <zlib.h>

#include <map>
#include <sstream>

#include "core/atomic_file.h"
#include "core/crc32.h"
#include "core/file_bytes.h"
#include "config/loader.h"
#include "datasets/unicode.h"
#include "core/error.h"
#include "framework/runtime/export_format.h"
#include "models/model.h"
#include "models/script_writer.h"

namespace sift {
namespace {

std::string vocab_bytes(const Vocab& vocab) {
  std::ostringstream out;
  vocab.save(out);
  return out.str();
}

std::string labels_text(const LabelSet& labels) {
  std::ostringstream out;
  labels.save(out);
  return out.str();
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
  return crc;
}

torch::jit::Module script_model(const ModelBundle& bundle, const ExportOptions& options) {
  if (options.quantize != "none" && options.quantize != "int8") {
    throw Error(fmt::format("--quantize: expected none or int8, not '{}'", options.quantize));
  }
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& p : bundle.model->named_parameters()) tensors[p.key()] = p.value();
  for (const auto& b : bundle.model->named_buffers()) tensors[b.key()] = b.value();
  ScriptWriter writer(std::move(tensors), options.quantize == "int8");
  const ModelSpec& spec = find_model(bundle.config.model.type);
  if (!spec.script) {
    throw Error(fmt::format("model.type: model '{}' has no TorchScript export",
                            spec.traits.name));
  }
  const std::string source = spec.script(bundle.config.model, writer);
  return writer.finish(source);
}

int64_t export_run(const ModelBundle& bundle, const std::string& out,
                   const ExportOptions& options) {
  torch::jit::Module module = script_model(bundle, options);
  const bool pieces = bundle.task.pieces != nullptr;
  const TextEncoder encoder = make_encoder(bundle.task);
  std::map<std::string, std::string> files = {
      {kExportLabelsFile, labels_text(bundle.task.labels)},
      {kExportVocabFile, vocab_bytes(*bundle.task.vocab)},
      {kExportConfigFile, dump_config(bundle.config)},
      {kExportTokenizerFile,
       tokenizer_json(bundle.task.encoder, pieces,
                      pieces ? bundle.task.pieces->size() + 1 : bundle.task.vocab->size(),
                      encoder.num_ids())
           .dump(2)},
  };
  if (pieces) {
    files[kExportSentencePieceFile] = read_file_bytes(bundle.task.pieces->path());
  } else {
    files[kExportUnicodeFile] = unicode_tables_json(bundle.task.encoder.tokenizer.nfkc).dump();
  }
  const auto format = format_json(bundle.config.model.type, bundle.task.encoder.kind,
                                  options.quantize, weights_crc(module), files);
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
