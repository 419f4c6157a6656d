#include "framework/runtime/base/export_format.h"

#include <fmt/format.h>

#include "config/enums.h"
#include "core/crc32.h"
#include "core/error.h"
#include "core/provenance.h"
#include "datasets/unicode.h"

namespace sift {

nlohmann::json tokenizer_json(const TextEncoderOptions& o, TokenizerType type, int64_t vocab_size,
                              int64_t num_ids) {
  const bool bag = o.kind == InputKind::bag;
  nlohmann::json j = {
      {"type", to_string(type)},
      {"lowercase", o.tokenizer.lowercase},
      {"split_punctuation", o.tokenizer.split_punctuation},
      {"drop_punctuation", o.tokenizer.drop_punctuation},
      {"normalize", o.tokenizer.nfkc ? "nfkc" : "none"},
      // The word tokenizer's Unicode rules: the tables of unicode.json, from utf8proc.
      {"unicode_version", unicode_version()},
      {"stopwords", o.tokenizer.stopwords},
      {"input", bag ? "bag" : "sequence"},
      {"ngrams", o.ngrams},
      {"buckets", o.buckets},
      {"max_length", o.max_length},
      {"padding_id", 0},
      {"unknown_id", 1},
      // Word ids come from vocab.txt (line i + 1 is id i + 2 after <pad>, <unk>);
      // SentencePiece piece p is id p + 1; a WordPiece token's id is its line's index in
      // vocab.txt (BERT's own file). N-gram buckets start after them.
      {"vocab_size", vocab_size},
      {"num_ids", num_ids},
      {"word_hash", o.fasttext_compat ? "fnv1a32_signed_char" : "fnv1a32"},
      {"ngram_hash_multiplier", 116049371},
  };
  // fasttext_compat (runs imported from fastText): split on ASCII whitespace only, append
  // "</s>", hash bytes as signed chars and sign-extend word hashes. Written only when set,
  // so that other exports keep their bytes.
  if (o.fasttext_compat) j["fasttext_compat"] = true;
  // A pretrained model's own SentencePiece ids (datasets/model_pieces.h: albert, fairseq),
  // likewise only when set.
  if (o.piece_ids != PieceIds::sift) j["piece_ids"] = to_string(o.piece_ids);
  // Character n-grams (model.minn/maxn), likewise only when there are some.
  if (o.chars.maxn > 0) {
    j["minn"] = o.chars.minn;
    j["maxn"] = o.chars.maxn;
  }
  return j;
}

nlohmann::json wordpiece_json(const WordPieceOptions& o) {
  return {{"strip_accents", o.strip_accents.value_or(o.lowercase)},
          {"split_cjk", o.split_cjk},
          {"max_chars_per_word", o.max_chars_per_word},
          {"unk", o.unk},
          {"cls", o.cls},
          {"sep", o.sep},
          {"continuation", o.continuation}};
}

TextEncoderOptions encoder_options_from_json(const std::string& text, const std::string& path,
                                             TokenizerType* type) {
  try {
    const auto j = nlohmann::json::parse(text);
    TextEncoderOptions o;
    o.tokenizer.lowercase = j.at("lowercase").get<bool>();
    o.tokenizer.split_punctuation = j.at("split_punctuation").get<bool>();
    // Absent from exports written before these options existed.
    o.tokenizer.drop_punctuation = j.value("drop_punctuation", false);
    o.tokenizer.stopwords = j.value("stopwords", std::vector<std::string>{});
    o.tokenizer.nfkc = j.value("normalize", "none") == "nfkc";
    o.kind = j.at("input").get<std::string>() == "bag" ? InputKind::bag : InputKind::sequence;
    o.ngrams = j.at("ngrams").get<int>();
    o.buckets = j.at("buckets").get<int64_t>();
    o.max_length = j.at("max_length").get<int64_t>();
    o.fasttext_compat = j.value("fasttext_compat", false);
    o.chars = {j.value("minn", 0), j.value("maxn", 0)};
    o.piece_ids = from_string<PieceIds>(j.value("piece_ids", "sift"), "piece_ids");
    *type = from_string<TokenizerType>(j.at("type").get<std::string>(), "tokenizer.type");
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {} is not a valid tokenizer description: {}", path,
                            kExportTokenizerFile, e.what()));
  }
}

nlohmann::json format_json(const std::string& model, InputKind input, const std::string& quantize,
                           uint32_t weights_crc, const std::map<std::string, std::string>& files) {
  nlohmann::json checksums = {{"weights", weights_crc}};
  for (const auto& [name, bytes] : files) checksums[name] = crc32_of(bytes);
  return {{"format", kExportFormatName},
          {"version", kExportFormatVersion},
          {"model", model},
          {"input", input == InputKind::bag ? "bag" : "sequence"},
          {"quantize", quantize},
          {"crc32", checksums}};
}

nlohmann::json check_format(const std::string& text, const std::string& path,
                            const std::map<std::string, std::string>& files) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    if (j.value("format", "") != kExportFormatName) throw std::runtime_error("wrong name");
    j.at("version").get<int64_t>();
  } catch (const std::exception&) {
    throw Error(fmt::format("{} is not a Sift export: its {} does not name the format '{}'", path,
                            kExportFormatFile, kExportFormatName));
  }
  const auto version = j.at("version").get<int64_t>();
  if (version > kExportFormatVersion) {
    throw Error(fmt::format(
        "{} is in Sift export format version {}, newer than this sift reads (up to {}): "
        "upgrade sift, or export the run again with this version",
        path, version, kExportFormatVersion));
  }
  const auto checksums = j.value("crc32", nlohmann::json::object());
  for (const auto& [name, bytes] : files) {
    const auto expected = checksums.is_object() ? checksums.value(name, uint32_t{0}) : 0;
    if (expected != crc32_of(bytes)) {
      throw Error(
          fmt::format("{} is corrupted: its {} does not match the checksum written at "
                      "export",
                      path, name));
    }
  }
  return j;
}

nlohmann::json provenance_record(const std::string& config_text) {
  const Provenance from = this_process();
  return {{"sift_version", from.version},
          {"git_commit", from.commit},
          {"command_line", from.command_line},
          {"host", from.host},
          {"started", from.started},
          {"config_hash",
           config_text.empty() ? "" : fmt::format("crc32:{:08x}", crc32_of(config_text))}};
}

}  // namespace sift
