#include "datasets/record_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <string_view>

#include "core/error.h"
#include "core/splitmix.h"
#include "datasets/encoding.h"
#include "datasets/example_stream.h"

namespace sift {
namespace {

bool is_blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n\v\f") == std::string::npos;
}

// Editors on Windows start UTF-8 files with a byte order mark; it is not text.
void strip_bom(std::string& line, uint64_t line_number) {
  if (line_number == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
}

const std::vector<std::string>& checked_names(const TextFormat& format,
                                              const std::vector<std::string>& names) {
  if (format.label_mapping != LabelMapping::name && names.empty())
    throw Error(
        fmt::format("label_mapping {} turns label values into names from the label list, but no "
                    "label names were given.",
                    to_string(format.label_mapping)));
  return names;
}

}  // namespace

namespace {

std::vector<FilePiece> whole_files(std::vector<std::string> files) {
  std::vector<FilePiece> pieces;
  for (auto& f : files) pieces.push_back({std::move(f), 0, FilePiece::kToEnd});
  return pieces;
}

}  // namespace

RecordReader::RecordReader(std::vector<std::string> files, TextFormat format,
                           std::vector<std::string> label_names)
    : RecordReader(whole_files(std::move(files)), std::move(format), std::move(label_names)) {}

RecordReader::RecordReader(std::vector<FilePiece> pieces, TextFormat format,
                           std::vector<std::string> label_names)
    : pieces_(std::move(pieces)),
      format_(std::move(format)),
      label_names_(checked_names(format_, label_names)),
      parser_(format_) {}

const std::string& RecordReader::current_file() const {
  static const std::string kNone;
  if (reader_) return reader_->path();
  return next_file_ > 0 ? pieces_[next_file_ - 1].path : kNone;
}

ReadPosition RecordReader::position() const {
  if (!reader_) return {next_file_, next_file_ < pieces_.size() ? pieces_[next_file_].begin : 0};
  return {next_file_ - 1, reader_->offset()};
}

void RecordReader::seek(const ReadPosition& position) {
  reader_.reset();
  next_file_ = static_cast<size_t>(position.piece);
  if (next_file_ >= pieces_.size()) return;
  open_piece(next_file_, position.offset, position.offset == pieces_[next_file_].begin ? false : true);
  ++next_file_;
}

std::string RecordReader::location(const Example& record) const {
  const uint64_t line =
      record.line != 0 ? record.line : LineReader::count_lines(current_file(), record.offset) + 1;
  return fmt::format("{}:{}", current_file(), line);
}

void RecordReader::rewind() {
  reader_.reset();
  next_file_ = 0;
  skipped_ = 0;
  records_ = 0;
}

bool RecordReader::next(Example& out) {
  for (;;) {
    if (!reader_ && !open_next_file()) return false;
    std::string reason;
    if (!read_record(out, reason)) {
      reader_.reset();  // end of this file
      continue;
    }
    if (reason.empty()) reason = map_labels(out);
    if (reason.empty()) {
      ++records_;
      return true;
    }
    bad_record(out, reason);
  }
}

bool RecordReader::open_next_file() {
  if (next_file_ >= pieces_.size()) return false;
  open_piece(next_file_, pieces_[next_file_].begin, false);
  ++next_file_;
  return true;
}

// Opens a piece at `offset`. A piece that starts inside the file drops the partial line
// before its first record: that line belongs to the piece before it.
void RecordReader::open_piece(size_t index, uint64_t offset, bool at_line_start) {
  const FilePiece& piece = pieces_[index];
  reader_ = std::make_unique<LineReader>(piece.path, format_.max_line_bytes);
  piece_end_ = piece.end;
  if (format_.header) read_header();
  if (offset <= reader_->offset()) return;
  if (at_line_start) {
    reader_->skip_to(offset);
    return;
  }
  reader_->skip_to(offset - 1);
  reader_->next(line_);
}

// The first non-blank line of a file names its columns; errors here are the config's.
void RecordReader::read_header() {
  while (reader_->next(line_)) {
    if (is_blank(line_)) continue;
    if (reader_->last_line_too_long())
      throw Error(fmt::format("{}:{}: header line longer than {} bytes", reader_->path(),
                              reader_->line_number(), format_.max_line_bytes));
    strip_bom(line_, reader_->line_number());
    to_utf8(line_, format_.encoding, text_);
    try {
      parser_.set_header(text_);
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", reader_->path(), reader_->line_number(), e.what()));
    }
    return;
  }
}

// Reads one record (several physical lines for quoted csv newlines) and parses it into
// out; false at end of file. reason is "" or why the record is malformed.
bool RecordReader::read_record(Example& out, std::string& reason) {
  for (;;) {
    do {
      out.offset = reader_->offset();
      if (out.offset >= piece_end_ || !reader_->next(line_)) return false;
    } while (!reader_->last_line_too_long() && is_blank(line_));
    out.line = reader_->line_number();
    const uint64_t max_bytes = format_.max_line_bytes;
    if (reader_->last_line_too_long() && !format_.truncate_long_lines) {
      reason = fmt::format("line longer than {} bytes", max_bytes);
      return true;
    }
    strip_bom(line_, out.line);
    const std::string* record = &line_;
    if (format_.format == FileFormat::csv && RecordParser::csv_needs_more(line_)) {
      if (!join_csv_lines()) {
        reason = fmt::format("quoted field runs past {} bytes", max_bytes);
        return true;
      }
      record = &raw_;  // at end of file inside quotes the parser reports the open field
    }
    if (!in_share(*record)) continue;
    to_utf8(*record, format_.encoding, text_);
    reason = parser_.parse(text_, out);
    return true;
  }
}

void RecordReader::keep_share(int64_t count, int64_t index) {
  if (count > 1 && (index < 0 || index >= count)) {
    throw Error(fmt::format("record share {} is outside 0..{}", index, count - 1));
  }
  share_count_ = std::max<int64_t>(count, 1);
  share_index_ = index;
}

// Decided on the bytes as read, before decoding and parsing: the parse of records that go
// to another thread was most of what sharing cost (1M lines, two threads: parse_fasttext
// 12% of the samples when each thread parsed every line).
bool RecordReader::in_share(const std::string& record) const {
  if (share_count_ <= 1) return true;
  return fold_of(mix64(std::hash<std::string_view>{}(record)), share_count_) == share_index_;
}

// Joins the physical lines of a csv record whose line_ ends inside a quoted field into
// raw_. When the record grows past max_line_bytes, consumes the rest of it unbuffered
// and returns false.
bool RecordReader::join_csv_lines() {
  raw_ = line_;
  bool fits = true;
  bool open = true;
  while (open && reader_->next(line_)) {
    open = RecordParser::csv_needs_more(line_, true);
    fits = fits && !reader_->last_line_too_long() &&
           raw_.size() + 1 + line_.size() <= format_.max_line_bytes;
    if (!fits) continue;
    raw_ += '\n';
    raw_ += line_;
  }
  return fits;
}

// label_mapping index0/index1: label values are indices into label_names_.
std::string RecordReader::map_labels(Example& out) const {
  if (format_.label_mapping == LabelMapping::name) return {};
  const uint64_t first = format_.label_mapping == LabelMapping::index1 ? 1 : 0;
  const uint64_t last = first + label_names_.size() - 1;
  for (auto& label : out.labels) {
    uint64_t k = 0;
    auto [end, ec] = std::from_chars(label.data(), label.data() + label.size(), k);
    if (ec != std::errc() || end != label.data() + label.size())
      return fmt::format("label '{}' is not an index {}..{}", label, first, last);
    if (k < first || k > last)
      return fmt::format("label index {} is out of range {}..{}", k, first, last);
    label = label_names_[k - first];
  }
  return {};
}

void RecordReader::bad_record(const Example& record, const std::string& reason) {
  if (format_.on_bad_line == BadLinePolicy::error)
    throw Error(fmt::format("{}: {}", location(record), reason));
  ++skipped_;
}

}  // namespace sift
