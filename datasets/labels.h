// The label names of a task and their ids (the model's output positions).
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/printable.h"

namespace sift {

// The error for a record with several labels in a single-label task: "file:line: ...".
std::string several_labels_message(const std::string& location,
                                   const std::vector<std::string>& labels);

// The error for a label holding a control byte (newline, NUL, ...): labels.txt keeps one
// label per line, so such a label would train into a run folder that cannot be loaded.
std::string control_byte_label_message(const std::string& location, const std::string& label);

// The one check of a record's labels, for the vocabulary pass and the batch stream:
// several labels in a single-label task throw several_labels_message; a label with a
// control byte throws control_byte_label_message. `location()` gives
// "file:line", built only on error (the check runs once per record). A record without a
// label never gets here: the parser counts it as malformed.
template <class Location>
void check_label_count(const std::vector<std::string>& labels, bool multi_label,
                       Location&& location) {
  if (labels.size() > 1 && !multi_label) {
    throw Error(several_labels_message(location(), labels));
  }
  for (const auto& label : labels) {
    if (has_control_byte(label)) throw Error(control_byte_label_message(location(), label));
  }
}

class LabelSet {
 public:
  LabelSet() = default;
  // The names of a label set from `origin` (data.labels, a label file, labels.txt, a
  // fastText model): each checked, wherever it comes from, since labels.txt keeps one
  // name per line: no name empty, with a control character (newline, tab, NUL, ...) or
  // with a space at its end, and none twice. sift::Error "ORIGIN: ..." naming the label.
  LabelSet(std::vector<std::string> names, const std::string& origin);

  // Names from the `data.labels` option: a list of names, or a single existing file with
  // one name per line.
  static LabelSet from_option(const std::vector<std::string>& value);
  // labels.txt in a run folder (the same one-name-per-line format). Errors name `name`
  // (the file or archive entry the stream reads).
  static LabelSet load(std::istream& in, const std::string& name);
  static LabelSet load(const std::string& path);
  void save(std::ostream& out) const;
  void save(const std::string& path) const;  // through PATH.tmp, renamed over PATH

  int64_t id(std::string_view name) const;  // -1 when unknown
  int64_t add(const std::string& name);     // id of name, added if new
  const std::string& name(int64_t id) const { return names_[id]; }
  const std::vector<std::string>& names() const { return names_; }
  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  bool empty() const { return names_.empty(); }
  // Orders the names so that collected labels get ids independent of reading order.
  void sort();

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace sift
