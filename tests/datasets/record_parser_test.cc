#include "datasets/record_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace sift {
namespace record_parser_test {

using Labels = std::vector<std::string>;

TextFormat columns(FileFormat f, std::vector<std::string> text, std::string label,
                   bool header = false) {
  TextFormat t;
  t.format = f;
  t.text_columns = std::move(text);
  t.label_column = std::move(label);
  t.header = header;
  return t;
}

TextFormat plain(FileFormat f) {
  TextFormat t;
  t.format = f;
  return t;
}

// fastText's -label (data.label_prefix): only tokens with that prefix are labels.
TEST(RecordParser, FasttextLabelsAreTheTokensWithTheGivenPrefix) {
  TextFormat f = plain(FileFormat::fasttext);
  f.label_prefix = "#";
  RecordParser p(f);
  Example ex;
  EXPECT_EQ(p.parse("#pos __label__x great #neg film", ex), "");
  EXPECT_EQ(ex.text, "__label__x great film");
  EXPECT_EQ(ex.labels, (Labels{"pos", "neg"}));
  EXPECT_EQ(p.parse("__label__a text", ex), "no # token");
  EXPECT_EQ(p.parse("# text", ex), "empty label");
}

TEST(RecordParser, FasttextMultiLabel) {
  RecordParser p(plain(FileFormat::fasttext));
  Example ex;
  EXPECT_EQ(p.parse("__label__a  some\ttext __label__b here ", ex), "");
  EXPECT_EQ(ex.text, "some text here");
  EXPECT_EQ(ex.labels, (Labels{"a", "b"}));
  EXPECT_EQ(p.parse("__label__x one", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"x"}));  // labels from the earlier record are gone
  EXPECT_EQ(p.parse("no labels here", ex), "no __label__ token");
  EXPECT_EQ(p.parse("__label__ text", ex), "empty label");
  // A label without text is a record with an empty text (as fastText reads it).
  EXPECT_EQ(p.parse("__label__a", ex), "");
  EXPECT_EQ(ex.text, "");
  EXPECT_EQ(ex.labels, (Labels{"a"}));
}

// The words between labels are appended as runs; the text is the same as word by word:
// every run of spaces, tabs and labels becomes one space.
TEST(RecordParser, FasttextTextIsTheWordsOneSpaceApart) {
  RecordParser p(plain(FileFormat::fasttext));
  Example ex;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"__label__a one two three", "one two three"},
      {"  __label__a one  two\tthree\t ", "one two three"},
      {"one two __label__a three four", "one two three four"},
      {"one __label__a __label__b two", "one two"},
      {"one\vtwo \fthree __label__a", "one two three"},
      {"__label__a x", "x"},
      {"__label__a", ""},
  };
  for (const auto& [record, text] : cases) {
    ex = Example();
    EXPECT_EQ(p.parse(record, ex), "") << record;
    EXPECT_EQ(ex.text, text) << record;
  }
  // With unescape, escapes inside a run and a backslash before a space are kept as before.
  TextFormat f = plain(FileFormat::fasttext);
  f.unescape = true;
  RecordParser u(f);
  EXPECT_EQ(u.parse("__label__a a\\nb c\\ d \\\\e", ex), "");
  EXPECT_EQ(ex.text, "a b c\\ d \\e");
}

TEST(RecordParser, LabelFirst) {
  RecordParser p(plain(FileFormat::label_first));
  Example ex;
  EXPECT_EQ(p.parse("5 How far is it ?  ", ex), "");
  EXPECT_EQ(ex.text, "How far is it ?");
  EXPECT_EQ(ex.labels, (Labels{"5"}));
  EXPECT_EQ(p.parse("ham\tGo until jurong", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"ham"}));
  EXPECT_EQ(ex.text, "Go until jurong");
  EXPECT_EQ(p.parse("lonely  ", ex), "");
  EXPECT_EQ(ex.text, "");
  EXPECT_EQ(ex.labels, (Labels{"lonely"}));
}

TEST(RecordParser, TsvByIndexAndByHeaderName) {
  RecordParser by_index(columns(FileFormat::tsv, {"1", "2"}, "0"));
  Example ex;
  EXPECT_EQ(by_index.parse("pos\ttitle\tbody text\textra", ex), "");
  EXPECT_EQ(ex.text, "title body text");
  EXPECT_EQ(ex.labels, (Labels{"pos"}));
  EXPECT_EQ(by_index.parse("pos\ttitle", ex), "expected at least 3 columns, found 2");
  EXPECT_EQ(by_index.parse(" \ttitle\tbody", ex), "empty label");

  RecordParser by_name(columns(FileFormat::tsv, {"sentence"}, "label", true));
  by_name.set_header("\xEF\xBB\xBFlabel\tsentence");
  EXPECT_EQ(by_name.parse("1\tit 's charming . ", ex), "");
  EXPECT_EQ(ex.text, "it 's charming . ");  // text is kept as is
  EXPECT_EQ(ex.labels, (Labels{"1"}));
}

TEST(RecordParser, MissingHeaderColumnIsAnError) {
  RecordParser p(columns(FileFormat::tsv, {"text"}, "label", true));
  try {
    p.set_header("sentence\tlabel\tid");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "column 'text' is not in the header (columns: sentence, label, id)");
  }
}

TEST(RecordParser, BadConfigurationsThrow) {
  EXPECT_THROW(RecordParser(columns(FileFormat::tsv, {}, "0")), Error);
  EXPECT_THROW(RecordParser(columns(FileFormat::csv, {"1"}, "")), Error);
  EXPECT_THROW(RecordParser(columns(FileFormat::jsonl, {}, "label")), Error);
  try {
    RecordParser p(columns(FileFormat::csv, {"text"}, "0", false));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("Column 'text' is a name, but the csv files have no header"),
        std::string::npos);
  }
}

