#include "datasets/paths.h"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

bool has_glob_chars(const std::string& p) { return p.find_first_of("*?[{") != std::string::npos; }

bool is_regular(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

class Expander {
 public:
  explicit Expander(const std::string& key) : key_(key) {}

  void pattern(const std::string& p) {
    if (!p.empty() && p[0] == '@') {
      list_file(p.substr(1));
    } else {
      entry(p);
    }
  }

  std::vector<std::string> take() { return std::move(files_); }

 private:
  void entry(const std::string& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {  // an existing path wins over glob characters in its name
      if (S_ISDIR(st.st_mode)) return directory(p);
      if (!S_ISREG(st.st_mode)) fail(fmt::format("'{}' is not a regular file", p));
      return add(p);
    }
    if (!has_glob_chars(p)) {
      const int err = errno;
      fail(fmt::format("cannot read '{}': {}{}", p, std::strerror(err),
                       err == ENOENT ? data_fetch_hint(p) : std::string()));
    }
    glob_pattern(p);
  }

  void glob_pattern(const std::string& p) {
    glob_t g{};
    int rc = ::glob(p.c_str(), GLOB_BRACE | GLOB_TILDE, nullptr, &g);
    std::vector<std::string> matches;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i)
      if (is_regular(g.gl_pathv[i])) matches.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    if (matches.empty()) fail(fmt::format("no file matches '{}'{}", p, data_fetch_hint(p)));
    std::sort(matches.begin(), matches.end());  // GLOB_BRACE sorts each alternative alone
    for (auto& m : matches) add(m);
  }

  void directory(const std::string& dir) {
    std::vector<std::string> found;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.empty() || name[0] == '.') continue;
      if (is_regular(it->path().string())) found.push_back(it->path().string());
    }
    if (ec) fail(fmt::format("cannot read '{}': {}", dir, ec.message()));
    if (found.empty()) fail(fmt::format("no file in directory '{}'{}", dir, data_fetch_hint(dir)));
    std::sort(found.begin(), found.end());
    for (auto& f : found) add(f);
  }

  void list_file(const std::string& list) {
    std::ifstream in(list);
    if (!in) fail(fmt::format("cannot read '{}': {}", list, std::strerror(errno)));
    fs::path base = fs::path(list).parent_path();
    std::string line;
    while (std::getline(in, line)) {
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos || line[b] == '#') continue;
      size_t e = line.find_last_not_of(" \t\r");
      fs::path p = line.substr(b, e - b + 1);
      entry(p.is_relative() && !base.empty() ? (base / p).string() : p.string());
    }
  }

  void add(const std::string& path) {
    std::error_code ec;
    std::string id = fs::canonical(path, ec).string();  // "a" and "./a" are one file
    if (seen_.insert(ec ? path : id).second) files_.push_back(path);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}", key_, what));
  }

  const std::string& key_;
  std::vector<std::string> files_;
  std::set<std::string> seen_;
};

}  // namespace

std::string data_fetch_hint(const std::string& path) {
  // The folder after the last "data" component that is followed by NAME and more.
  const std::string generic = fs::path(path).lexically_normal().generic_string();
  size_t start = std::string::npos;
  for (size_t at = generic.rfind("data/"); at != std::string::npos;
       at = at == 0 ? std::string::npos : generic.rfind("data/", at - 1)) {
    if (at == 0 || generic[at - 1] == '/') {
      start = at + 5;
      break;
    }
  }
  if (start == std::string::npos) return "";
  const size_t slash = generic.find('/', start);
  if (slash == std::string::npos || slash == start || slash + 1 == generic.size()) return "";
  const std::string name = generic.substr(start, slash - start);
  if (name == "." || name == ".." || has_glob_chars(name)) return "";
  return fmt::format("; fetch it with tools/get_data.sh {}", name);
}

std::vector<std::string> expand_paths(const std::vector<std::string>& patterns,
                                      const std::string& key) {
  Expander expander(key);
  for (const auto& p : patterns) expander.pattern(p);
  return expander.take();
}

}  // namespace sift
