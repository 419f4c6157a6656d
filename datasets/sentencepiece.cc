#include "datasets/sentencepiece.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/sibling_program.h"
#include "plugins/sentencepiece/spm_plugin.h"

// Sanitizer runtimes kill the process on dlopen(RTLD_DEEPBIND); detect them to throw.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SIFT_SPM_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SIFT_SPM_SANITIZER 1
#endif
#endif

namespace sift {
namespace {

constexpr const char* kPluginFile = "libsift_spm.so";

// The plug-in's entry points. Loaded once per process and never unloaded: models may
// live until exit, and unloading SentencePiece's static state buys nothing.
struct Plugin {
  std::string path;
  decltype(&sift_spm_abi_version) abi_version = nullptr;
  decltype(&sift_spm_open) open = nullptr;
  decltype(&sift_spm_close) close = nullptr;
  decltype(&sift_spm_encode) encode = nullptr;
  decltype(&sift_spm_vocab_size) vocab_size = nullptr;
  decltype(&sift_spm_piece_to_id) piece_to_id = nullptr;
  decltype(&sift_spm_unk_id) unk_id = nullptr;
  decltype(&sift_spm_id_to_piece) id_to_piece = nullptr;
  decltype(&sift_spm_train) train = nullptr;
};

std::vector<std::string> candidate_paths() {
  const char* env = std::getenv("SIFT_SPM_PLUGIN");
  // An explicit choice is the only one tried: falling back would hide a wrong path.
  if (env != nullptr && *env != '\0') return {env};
  std::vector<std::string> paths{sibling_program(kPluginFile)};
#ifdef SIFT_SPM_PLUGIN_PATH
  if (std::find(paths.begin(), paths.end(), SIFT_SPM_PLUGIN_PATH) == paths.end()) {
    paths.push_back(SIFT_SPM_PLUGIN_PATH);
  }
#endif
  return paths;
}

template <typename Fn>
bool bind(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  return fn != nullptr;
}

// Empty string on success, else why `path` is not usable.
std::string try_load(const std::string& path, Plugin& plugin) {
  if (::access(path.c_str(), F_OK) != 0) return "no such file";
  // RTLD_DEEPBIND: the plug-in's own symbols (SentencePiece's protobuf 3.14) come
  // before the process's (LibTorch's protobuf 3.21). RTLD_LOCAL: and never the reverse.
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return why != nullptr ? why : "dlopen failed";
  }
  bool ok = bind(lib, "sift_spm_abi_version", plugin.abi_version) &&
            bind(lib, "sift_spm_open", plugin.open) && bind(lib, "sift_spm_close", plugin.close) &&
            bind(lib, "sift_spm_encode", plugin.encode) &&
            bind(lib, "sift_spm_vocab_size", plugin.vocab_size) &&
            bind(lib, "sift_spm_piece_to_id", plugin.piece_to_id) &&
            bind(lib, "sift_spm_unk_id", plugin.unk_id) &&
            bind(lib, "sift_spm_id_to_piece", plugin.id_to_piece) &&
            bind(lib, "sift_spm_train", plugin.train);
  std::string why;
  if (!ok) {
    why = "not a sift SentencePiece plug-in (missing symbols)";
  } else if (int v = plugin.abi_version(); v != SIFT_SPM_ABI_VERSION) {
    why = fmt::format("plug-in ABI version {}, this build needs {} (stale build?)", v,
                      SIFT_SPM_ABI_VERSION);
  }
  if (!why.empty()) {
    ::dlclose(lib);
    plugin = Plugin{};
    return why;
  }
  plugin.path = path;
  return "";
}

Plugin load_plugin() {
#ifdef SIFT_SPM_SANITIZER
  throw Error(
      "SentencePiece is not available in sanitizer builds: the plug-in needs "
      "dlopen(RTLD_DEEPBIND), which sanitizer runtimes abort on; use another tokenizer");
#endif
  std::vector<std::string> tried;
  for (const std::string& path : candidate_paths()) {
    Plugin plugin;
    std::string why = try_load(path, plugin);
    if (why.empty()) return plugin;
    tried.push_back(fmt::format("{} ({})", path, why));
  }
  std::string looked;
  for (const std::string& t : tried) looked += "\n  " + t;
  if (tried.empty()) looked = " nowhere (no SIFT_SPM_PLUGIN and no executable path)";
  throw Error(
      fmt::format("cannot load the SentencePiece plug-in {}; looked at:{}\nBuild the sift_spm "
                  "target, or set SIFT_SPM_PLUGIN to the path of {}",
                  kPluginFile, looked, kPluginFile));
}

// Thread-safe one-time load; after a throw the next call tries again.
const Plugin& plugin() {
  static const Plugin instance = load_plugin();
  return instance;
}

}  // namespace

