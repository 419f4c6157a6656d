#include "datasets/record_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (moved here in fmt 11)

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/error.h"

namespace sift {
namespace {

constexpr std::string_view kWhitespace = " \t\r\n\v\f";

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(kWhitespace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kWhitespace);
  return s.substr(b, e - b + 1);
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Sets out.labels[k], reusing the string's storage from earlier records.
void set_label(Example& out, size_t k, std::string_view label) {
  if (k < out.labels.size()) {
    out.labels[k].assign(label.data(), label.size());
  } else {
    out.labels.emplace_back(label);
  }
}

}  // namespace

RecordParser::RecordParser(TextFormat format) : format_(std::move(format)) {
  bool columnar = format_.format == FileFormat::tsv || format_.format == FileFormat::csv;
  if (!columnar && format_.format != FileFormat::jsonl) return;
  const std::string& name = to_string(format_.format);
  if (format_.text_columns.empty() || format_.label_column.empty())
    throw Error(
        fmt::format("The {} format needs text_columns and label_column: name the columns "
                    "(or fields) that hold the text and the label.",
                    name));
  for (const auto& c : format_.text_columns) {
    if (c.empty())
      throw Error(fmt::format("A text column of the {} format is an empty name.", name));
    text_columns_.push_back({c, 0, !columnar || !is_index(c)});
  }
  const auto& l = format_.label_column;
  label_column_ = {l, 0, !columnar || !is_index(l)};
  if (!columnar) return;
  auto need_header = [&](const Column& c) {
    if (c.by_name && !format_.header)
      throw Error(
          fmt::format("Column '{}' is a name, but the {} files have no header: give a 0-based "
                      "column index, or set header to true.",
                      c.name, name));
  };
  for (const auto& c : text_columns_) need_header(c);
  need_header(label_column_);
  resolve_columns();
}

void RecordParser::resolve_columns(const std::vector<std::string_view>* header) {
  needed_columns_ = 0;
  bool resolved = true;
  auto resolve = [&](Column& c) {
    if (!c.by_name) {
      c.index = static_cast<size_t>(std::stoul(c.name));
    } else if (header != nullptr) {
      auto it = std::find(header->begin(), header->end(), std::string_view(c.name));
      if (it == header->end())
        throw Error(fmt::format("column '{}' is not in the header (columns: {})", c.name,
                                fmt::join(*header, ", ")));
      c.index = static_cast<size_t>(it - header->begin());
    } else {
      resolved = false;
    }
    needed_columns_ = std::max(needed_columns_, c.index + 1);
  };
  for (auto& c : text_columns_) resolve(c);
  resolve(label_column_);
  resolved_ = resolved;
}

void RecordParser::set_header(std::string_view line) {
  if (format_.format != FileFormat::tsv && format_.format != FileFormat::csv) return;
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // a UTF-8 byte order mark
  std::string reason = split(line);
  if (!reason.empty()) throw Error(fmt::format("cannot read the header: {}", reason));
  std::vector<std::string_view> names;
  for (auto f : fields_) names.push_back(trim(f));
  resolve_columns(&names);
}

std::string RecordParser::parse(std::string_view record, Example& out) {
  out.text.clear();
  if (format_.text_only) {
    out.labels.clear();
    append_text(out.text, trim(record));
    return {};
  }
  switch (format_.format) {
    case FileFormat::fasttext:
      return parse_fasttext(record, out);
    case FileFormat::label_first:
      return parse_label_first(record, out);
    case FileFormat::tsv:
    case FileFormat::csv:
      return parse_columns(record, out);
    case FileFormat::jsonl:
      return parse_jsonl(record, out);
  }
  return "unknown format";
}

// Appends piece to text, one space after earlier pieces; applies format.unescape.
void RecordParser::append_text(std::string& text, std::string_view piece) const {
  if (piece.empty()) return;
  if (!text.empty()) text.push_back(' ');
  if (!format_.unescape) {
    text.append(piece.data(), piece.size());
    return;
  }
  for (;;) {
    size_t bs = piece.find('\\');
    if (bs == std::string_view::npos || bs + 1 == piece.size()) break;
    text.append(piece.data(), bs);
    char c = piece[bs + 1];
    if (c == 'n' || c == 't') {
      text.push_back(' ');
    } else if (c == '\\') {
      text.push_back('\\');
    } else {
      text.append(piece.data() + bs, 2);  // not an escape: keep both bytes
    }
    piece.remove_prefix(bs + 2);
  }
  text.append(piece.data(), piece.size());
}

// The text is the words that are not labels, one space between them. Consecutive words
// already one space apart are appended as one piece (the bytes are the same): appended word
// by word, the parse was 11% of a 1M-line run's samples, more than the tokenizer's 9.5%.
std::string RecordParser::parse_fasttext(std::string_view record, Example& out) {
  size_t labels = 0;
  size_t i = 0;
  size_t run_begin = 0, run_end = 0;  // words not yet appended: record[run_begin, run_end)
  const std::string_view prefix = format_.label_prefix;
  while (i < record.size()) {
    while (i < record.size() && is_ascii_space(record[i])) ++i;
    size_t start = i;
    while (i < record.size() && !is_ascii_space(record[i])) ++i;
    std::string_view token = record.substr(start, i - start);
    if (token.empty()) break;
    if (token.substr(0, prefix.size()) == prefix) {
      if (token.size() == prefix.size()) return "empty label";
      set_label(out, labels++, token.substr(prefix.size()));
    } else if (run_end > run_begin && start == run_end + 1 && record[run_end] == ' ') {
      run_end = i;  // one space after the run: the run grows
    } else {
      append_text(out.text, record.substr(run_begin, run_end - run_begin));
      run_begin = start;
      run_end = i;
    }
  }
  append_text(out.text, record.substr(run_begin, run_end - run_begin));
  out.labels.resize(labels);
  // A label with no text is a record (fastText, Hugging Face and scikit-learn train on
  // it; MPQA has 3, CR 4): the text stays empty and the reader counts it.
  if (labels == 0) return "no " + format_.label_prefix + " token";
  return {};
}

// One label, or with format.label_separator a list ("a|b|c"); empty items are ignored, so
// a trailing separator does no harm.
std::string RecordParser::set_label_field(std::string_view field, Example& out) const {
  const std::string& sep = format_.label_separator;
  size_t labels = 0;
  if (sep.empty()) {
    field = trim(field);
    if (!field.empty()) set_label(out, labels++, field);
  } else {
    for (;;) {
      const size_t at = field.find(sep);
      const std::string_view item = trim(field.substr(0, at));
      if (!item.empty()) set_label(out, labels++, item);
      if (at == std::string_view::npos) break;
      field.remove_prefix(at + sep.size());
    }
  }
  out.labels.resize(labels);
  return labels == 0 ? "empty label" : "";
}

std::string RecordParser::parse_label_first(std::string_view record, Example& out) {
  record = trim(record);
  size_t end = 0;
  while (end < record.size() && !is_ascii_space(record[end])) ++end;
  std::string_view text = trim(record.substr(end));
  std::string reason = set_label_field(record.substr(0, end), out);
  if (!reason.empty()) return reason;
  append_text(out.text, text);
  return {};
}

std::string RecordParser::parse_columns(std::string_view record, Example& out) {
  if (!resolved_) return "the header was not read";
  std::string reason = split(record);
  if (!reason.empty()) return reason;
  if (fields_.size() < needed_columns_)
    return fmt::format("expected at least {} columns, found {}", needed_columns_, fields_.size());
  for (const auto& c : text_columns_) append_text(out.text, fields_[c.index]);
  return set_label_field(fields_[label_column_.index], out);
}

std::string RecordParser::split(std::string_view record) {
  if (format_.format == FileFormat::csv) return split_csv(record);
  fields_.clear();
  for (;;) {
    size_t tab = record.find('\t');
    fields_.push_back(record.substr(0, tab));
    if (tab == std::string_view::npos) break;
    record.remove_prefix(tab + 1);
  }
  return {};
}

// RFC 4180. Unquoted cells point into record, quoted ones into cell_buffer_ (reserved
// to the record's size first, so it never reallocates under the views).
std::string RecordParser::split_csv(std::string_view record) {
  fields_.clear();
  cell_buffer_.clear();
  cell_buffer_.reserve(record.size());
  size_t i = 0;
  for (;;) {
    if (i < record.size() && record[i] == '"') {
      size_t start = cell_buffer_.size();
      ++i;
      for (;;) {
        size_t q = record.find('"', i);
        if (q == std::string_view::npos) return "unterminated quoted field";
        cell_buffer_.append(record.data() + i, q - i);
        i = q + 1;
        if (i < record.size() && record[i] == '"') {  // "" is one quote
          cell_buffer_.push_back('"');
          ++i;
        } else {
          break;
        }
      }
      size_t comma = std::min(record.find(',', i), record.size());
      // Text right after the closing quote of a field that spans lines is the sign of an
      // unbalanced quote: the field ran on over the next records until some later quote
      // (RFC 4180 wants a comma or the end of the record there). On one line, such stray
      // text is kept, as Python's csv module does.
      const bool spans_lines = cell_buffer_.find('\n', start) != std::string::npos;
      if (spans_lines && comma > i) {
        return "a quoted field runs over several lines and its closing quote is followed by "
               "text: an unbalanced quote would merge the following records into this one";
      }
      cell_buffer_.append(record.data() + i, comma - i);  // stray text after the quote: kept
      fields_.emplace_back(cell_buffer_.data() + start, cell_buffer_.size() - start);
      i = comma;
    } else {
      size_t comma = std::min(record.find(',', i), record.size());
      fields_.push_back(record.substr(i, comma - i));
      i = comma;
    }
    if (i == record.size()) return {};
    ++i;  // past the comma
  }
}

bool RecordParser::csv_needs_more(std::string_view record, bool in_quote) {
  if (record.find('"') == std::string_view::npos) return in_quote;
  bool field_start = !in_quote;
  for (size_t i = 0; i < record.size(); ++i) {
    char c = record[i];
    if (in_quote) {
      if (c != '"') continue;
      if (i + 1 < record.size() && record[i + 1] == '"') {
        ++i;
      } else {
        in_quote = false;
      }
    } else if (c == ',') {
      field_start = true;
    } else {
      in_quote = c == '"' && field_start;
      field_start = false;
    }
  }
  return in_quote;
}

namespace {

// Appends a JSON scalar's text: strings as they are, numbers in decimal.
bool json_text(const nlohmann::json& v, std::string& out) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    out.append(s);
    return true;
  }
  if (v.is_number()) {
    out.append(v.dump());
    return true;
  }
  return false;
}

}  // namespace