TEST(RecordParser, CsvQuoting) {
  RecordParser p(columns(FileFormat::csv, {"1", "2"}, "0"));
  Example ex;
  EXPECT_EQ(p.parse("\"3\",\"Hello, world\",\"She said \"\"hi\"\"\nthen left\"", ex), "");
  EXPECT_EQ(ex.text, "Hello, world She said \"hi\"\nthen left");
  EXPECT_EQ(ex.labels, (Labels{"3"}));
  EXPECT_EQ(p.parse("4,plain,cells", ex), "");
  EXPECT_EQ(ex.text, "plain cells");
  EXPECT_EQ(p.parse("4,,only body", ex), "");
  EXPECT_EQ(ex.text, "only body");  // an empty cell adds no space
  EXPECT_EQ(p.parse("4,\"open, never closed", ex), "unterminated quoted field");
  EXPECT_EQ(p.parse("4,a", ex), "expected at least 3 columns, found 2");
}

TEST(RecordParser, CsvNeedsMore) {
  EXPECT_FALSE(RecordParser::csv_needs_more("a,b,c"));
  EXPECT_FALSE(RecordParser::csv_needs_more("\"a\",\"b \"\"q\"\"\""));
  EXPECT_TRUE(RecordParser::csv_needs_more("\"a\",\"b, and"));
  EXPECT_TRUE(RecordParser::csv_needs_more("1,\"ends with an escaped quote \"\""));
  EXPECT_FALSE(RecordParser::csv_needs_more("1,not\"quoted"));  // a quote inside a cell is text
  EXPECT_FALSE(RecordParser::csv_needs_more("\"line\nbreak\",x"));
  // Continuing a record that is inside quotes: a lone quote closes, "" does not.
  EXPECT_TRUE(RecordParser::csv_needs_more("still inside", true));
  EXPECT_FALSE(RecordParser::csv_needs_more("closes here\",next", true));
  EXPECT_TRUE(RecordParser::csv_needs_more("an \"\" escape", true));
}

TEST(RecordParser, JsonlLabels) {
  RecordParser p(columns(FileFormat::jsonl, {"title", "body"}, "label"));
  Example ex;
  EXPECT_EQ(p.parse(R"({"title": "Hi", "body": "there", "label": "greeting"})", ex), "");
  EXPECT_EQ(ex.text, "Hi there");
  EXPECT_EQ(ex.labels, (Labels{"greeting"}));
  EXPECT_EQ(p.parse(R"({"title": "n", "body": 42, "label": 3})", ex), "");
  EXPECT_EQ(ex.text, "n 42");
  EXPECT_EQ(ex.labels, (Labels{"3"}));
  EXPECT_EQ(p.parse(R"({"title": "m", "body": "x", "label": ["a", "b"]})", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"a", "b"}));
  EXPECT_EQ(p.parse(R"({"title": "m", "body": "x"})", ex), "missing field 'label'");
  EXPECT_EQ(p.parse(R"({"title": "m", "body": "x", "label": " "})", ex), "empty label");
  EXPECT_EQ(p.parse(R"({"title": "m", "body": null, "label": "a"})", ex),
            "field 'body' is not a string or number");
  EXPECT_EQ(p.parse(R"([1, 2])", ex), "expected a JSON object");
  std::string reason = p.parse(R"({"title": "m", )", ex);
  EXPECT_EQ(reason.rfind("invalid JSON: ", 0), 0u) << reason;
}

TEST(RecordParser, Unescape) {
  TextFormat f = columns(FileFormat::tsv, {"1"}, "0");
  f.unescape = true;
  RecordParser p(f);
  Example ex;
  EXPECT_EQ(p.parse("sci\tline one\\nline\\ttwo \\\\ path\\x end\\", ex), "");
  EXPECT_EQ(ex.text, "line one line two \\ path\\x end\\");
  f.unescape = false;
  RecordParser keep(f);
  EXPECT_EQ(keep.parse("sci\ta\\nb", ex), "");
  EXPECT_EQ(ex.text, "a\\nb");
}

TEST(RecordParser, LabelListColumnWithSeparator) {
  TextFormat tsv = columns(FileFormat::tsv, {"1"}, "0");
  tsv.label_separator = "|";
  RecordParser p(tsv);
  Example ex;
  EXPECT_EQ(p.parse("sports| politics |\tthe match and the vote", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"sports", "politics"}));  // trimmed, trailing | ignored
  EXPECT_EQ(p.parse("tech\tone label", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"tech"}));
  EXPECT_EQ(p.parse(" | \ttext", ex), "empty label");

  TextFormat csv = columns(FileFormat::csv, {"text"}, "labels", true);
  csv.label_separator = ",";
  RecordParser c(csv);
  c.set_header("text,labels");
  EXPECT_EQ(c.parse("\"a, quoted text\",\"x,y,z\"", ex), "");
  EXPECT_EQ(ex.text, "a, quoted text");
  EXPECT_EQ(ex.labels, (Labels{"x", "y", "z"}));

  TextFormat first = plain(FileFormat::label_first);
  first.label_separator = ",";
  RecordParser f(first);
  EXPECT_EQ(f.parse("pos,funny a good film", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"pos", "funny"}));
  EXPECT_EQ(ex.text, "a good film");
}

TEST(RecordParser, WithoutSeparatorALabelListIsOneLabel) {
  RecordParser p(columns(FileFormat::tsv, {"1"}, "0"));
  Example ex;
  EXPECT_EQ(p.parse("a,b\ttext", ex), "");
  EXPECT_EQ(ex.labels, (Labels{"a,b"}));
}

}  // namespace record_parser_test
}  // namespace sift
