#include "datasets/record_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/encoding.h"
#include "tests/test_files.h"

namespace sift {
namespace record_reader_test {

using sift::testing::make_temp_dir;

using Labels = std::vector<std::string>;

std::string write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TextFormat columns(FileFormat f, std::vector<std::string> text, std::string label,
                   bool header = false) {
  TextFormat t;
  t.format = f;
  t.text_columns = std::move(text);
  t.label_column = std::move(label);
  t.header = header;
  return t;
}

std::vector<Example> read_all(RecordReader& reader) {
  std::vector<Example> all;
  Example ex;
  while (reader.next(ex)) all.push_back(ex);
  return all;
}

std::string error_of(RecordReader& reader) {
  try {
    read_all(reader);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Small cuts of the public data sets, committed with their source (tests/data/README.md).
const std::string kData = std::string(SIFT_SOURCE_DIR) + "/tests/data";

TEST(RecordReader, CsvRecordSpanningTwoLinesKeepsItsFirstLineNumber) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string path = write_file(dir + "/a.csv",
                                "label,title,body\r\n"
                                "1,\"Hello, you\",\"say \"\"hi\"\"\r\nsecond line\"\r\n"
                                "\r\n"
                                "2,plain,text\r\n");
  RecordReader reader({path}, columns(FileFormat::csv, {"title", "body"}, "label", true));
  auto all = read_all(reader);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].text, "Hello, you say \"hi\"\nsecond line");
  EXPECT_EQ(all[0].labels, (Labels{"1"}));
  EXPECT_EQ(all[0].line, 2u);
  EXPECT_EQ(all[1].line, 5u);
  EXPECT_EQ(reader.records(), 2u);
}

TEST(RecordReader, HeaderIsReadInEveryFile) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string a = write_file(dir + "/a.tsv", "text\tlabel\nfirst\tx\n");
  std::string b = write_file(dir + "/b.tsv", "label\ttext\ny\tsecond\n");  // other column order
  std::string empty = write_file(dir + "/empty.tsv", "");
  std::string only_header = write_file(dir + "/h.tsv", "text\tlabel\n");
  RecordReader reader({a, empty, only_header, b},
                      columns(FileFormat::tsv, {"text"}, "label", true));
  auto all = read_all(reader);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].text, "second");
  EXPECT_EQ(all[1].labels, (Labels{"y"}));
  EXPECT_EQ(reader.current_file(), b);
  reader.rewind();
  EXPECT_EQ(read_all(reader).size(), 2u);
  EXPECT_EQ(reader.records(), 2u);
}

TEST(RecordReader, MissingHeaderColumnNamesTheFile) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string a = write_file(dir + "/a.tsv", "sentence\tlabel\nfirst\tx\n");
  RecordReader reader({a}, columns(FileFormat::tsv, {"text"}, "label", true));
  EXPECT_EQ(error_of(reader),
            a + ":1: column 'text' is not in the header (columns: sentence, label)");
}

TEST(RecordReader, ErrorPolicyThrowsFileAndLine) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string path =
      write_file(dir + "/a.txt", "__label__a good\n\n   \nbad line\n__label__b fine\n");
  TextFormat f;
  RecordReader reader({path}, f);
  Example ex;
  ASSERT_TRUE(reader.next(ex));
  EXPECT_EQ(error_of(reader), path + ":4: no __label__ token");
}

TEST(RecordReader, SkipPolicyCountsBadRecords) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string path =
      write_file(dir + "/a.txt", "__label__a good\nbad line\n__label__b " + std::string(200, 'x') +
                                     "\n__label__c fine\nalso bad\n");
  TextFormat f;
  f.on_bad_line = BadLinePolicy::skip;
  f.max_line_bytes = 100;
  RecordReader reader({path}, f);
  auto all = read_all(reader);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].labels, (Labels{"c"}));
  EXPECT_EQ(all[1].line, 4u);
  EXPECT_EQ(reader.skipped(), 3u);
  EXPECT_EQ(reader.records(), 2u);

  f.on_bad_line = BadLinePolicy::error;
  RecordReader strict({path}, f);
  EXPECT_EQ(error_of(strict), path + ":2: no __label__ token");
  std::string long_path =
      write_file(dir + "/long.txt", "__label__b " + std::string(200, 'x') + "\n");
  RecordReader too_long({long_path}, f);
  EXPECT_EQ(error_of(too_long), long_path + ":1: line longer than 100 bytes");
}

TEST(RecordReader, IndexLabelMapping) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string path = write_file(dir + "/a.csv", "\"2\",\"t\"\n\"4\",\"u\"\n\"7\",\"v\"\n");
  TextFormat f = columns(FileFormat::csv, {"1"}, "0");
  f.label_mapping = LabelMapping::index1;
  Labels names = {"World", "Sports", "Business", "Sci/Tech"};
  RecordReader reader({path}, f, names);
  Example ex;
  ASSERT_TRUE(reader.next(ex));
  EXPECT_EQ(ex.labels, (Labels{"Sports"}));
  ASSERT_TRUE(reader.next(ex));
  EXPECT_EQ(ex.labels, (Labels{"Sci/Tech"}));
  EXPECT_EQ(error_of(reader), path + ":3: label index 7 is out of range 1..4");
  f.label_mapping = LabelMapping::index0;
  RecordReader zero({path}, f, names);
  ASSERT_TRUE(zero.next(ex));
  EXPECT_EQ(ex.labels, (Labels{"Business"}));
  EXPECT_THROW(RecordReader({path}, f), Error);  // index mapping without names
}