std::string RecordParser::parse_jsonl(std::string_view record, Example& out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(record.begin(), record.end());
  } catch (const nlohmann::json::exception& e) {
    std::string_view what = e.what();
    size_t bracket = what.find("] ");  // drop the "[json.exception.parse_error.101] " tag
    return fmt::format("invalid JSON: {}",
                       bracket == std::string_view::npos ? what : what.substr(bracket + 2));
  }
  if (!j.is_object()) return "expected a JSON object";
  std::string piece;
  for (const auto& c : text_columns_) {
    auto it = j.find(c.name);
    if (it == j.end()) return fmt::format("missing field '{}'", c.name);
    piece.clear();
    if (!json_text(*it, piece)) return fmt::format("field '{}' is not a string or number", c.name);
    append_text(out.text, piece);
  }
  auto it = j.find(label_column_.name);
  if (it == j.end()) return fmt::format("missing field '{}'", label_column_.name);
  size_t labels = 0;
  std::string reason;
  auto add_label = [&](const nlohmann::json& v) {
    piece.clear();
    if (!json_text(v, piece)) {
      reason =
          fmt::format("field '{}' is not a string, number or array of strings", label_column_.name);
    } else if (trim(piece).empty()) {
      reason = "empty label";
    } else {
      set_label(out, labels++, trim(piece));
    }
    return reason.empty();
  };
  if (it->is_array()) {
    for (const auto& v : *it)
      if (!add_label(v)) return reason;
  } else if (!add_label(*it)) {
    return reason;
  }
  out.labels.resize(labels);
  if (labels == 0) return "empty label list";
  return {};
}

}  // namespace sift
