#include "config/run_paths.h"

#include <filesystem>
#include <functional>

namespace sift {
namespace {

namespace fs = std::filesystem;

// Calls `f(key, value)` for each path-valued option's values.
void for_each_path(SiftConfig& c, const std::function<void(const std::string&, std::string&)>& f) {
  for (const Split split : {Split::train, Split::valid, Split::test}) {
    for (auto& p : split_config(c.data, split).path) f("data." + to_string(split) + ".path", p);
  }
  for (auto& p : c.train.distill.unlabeled) f("train.distill.unlabeled", p);
  f("train.distill.teacher", c.train.distill.teacher);
  f("train.init_from", c.train.init_from);
  for (auto& p : c.pretrain.files) f("pretrain.files", p);
  for (auto& p : c.pretrain.valid) f("pretrain.valid", p);
}

// `path` with a leading '@' (a list file) set apart; "" for a value that names no file
// of the file system ("", a scheme such as fasttext-import:, or an absolute path).
bool relative_file(const std::string& value, std::string& prefix, std::string& path) {
  prefix = !value.empty() && value[0] == '@' ? "@" : "";
  path = value.substr(prefix.size());
  if (path.empty() || fs::path(path).is_absolute()) return false;
  const size_t colon = path.find(':'), slash = path.find('/');
  return colon == std::string::npos || (slash != std::string::npos && slash < colon);
}

}  // namespace

SiftConfig with_paths_relative_to(SiftConfig config, const std::string& run_dir) {
  const fs::path base = fs::absolute(run_dir).lexically_normal();
  for_each_path(config, [&](const std::string&, std::string& value) {
    std::string prefix, path;
    if (!relative_file(value, prefix, path)) return;
    const fs::path absolute = fs::absolute(path).lexically_normal();
    const fs::path relative = absolute.lexically_relative(base);
    value = prefix + (relative.empty() ? absolute : relative).string();
  });
  return config;
}

void resolve_paths_against(SiftConfig& config, const std::string& run_dir) {
  const auto& origin = config.origin;
  for_each_path(config, [&](const std::string& key, std::string& value) {
    const auto given = origin.find(key);
    if (given != origin.end() && given->second.rfind("--set", 0) == 0) return;
    std::string prefix, path;
    if (!relative_file(value, prefix, path)) return;
    // Relative to the working folder again (not absolute), so that a resume writes it back
    // relative to the run folder.
    const fs::path absolute = fs::absolute(fs::path(run_dir) / path).lexically_normal();
    const fs::path relative = absolute.lexically_relative(fs::current_path());
    value = prefix + (relative.empty() ? absolute : relative).string();
  });
}

}  // namespace sift
