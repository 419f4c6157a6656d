// The SentencePiece plug-in: the C API of spm_plugin.h over SentencePieceProcessor and
// SentencePieceTrainer. Built with hidden visibility, so the functions of the header
// are its only exports. Links SentencePiece, never LibTorch (see spm_plugin.h).
#include "plugins/sentencepiece/spm_plugin.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct SiftSpm {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

void set_error(char* err, size_t err_len, const std::string& message) {
  if (err == nullptr || err_len == 0) return;
  size_t n = std::min(message.size(), err_len - 1);
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

}  // namespace

extern "C" {

int sift_spm_abi_version(void) { return SIFT_SPM_ABI_VERSION; }

SiftSpm* sift_spm_open(const char* model_path, char* err, size_t err_len) {
  try {
    std::string path = model_path != nullptr ? model_path : "";
    // Check readability ourselves: SentencePiece's message for a missing file does not
    // say which file, and a directory would read as an empty (broken) model.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      set_error(err, err_len, "cannot open " + path + ": " + std::strerror(errno));
      return nullptr;
    }
    if (S_ISDIR(st.st_mode)) {
      set_error(err, err_len, "cannot open " + path + ": it is a directory");
      return nullptr;
    }
    std::ifstream probe(path, std::ios::binary);
    if (!probe) {
      set_error(err, err_len, "cannot open " + path + ": " + std::strerror(errno));
      return nullptr;
    }
    probe.close();
    auto model = std::make_unique<SiftSpm>();
    auto status = model->processor.Load(path);
    if (!status.ok()) {
      set_error(err, err_len, path + " is not a SentencePiece model (" + status.ToString() + ")");
      return nullptr;
    }
    return model.release();
  } catch (const std::exception& e) {
    set_error(err, err_len, std::string("cannot load SentencePiece model: ") + e.what());
  } catch (...) {
    set_error(err, err_len, "cannot load SentencePiece model: unknown exception");
  }
  return nullptr;
}

void sift_spm_close(SiftSpm* model) { delete model; }

int64_t sift_spm_encode(const SiftSpm* model, const char* text, size_t len, int64_t* ids,
                        size_t cap, char* err, size_t err_len) {
  try {
    // One short-lived vector per call: Encode only offers std::vector<int>.
    std::vector<int> pieces;
    auto status = model->processor.Encode(absl::string_view(text, len), &pieces);
    if (!status.ok()) {
      set_error(err, err_len, "SentencePiece encode failed: " + status.ToString());
      return -1;
    }
    if (pieces.size() <= cap) {
      for (size_t i = 0; i < pieces.size(); ++i) ids[i] = pieces[i];
    }
    return static_cast<int64_t>(pieces.size());
  } catch (const std::exception& e) {
    set_error(err, err_len, std::string("SentencePiece encode failed: ") + e.what());
  } catch (...) {
    set_error(err, err_len, "SentencePiece encode failed: unknown exception");
  }
  return -1;
}

int64_t sift_spm_vocab_size(const SiftSpm* model) { return model->processor.GetPieceSize(); }

int64_t sift_spm_piece_to_id(const SiftSpm* model, const char* piece, size_t len) {
  try {
    return model->processor.PieceToId(absl::string_view(piece, len));
  } catch (...) {
    return model->processor.unk_id();
  }
}

int64_t sift_spm_unk_id(const SiftSpm* model) { return model->processor.unk_id(); }

int64_t sift_spm_id_to_piece(const SiftSpm* model, int64_t id, char* buf, size_t cap) {
  if (id < 0 || id >= model->processor.GetPieceSize()) return -1;
  const std::string& piece = model->processor.IdToPiece(static_cast<int>(id));
  set_error(buf, cap, piece);  // the same NUL-terminated copy, cut to fit
  return static_cast<int64_t>(piece.size());
}

int sift_spm_train(const char* const* keys, const char* const* values, size_t n, char* err,
                   size_t err_len) {
  try {
    std::unordered_map<std::string, std::string> kwargs;
    for (size_t i = 0; i < n; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr) {
        set_error(err, err_len, "sift_spm_train: null key or value");
        return 1;
      }
      kwargs[keys[i]] = values[i];
    }
    auto status = sentencepiece::SentencePieceTrainer::Train(kwargs);
    if (!status.ok()) {
      set_error(err, err_len, status.ToString());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_len, std::string("SentencePiece training failed: ") + e.what());
  } catch (...) {
    set_error(err, err_len, "SentencePiece training failed: unknown exception");
  }
  return 1;
}

}  // extern "C"
