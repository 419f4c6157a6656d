// Loading an export (framework/runtime/export.h): format checks first, then the same loaders a
// run folder uses, fed from the archive's extra files.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "config/loader.h"
#include "core/error.h"
#include "core/scratch_dir.h"
#include "framework/runtime/base/export_format.h"
#include "framework/runtime/device.h"
#include "framework/runtime/export.h"
#include "models/script_writer.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

// Never the content of a real extra file: tells "absent" from "empty".
const std::string kAbsent = std::string("\0absent", 7);

bool starts_like_zip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::string(magic, 4) == std::string("PK\x03\x04", 4);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

torch::jit::Module read_archive(const std::string& path, torch::jit::ExtraFilesMap& extra) {
  if (!fs::exists(path))
    throw Error(fmt::format(
        "{} is not a run folder or an exported model (no such file or directory)", path));
  if (!starts_like_zip(path)) {
    throw Error(fmt::format(
        "{} is not a Sift export: it is not a TorchScript archive (written by `sift export`)",
        path));
  }
  for (const char* name :
       {kExportFormatFile, kExportTokenizerFile, kExportLabelsFile, kExportVocabFile,
        kExportSentencePieceFile, kExportConfigFile, kExportUnicodeFile}) {
    extra[name] = kAbsent;
  }
  try {
    return torch::jit::load(path, torch::kCPU, extra);
  } catch (const std::exception& e) {
    // A c10::Error, or TorchScript's ErrorReport when the archive's code does not compile,
    // whose what() is several lines of the code (a mutated export in FuzzCli gave seven).
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    throw Error(
        fmt::format("{} is truncated or corrupted: LibTorch cannot read it ({})", path,
                    first_line(c10_error ? c10_error->what_without_backtrace() : e.what())));
  }
}

}  // namespace

ModelBundle load_export(const std::string& path, const std::vector<std::string>& overrides) {
  torch::jit::ExtraFilesMap extra;
  torch::jit::Module module = read_archive(path, extra);
  if (extra[kExportFormatFile] == kAbsent) {
    throw Error(fmt::format("{} is a TorchScript file but not a Sift export (it has no {})", path,
                            kExportFormatFile));
  }
  std::map<std::string, std::string> files;
  for (const auto& [name, bytes] : extra) {
    if (name != kExportFormatFile && bytes != kAbsent) files[name] = bytes;
  }
  const auto format = check_format(extra[kExportFormatFile], path, files);
  for (const char* name :
       {kExportTokenizerFile, kExportLabelsFile, kExportVocabFile, kExportConfigFile}) {
    if (!files.count(name)) throw Error(fmt::format("{} is incomplete: it has no {}", path, name));
  }
  const auto checksums = format.value("crc32", nlohmann::json::object());
  if (!checksums.is_object() || checksums.value("weights", uint32_t{0}) != weights_crc(module)) {
    throw Error(fmt::format(
        "{} is corrupted: its weights do not match the checksum written at export", path));
  }
  ModelBundle b;
  b.run_dir = path;
  ScratchDir scratch;
  b.config = load_config(scratch.write(kExportConfigFile, files[kExportConfigFile]), overrides);
  b.task.masked_lm = !b.config.pretrain.files.empty();  // an encoder export: no labels
  if (!b.task.masked_lm) {
    b.task.labels = LabelSet::load(scratch.write(kExportLabelsFile, files[kExportLabelsFile]));
  }
  const std::string vocab_path = scratch.write(kExportVocabFile, files[kExportVocabFile]);
  TokenizerType type = TokenizerType::word;
  b.task.encoder = encoder_options_from_json(files[kExportTokenizerFile], path, &type);
  if (type == TokenizerType::wordpiece) {  // vocab.txt is BERT's, one token a line
    b.task.wordpiece = open_wordpiece(vocab_path, b.task.encoder.tokenizer.lowercase);
  } else {
    b.task.vocab = std::make_shared<Vocab>(Vocab::load(vocab_path));
  }
  if (type == TokenizerType::sentencepiece) {
    if (!files.count(kExportSentencePieceFile)) {
      throw Error(fmt::format("{} is incomplete: it has no {}", path, kExportSentencePieceFile));
    }
    b.task.pieces = SentencePieceModel::open(
        scratch.write(kExportSentencePieceFile, files[kExportSentencePieceFile]));
  }
  b.device = parse_device(b.config.run.device);
  module.to(b.device);
  module.eval();
  if (module.find_method(kPrepareWeights)) module.run_method(kPrepareWeights);
  b.model = std::make_shared<ScriptedClassifierImpl>(std::move(module), b.task.encoder.kind);
  return b;
}

ModelBundle load_model(const std::string& path, const std::vector<std::string>& overrides) {
  ModelBundle bundle =
      fs::is_directory(path) ? load_run(path, overrides) : load_export(path, overrides);
  check_classifier(bundle);
  return bundle;
}

}  // namespace sift
