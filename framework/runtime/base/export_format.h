// The self-description of an exported model (`sift export`): the names of the extra
// files stored next to the TorchScript code, the format version, and the checks a
// reader runs before trusting the file. Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "config/enums.h"
#include "datasets/text_encoder.h"
#include "datasets/wordpiece.h"

namespace sift {

// Extra files of an export (read them in Python with torch.jit.load(path,
// _extra_files={name: ""})).
inline constexpr const char* kExportFormatFile = "sift_format.json";
inline constexpr const char* kExportTokenizerFile = "tokenizer.json";
inline constexpr const char* kExportLabelsFile = "labels.txt";
inline constexpr const char* kExportVocabFile = "vocab.txt";
inline constexpr const char* kExportSentencePieceFile = "tokenizer.model";  // when used
inline constexpr const char* kExportConfigFile = "config.yaml";
// The word tokenizer's Unicode tables (unicode_tables_json in datasets/unicode.h), so that
// a reader in another language tokenizes as this sift does, whatever its own Unicode
// version. Absent from SentencePiece exports and from exports written before it existed.
inline constexpr const char* kExportUnicodeFile = "unicode.json";

inline constexpr const char* kExportFormatName = "sift-export";
// Raised when a reader of the previous version could no longer use the file.
inline constexpr int64_t kExportFormatVersion = 1;

// tokenizer.json: everything TextEncoder does, for a reader in another language.
nlohmann::json tokenizer_json(const TextEncoderOptions& options, TokenizerType type,
                              int64_t vocab_size, int64_t num_ids);
// tokenizer.json's "wordpiece" object of a WordPiece export: BERT's basic tokenizer's
// settings and special tokens (vocab.txt holds the vocabulary itself).
nlohmann::json wordpiece_json(const WordPieceOptions& options);
// TextEncoderOptions back from tokenizer.json; sift::Error naming `path` when a field is
// missing or has the wrong type. *type receives the tokenizer (word, sentencepiece or
// wordpiece).
TextEncoderOptions encoder_options_from_json(const std::string& text, const std::string& path,
                                             TokenizerType* type);

// sift_format.json: name, version, model type, input kind, quantization and the
// checksums of the weights and of every other extra file.
nlohmann::json format_json(const std::string& model, InputKind input, const std::string& quantize,
                           uint32_t weights_crc, const std::map<std::string, std::string>& files);

// Where a result came from, as report.json's environment and an export's sift_format.json
// ("provenance") record it: this program's Sift version and git commit, its command line,
// host and start time (UTC), and the CRC-32 of `config_text` ("crc32:89abcdef"; "" when
// empty).
nlohmann::json provenance_record(const std::string& config_text);

// Parses and checks sift_format.json of `path`: sift::Error when it is not ours, was
// written by a newer format version, or an extra file's checksum does not match.
nlohmann::json check_format(const std::string& text, const std::string& path,
                            const std::map<std::string, std::string>& files);

}  // namespace sift
