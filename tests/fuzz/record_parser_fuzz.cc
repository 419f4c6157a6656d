// The record parser (datasets/record_parser) on any bytes, in every format: the first
// byte picks the format and options, the rest is one header line and records.
#include <string_view>

#include "datasets/record_parser.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace sift;
  const uint8_t pick = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  TextFormat format;
  const FileFormat formats[] = {FileFormat::fasttext, FileFormat::tsv, FileFormat::csv,
                                FileFormat::jsonl, FileFormat::label_first};
  format.format = formats[pick % 5];
  if (format.format == FileFormat::jsonl) {
    format.text_columns = {"text"};
    format.label_column = "label";
  } else if (format.format == FileFormat::tsv || format.format == FileFormat::csv) {
    format.header = (pick & 0x10) != 0;
    format.text_columns = {format.header ? "text" : "1"};
    format.label_column = format.header ? "label" : "0";
  }
  if (pick & 0x20) format.label_separator = ",";
  format.unescape = (pick & 0x40) != 0;
  format.max_line_bytes = 4096;
  return fuzz::refusals_are_fine([&] {
    RecordParser parser(format);
    size_t start = 0;
    bool first = true;
    while (start <= rest.size()) {
      size_t end = rest.find('\n', start);
      if (end == std::string_view::npos) end = rest.size();
      const std::string_view line = rest.substr(start, end - start);
      if (first && format.header) {
        parser.set_header(line);
      } else {
        Example e;
        parser.parse(line, e);
        RecordParser::csv_needs_more(line, (pick & 0x80) != 0);
      }
      first = false;
      start = end + 1;
    }
  });
}
