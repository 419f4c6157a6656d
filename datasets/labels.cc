#include "datasets/labels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "datasets/paths.h"

namespace sift {
namespace {

// One name per line; blank lines and trailing spaces or "\r" are ignored.
std::vector<std::string> read_names(std::istream& in, const std::string& name) {
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  if (in.bad()) throw Error(fmt::format("cannot read label file {}", name));
  if (names.empty()) throw Error(fmt::format("label file {} holds no label", name));
  return names;
}

std::vector<std::string> read_names(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    throw Error(fmt::format("cannot open label file {}: {}{}", path, std::strerror(err),
                            err == ENOENT ? data_fetch_hint(path) : std::string()));
  }
  return read_names(in, path);
}

}  // namespace

std::string several_labels_message(const std::string& location,
                                   const std::vector<std::string>& labels) {
  return fmt::format(
      "{}: the record has {} labels ({}), but data.multi_label is false; set "
      "data.multi_label: true to train on records with several labels",
      location, labels.size(), printable(fmt::format("{}", fmt::join(labels, ", "))));
}

std::string control_byte_label_message(const std::string& location, const std::string& label) {
  return fmt::format(
      "{}: the label '{}' holds a control character (newline, tab, NUL, ...); labels are "
      "stored one per line in labels.txt and must not",
      location, printable(label));
}

LabelSet::LabelSet(std::vector<std::string> names, const std::string& origin) {
  for (auto& n : names) {
    if (n.empty()) throw Error(fmt::format("{}: a label is empty", origin));
    if (has_control_byte(n)) throw Error(control_byte_label_message(origin, n));
    if (n.back() == ' ') {
      throw Error(
          fmt::format("{}: the label '{}' ends with a space, which labels.txt does not keep",
                      origin, printable(n)));
    }
    if (ids_.count(n)) {
      throw Error(fmt::format("{}: the label '{}' is listed twice", origin, printable(n)));
    }
    add(n);
  }
}

LabelSet LabelSet::from_option(const std::vector<std::string>& value) {
  if (value.size() == 1 && std::filesystem::is_regular_file(value[0])) {
    return LabelSet(read_names(value[0]), "data.labels: " + value[0]);
  }
  return LabelSet(value, "data.labels");
}

LabelSet LabelSet::load(std::istream& in, const std::string& name) {
  return LabelSet(read_names(in, name), name);
}

LabelSet LabelSet::load(const std::string& path) { return LabelSet(read_names(path), path); }

void LabelSet::save(std::ostream& out) const {
  for (const auto& n : names_) out << n << '\n';
}

void LabelSet::save(const std::string& path) const {
  write_file_atomically(path, [this](std::ostream& out) { save(out); });
}

int64_t LabelSet::id(std::string_view name) const {
  auto it = ids_.find(std::string(name));
  return it == ids_.end() ? -1 : it->second;
}

int64_t LabelSet::add(const std::string& name) {
  auto [it, inserted] = ids_.emplace(name, size());
  if (inserted) names_.push_back(name);
  return it->second;
}

void LabelSet::sort() {
  std::sort(names_.begin(), names_.end());
  for (size_t i = 0; i < names_.size(); ++i) ids_[names_[i]] = static_cast<int64_t>(i);
}

}  // namespace sift