bool sentencepiece_supported() {
#ifdef SIFT_SPM_SANITIZER
  return false;
#else
  return true;
#endif
}

std::string sentencepiece_plugin_path() { return plugin().path; }

std::shared_ptr<SentencePieceModel> SentencePieceModel::open(const std::string& model_path) {
  const Plugin& p = plugin();
  char err[1024] = "";
  SiftSpm* handle = p.open(model_path.c_str(), err, sizeof err);
  if (handle == nullptr) throw Error(err);
  // make_shared cannot reach the private constructor.
  return std::shared_ptr<SentencePieceModel>(new SentencePieceModel(handle, model_path));
}

SentencePieceModel::SentencePieceModel(SiftSpm* handle, std::string path)
    : handle_(handle), path_(std::move(path)) {}

SentencePieceModel::~SentencePieceModel() { plugin().close(handle_); }

void SentencePieceModel::encode(std::string_view text, std::vector<int64_t>& ids) const {
  const Plugin& p = plugin();
  char err[512] = "";
  // A piece spans at least one character, so len + 2 is room enough in one call
  // except with byte fallback; then the plug-in says how many and we call again.
  ids.resize(text.size() + 2);
  int64_t n = p.encode(handle_, text.data(), text.size(), ids.data(), ids.size(), err, sizeof err);
  if (n > static_cast<int64_t>(ids.size())) {
    ids.resize(static_cast<size_t>(n));
    n = p.encode(handle_, text.data(), text.size(), ids.data(), ids.size(), err, sizeof err);
  }
  if (n < 0) throw Error(fmt::format("{}: {}", path_, err));
  ids.resize(static_cast<size_t>(n));
}

int64_t SentencePieceModel::size() const { return plugin().vocab_size(handle_); }

int64_t SentencePieceModel::unk_id() const { return plugin().unk_id(handle_); }

int64_t SentencePieceModel::piece_to_id(std::string_view piece) const {
  return plugin().piece_to_id(handle_, piece.data(), piece.size());
}

std::string SentencePieceModel::id_to_piece(int64_t id) const {
  const Plugin& p = plugin();
  char buf[64];
  int64_t n = p.id_to_piece(handle_, id, buf, sizeof buf);
  if (n < 0) {
    throw Error(fmt::format("{}: piece id {} out of range [0, {})", path_, id, size()));
  }
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string piece(static_cast<size_t>(n) + 1, '\0');
  p.id_to_piece(handle_, id, piece.data(), piece.size());
  piece.resize(static_cast<size_t>(n));
  return piece;
}

void train_sentencepiece(const std::string& input_file, const std::string& model_prefix,
                         int64_t vocab_size, const std::string& model_type,
                         const std::vector<std::pair<std::string, std::string>>& extra_flags) {
  // Checked here because SentencePiece's own messages do not name the file or flag.
  if (::access(input_file.c_str(), R_OK) != 0) {
    throw Error(fmt::format("cannot read SentencePiece training input {}: {}", input_file,
                            std::strerror(errno)));
  }
  size_t slash = model_prefix.rfind('/');
  std::string out_dir = slash == std::string::npos ? "." : model_prefix.substr(0, slash + 1);
  if (::access(out_dir.c_str(), W_OK) != 0) {
    throw Error(fmt::format("cannot write SentencePiece model {}.model: folder {}: {}",
                            model_prefix, out_dir, std::strerror(errno)));
  }
  if (vocab_size <= 0) {
    throw Error(fmt::format("SentencePiece vocab_size must be > 0, got {}", vocab_size));
  }
  static const char* const kTypes[] = {"unigram", "bpe", "char", "word"};
  if (std::find(std::begin(kTypes), std::end(kTypes), model_type) == std::end(kTypes)) {
    throw Error(fmt::format("unknown SentencePiece model_type '{}' (unigram, bpe, char or word)",
                            model_type));
  }
  std::vector<std::pair<std::string, std::string>> flags = {
      {"input", input_file},
      {"model_prefix", model_prefix},
      {"vocab_size", std::to_string(vocab_size)},
      {"model_type", model_type},
      {"minloglevel", "1"},  // its INFO log is a page per run
  };
  flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : flags) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  const Plugin& p = plugin();
  char err[1024] = "";
  if (p.train(keys.data(), values.data(), keys.size(), err, sizeof err) != 0) {
    throw Error(fmt::format("training SentencePiece model {} on {} failed: {}", model_prefix,
                            input_file, err));
  }
}

}  // namespace sift