TEST(RecordReader, Latin1AndGzip) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string path = write_file(dir + "/a.txt", "1 caf\xe9 au lait\n");
  TextFormat f;
  f.format = FileFormat::label_first;
  f.encoding = TextEncoding::latin1;
  RecordReader reader({path}, f);
  auto all = read_all(reader);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].text, "caf\xc3\xa9 au lait");
  f.encoding = TextEncoding::utf8;
  RecordReader as_utf8({path}, f);
  all = read_all(as_utf8);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].text, "caf\xef\xbf\xbd au lait");
}

TEST(RecordReader, CsvRecordPastTheLimitIsSkippedWhole) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string body;
  for (int i = 0; i < 20; ++i)
    body += "a line inside one quoted field, " + std::to_string(i) + "\n";
  std::string path =
      write_file(dir + "/a.csv", "1,\"three\nphysical\nlines\"\n2,\"" + body + "\"\n3,after\n");
  TextFormat f = columns(FileFormat::csv, {"1"}, "0");
  f.max_line_bytes = 200;
  f.on_bad_line = BadLinePolicy::skip;
  RecordReader reader({path}, f);
  auto all = read_all(reader);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].text, "three\nphysical\nlines");
  EXPECT_EQ(all[1].text, "after");
  EXPECT_EQ(all[1].line, 25u);
  EXPECT_EQ(reader.skipped(), 1u);
  f.on_bad_line = BadLinePolicy::error;
  RecordReader strict({path}, f);
  EXPECT_EQ(error_of(strict), path + ":4: quoted field runs past 200 bytes");
}

TEST(RecordReader, UnbalancedQuoteMidFileIsAnErrorNotAMergeOfRecords) {
  std::string dir = make_temp_dir("sift_record_reader");
  // Line 2 opens a quote it never closes; the quote that opens line 4's field closed it.
  std::string path =
      write_file(dir + "/a.csv", "1,ok\n2,\"unbalanced\n3,plain\n4,\"quoted\"\n5,x\n");
  RecordReader reader({path}, columns(FileFormat::csv, {"1"}, "0"));
  Example ex;
  ASSERT_TRUE(reader.next(ex));
  EXPECT_EQ(error_of(reader).rfind(path + ":2: a quoted field runs over several lines", 0), 0u);
  // Skipped when bad lines are skipped: counted, and the records after it are read.
  TextFormat f = columns(FileFormat::csv, {"1"}, "0");
  f.on_bad_line = BadLinePolicy::skip;
  RecordReader lenient({path}, f);
  auto all = read_all(lenient);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].text, "x");
  EXPECT_EQ(lenient.skipped(), 1u);
}

TEST(RecordReader, UnterminatedQuoteAtEndOfFile) {
  std::string dir = make_temp_dir("sift_record_reader");
  std::string path = write_file(dir + "/a.csv", "1,ok\n2,\"never\nclosed\n");
  RecordReader reader({path}, columns(FileFormat::csv, {"1"}, "0"));
  Example ex;
  ASSERT_TRUE(reader.next(ex));
  EXPECT_EQ(error_of(reader), path + ":2: unterminated quoted field");
}

TEST(RecordReader, RealAgNewsCsv) {
  std::vector<std::string> names;
  std::ifstream classes(kData + "/ag_news/classes.txt");
  for (std::string line; std::getline(classes, line);) names.push_back(line);
  ASSERT_EQ(names.size(), 4u);
  TextFormat f = columns(FileFormat::csv, {"1", "2"}, "0");
  f.label_mapping = LabelMapping::index1;
  RecordReader reader({kData + "/ag_news/test_sample.csv"}, f, names);
  std::map<std::string, int> per_class;
  Example ex;
  while (reader.next(ex)) per_class[ex.labels.at(0)]++;
  EXPECT_EQ(reader.records(), 40u);
  ASSERT_EQ(per_class.size(), 4u);
  for (const auto& [name, n] : per_class) EXPECT_EQ(n, 10) << name;
}

TEST(RecordReader, RealTrecLatin1) {
  TextFormat f;
  f.format = FileFormat::label_first;
  f.encoding = TextEncoding::latin1;
  // The first 600 training questions: line 66 has a Latin-1 byte (0x8d, "sister\x8dcity").
  RecordReader reader({kData + "/trec/TREC.train.sample"}, f);
  Example ex;
  size_t non_ascii = 0;
  while (reader.next(ex)) {
    EXPECT_TRUE(is_valid_utf8(ex.text)) << ex.line;
    EXPECT_EQ(ex.labels.size(), 1u);
    for (unsigned char c : ex.text) non_ascii += c >= 0x80;
  }
  EXPECT_EQ(reader.records(), 600u);
  EXPECT_GT(non_ascii, 0u);
}

TEST(RecordReader, RealSst2GlueValidation) {
  RecordReader reader({kData + "/sst2/glue_validation_sample.tsv"},
                      columns(FileFormat::tsv, {"sentence"}, "label", true));
  std::map<std::string, int> per_class;
  Example ex;
  while (reader.next(ex)) per_class[ex.labels.at(0)]++;
  EXPECT_EQ(reader.records(), 40u);
  EXPECT_EQ(per_class.size(), 2u);
}

}  // namespace record_reader_test
}  // namespace sift
