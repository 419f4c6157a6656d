// Splits one record of a data file into its text and labels, per the file's format.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/example.h"
#include "datasets/text_format.h"

namespace sift {

class RecordParser {
 public:
  // Validates the format: tsv, csv and jsonl need text_columns and label_column. Named
  // tsv/csv columns need format.header. Throws sift::Error with a full sentence.
  explicit RecordParser(TextFormat format);

  // Resolves column names from a header line (tsv, csv; ignored otherwise). Throws
  // sift::Error("column 'x' is not in the header (columns: a, b, c)").
  void set_header(std::string_view line);

  // Parses one record into out.text and out.labels (out.line is left alone). Returns ""
  // on success, else a short reason. Never throws for a bad record.
  std::string parse(std::string_view record, Example& out);

  // csv only: true when the record ends inside an open quoted field (the record
  // continues on the next physical line).
  // in_quote: the text continues a record whose last line ended inside a quoted field
  // (lets a reader scan each new physical line once, not the whole record again).
  static bool csv_needs_more(std::string_view record, bool in_quote = false);

 private:
  struct Column {
    std::string name;  // as configured
    size_t index = 0;  // 0-based column, once resolved
    bool by_name = false;
  };

  // The columns' indices: by number, or by name in `header` (the names of a header line).
  void resolve_columns(const std::vector<std::string_view>* header = nullptr);
  std::string split(std::string_view record);
  std::string split_csv(std::string_view record);
  std::string parse_fasttext(std::string_view record, Example& out);
  std::string parse_label_first(std::string_view record, Example& out);
  std::string parse_columns(std::string_view record, Example& out);
  std::string parse_jsonl(std::string_view record, Example& out);
  void append_text(std::string& text, std::string_view piece) const;
  std::string set_label_field(std::string_view field, Example& out) const;

  TextFormat format_;
  std::vector<Column> text_columns_;
  Column label_column_;
  bool resolved_ = false;                 // every column has an index
  size_t needed_columns_ = 0;             // 1 + the largest column index
  std::vector<std::string_view> fields_;  // the last record's cells
  std::string cell_buffer_;               // unquoted csv cells that fields_ point into
};

}  // namespace sift
