// SentencePiece models (unigram or BPE subwords) for tokenization, without linking
// SentencePiece: every call goes through the plug-in libsift_spm.so, opened once per
// process with dlopen (RTLD_DEEPBIND), because SentencePiece's bundled protobuf and
// LibTorch's crash when linked into one process (NOTES.md). Torch-free.
//
// The plug-in is looked for, in order: the file named by $SIFT_SPM_PLUGIN (if set, it
// is the only place tried); libsift_spm.so next to the running executable; the path of
// the build that compiled sift_core. Sanitizer runtimes abort the process on
// dlopen(RTLD_DEEPBIND), so sanitizer builds cannot use this (see
// sentencepiece_supported()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct SiftSpm;

namespace sift {

class SentencePieceModel {
 public:
  // Loads a .model file written by spm_train or train_sentencepiece. sift::Error if
  // the plug-in cannot be loaded (the message says where it looked), or the file is
  // missing, unreadable or not a SentencePiece model (the message names the file).
  static std::shared_ptr<SentencePieceModel> open(const std::string& model_path);

  ~SentencePieceModel();
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

  // Replaces the contents of ids with the piece ids of the UTF-8 text, exactly as
  // `spm_encode --output_format=id` encodes that line. Thread-safe: one model may be
  // shared by several threads (SentencePieceProcessor::Encode is const).
  void encode(std::string_view text, std::vector<int64_t>& ids) const;

  // Number of pieces; ids are 0 .. size()-1.
  int64_t size() const;
  int64_t unk_id() const;
  // Id of a piece ("\u2581the" for a word-initial "the"); unk_id() if absent.
  int64_t piece_to_id(std::string_view piece) const;
  // The piece of an id; sift::Error if out of range.
  std::string id_to_piece(int64_t id) const;

  const std::string& path() const { return path_; }

 private:
  SentencePieceModel(SiftSpm* handle, std::string path);

  SiftSpm* handle_;
  std::string path_;
};

// Trains a model on input_file (one sentence per line) and writes
// model_prefix.model and model_prefix.vocab. model_type: "unigram", "bpe", "char" or
// "word". extra_flags: further spm_train flags without "--" ({"character_coverage",
// "1.0"}, {"num_threads", "2"}, ...); later pairs override earlier and the arguments
// above. SentencePiece's progress log is off unless extra_flags sets "minloglevel" to
// "0". sift::Error naming the problem (missing input file, vocab_size too large for
// the data, ...). Not to be called from two threads at once.
void train_sentencepiece(
    const std::string& input_file, const std::string& model_prefix, int64_t vocab_size,
    const std::string& model_type = "unigram",
    const std::vector<std::pair<std::string, std::string>>& extra_flags = {});

// False in sanitizer builds (ASan, TSan, MSan): their runtimes abort the process on
// dlopen with RTLD_DEEPBIND (google/sanitizers#611), so there every function here
// throws sift::Error instead of loading the plug-in. Use another tokenizer there.
bool sentencepiece_supported();

// Path of the loaded plug-in, loading it first if needed (sift::Error as above).
std::string sentencepiece_plugin_path();

}  // namespace sift
