#include "config/loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/options.h"
#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace loader_test {

using sift::testing::make_temp_dir;

using sift::testing::error_of;

// gmock is not linked: a substring check that prints both strings on failure.
std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message of the sift::Error that `f` throws; fails the test if it throws none.
class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("sift_loader"); }
  std::string config(const std::string& text) { return write_file(dir_ + "/c.yaml", text); }
  std::string dir_;
};

TEST_F(LoaderTest, ReadsNestedKeysAndRecordsTheirOrigin) {
  const std::string path = config(
      "train:\n"
      "  epochs: 7\n"
      "  optimizer:\n"
      "    lr: 0.25\n"
      "data:\n"
      "  on_bad_line: skip\n");
  const SiftConfig c = load_config(path);
  EXPECT_EQ(c.train.epochs, 7);
  EXPECT_DOUBLE_EQ(c.train.optimizer.lr, 0.25);
  EXPECT_EQ(c.data.on_bad_line, BadLinePolicy::skip);
  EXPECT_EQ(c.train.batch_size, 32);  // untouched default
  EXPECT_EQ(c.origin.at("train.epochs"), path + ":2");
  EXPECT_EQ(c.origin.at("train.optimizer.lr"), path + ":4");
  EXPECT_TRUE(is_set(c, "train.epochs"));
  EXPECT_FALSE(is_set(c, "train.batch_size"));
  EXPECT_EQ(c.source, path);
}

TEST_F(LoaderTest, EmptyPathGivesDefaults) {
  const SiftConfig c = load_config("");
  EXPECT_EQ(c.train.epochs, 5);
  EXPECT_EQ(c.model.type, "fasttext");
  EXPECT_TRUE(c.origin.empty());
}

TEST_F(LoaderTest, UnknownKeyNamesKeyLineAndClosestKnownKey) {
  const std::string path = config("train:\n  epochs: 3\n  epoch: 3\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":3");
  EXPECT_CONTAINS(m, "unknown option 'train.epoch'");
  EXPECT_CONTAINS(m, "did you mean 'train.epochs'");
}

TEST_F(LoaderTest, UnknownNestedKeySuggestsClosestKey) {
  const std::string path = config("train:\n  optimizer:\n    learning_rat: 0.1\n    lr2: 1\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":3");
  EXPECT_CONTAINS(m, "'train.optimizer.learning_rat'");
}

TEST_F(LoaderTest, WrongTypeNamesKeyLineAndExpectedType) {
  const std::string path = config("run:\n  seed: 1\ntrain:\n  epochs: many\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":4");
  EXPECT_CONTAINS(m, "'train.epochs'");
  EXPECT_CONTAINS(m, "expects an integer");
  EXPECT_CONTAINS(m, "'many'");
}

TEST_F(LoaderTest, WrongTypeForEachKind) {
  struct Case {
    std::string yaml, key, expected;
  };
  const std::vector<Case> cases = {
      {"train:\n  optimizer:\n    lr: fast\n", "train.optimizer.lr", "a number"},
      {"tokenizer:\n  lowercase: maybe\n", "tokenizer.lowercase", "a boolean"},
      {"run:\n  name: [a, b]\n", "run.name", "a string"},
      {"data:\n  labels: {a: 1}\n", "data.labels", "a string or a list of strings"},
      {"train:\n  epochs: 2.5\n", "train.epochs", "an integer"},
      {"train:\n  epochs: \"3\"\n", "train.epochs", "an integer"},  // quoted: a string
      {"train:\n  epochs:\n", "train.epochs", "an integer"},        // nothing
  };
  for (const auto& c : cases) {
    const std::string path = config(c.yaml);
    const std::string m = error_of([&] { load_config(path); });
    EXPECT_CONTAINS(m, "'" + c.key + "'") << c.yaml;
    EXPECT_CONTAINS(m, "expects " + c.expected) << c.yaml;
    EXPECT_CONTAINS(m, path + ":") << c.yaml;
  }
}

TEST_F(LoaderTest, GroupGivenAScalarIsRefused) {
  const std::string path = config("train: 5\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":1");
  EXPECT_CONTAINS(m, "'train' is a group of options");
}

TEST_F(LoaderTest, TopLevelMustBeAMapping) {
  const std::string path = config("- a\n- b\n");
  EXPECT_CONTAINS(error_of([&] { load_config(path); }), "must be a YAML mapping");
}

TEST_F(LoaderTest, OutOfRangeNamesKeyAndOrigin) {
  {
    const std::string path = config("train:\n  optimizer:\n    lr: -0.5\n");
    const std::string m = error_of([&] { load_config(path); });
    EXPECT_CONTAINS(m, path + ":3");
    EXPECT_CONTAINS(m, "'train.optimizer.lr'");
    EXPECT_CONTAINS(m, "> 0");
  }
  {
    const std::string path = config("train:\n  epochs: 0\n");
    const std::string m = error_of([&] { load_config(path); });
    EXPECT_CONTAINS(m, path + ":2");
    EXPECT_CONTAINS(m, "'train.epochs'");
    EXPECT_CONTAINS(m, ">= 1");
  }
  {
    const std::string path = config("data:\n  valid_split: 0.95\n");
    const std::string m = error_of([&] { load_config(path); });
    EXPECT_CONTAINS(m, "'data.valid_split'");
  }
}

TEST_F(LoaderTest, NgramOrderAndWorkersAreCappedWithAReason) {
  const std::string path = config("model:\n  ngrams: 1000000000\n");
  std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":2: option 'model.ngrams': The value must be in [1, 16]");
  m = error_of([&] { load_config("", {"data.workers=10000"}); });
  EXPECT_CONTAINS(m, "--set data.workers: option 'data.workers': The value must be in [1, 256]");
  EXPECT_EQ(load_config("", {"model.ngrams=16", "data.workers=256"}).data.workers, 256);
}

TEST_F(LoaderTest, DuplicateKeyIsRefusedNamingBothLines) {
  const std::string path = config("train:\n  epochs: 3\n  batch_size: 8\n  epochs: 5\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":4: 'train.epochs' is given twice (first at " + path + ":2)");
  const std::string top = config("run:\n  name: a\nrun:\n  name: b\n");
  EXPECT_CONTAINS(error_of([&] { load_config(top); }), "'run' is given twice");
}

TEST_F(LoaderTest, QuotedCommandLineValuesStayStrings) {
  const std::vector<std::string> paths = {"*.tsv", "@list", "a,b.tsv", "x: y", "it's \"q\""};
  const SiftConfig c = load_config(
      "", {"data.test.path=" + yaml_quoted_list(paths), "data.test.label=" + yaml_quoted("[0]")});
  EXPECT_EQ(c.data.test.path, paths);
  EXPECT_EQ(c.data.test.label, "[0]");
}

TEST_F(LoaderTest, ControlBytesInAnUnknownKeyAreEscaped) {
  const std::string m = error_of([&] { load_config("", {"bad\x1b[2Jkey=1"}); });
  EXPECT_CONTAINS(m, "unknown option 'bad\\x1b[2Jkey'");
}

TEST_F(LoaderTest, BadEnumNamesKeyAndChoices) {
  const std::string path = config("train:\n  optimizer:\n    type: lbfgs\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":3");
  EXPECT_CONTAINS(m, "'train.optimizer.type'");
  EXPECT_CONTAINS(m, "'lbfgs'");
  EXPECT_CONTAINS(m, "sgd, adam, adamw");
}

TEST_F(LoaderTest, YamlSyntaxErrorNamesFileAndLine) {
  const std::string path = config("train:\n  epochs: 3\n  batch_size: [1, 2\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, "YAML syntax error");
  EXPECT_CONTAINS(m, path + ":");
  // The line is a number right after the path.
  const std::string after = m.substr(m.find(path + ":") + path.size() + 1);
  EXPECT_TRUE(!after.empty() && std::isdigit(static_cast<unsigned char>(after[0]))) << m;
}

TEST_F(LoaderTest, YamlSyntaxErrorReportsTheRightLine) {
  const std::string path = config("run:\n  seed: 1\ntrain:\n  epochs: 3\n   bad: : x\n");
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, path + ":5:") << m;
}

TEST_F(LoaderTest, MissingConfigFile) {
  const std::string path = dir_ + "/nope.yaml";
  const std::string m = error_of([&] { load_config(path); });
  EXPECT_CONTAINS(m, "cannot open config file " + path);
  EXPECT_CONTAINS(m, "No such file");
}

TEST_F(LoaderTest, SetOverridesScalarsAndLists) {
  const std::string path = config("train:\n  epochs: 3\n");
  const SiftConfig c = load_config(
      path, {"train.epochs=9", "data.train.path=[a.txt, b.txt]", "data.text=1", "run.name=x y"});
  EXPECT_EQ(c.train.epochs, 9);
  EXPECT_EQ(c.data.train.path, (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(c.data.text, (std::vector<std::string>{"1"}));
  EXPECT_EQ(c.run.name, "x y");
  EXPECT_EQ(c.origin.at("train.epochs"), "--set train.epochs");
}

TEST_F(LoaderTest, LaterSetWins) {
  const SiftConfig c = load_config("", {"train.epochs=2", "train.epochs=4"});
  EXPECT_EQ(c.train.epochs, 4);
}

TEST_F(LoaderTest, SetUnknownKey) {
  const std::string m = error_of([] { load_config("", {"train.epoch=3"}); });
  EXPECT_CONTAINS(m, "--set train.epoch");
  EXPECT_CONTAINS(m, "unknown option 'train.epoch'");
  EXPECT_CONTAINS(m, "did you mean 'train.epochs'");
}

TEST_F(LoaderTest, SetWrongTypeAndOutOfRange) {
  EXPECT_CONTAINS(error_of([] { load_config("", {"train.batch_size=big"}); }),
                  "'train.batch_size' expects an integer");
  const std::string m = error_of([] { load_config("", {"train.optimizer.lr=-1"}); });
  EXPECT_CONTAINS(m, "--set train.optimizer.lr");
  EXPECT_CONTAINS(m, "'train.optimizer.lr'");
}

TEST_F(LoaderTest, SetWithoutEqualsOrWithBadYaml) {
  EXPECT_CONTAINS(error_of([] { load_config("", {"train.epochs"}); }), "expected key=value");
  EXPECT_CONTAINS(error_of([] { load_config("", {"=3"}); }), "expected key=value");
  EXPECT_CONTAINS(error_of([] { load_config("", {"data.text=[1, 2"}); }),
                  "--set data.text: the value is not valid YAML");
}

TEST_F(LoaderTest, SetOnAGroupIsUnknown) {
  EXPECT_CONTAINS(error_of([] { load_config("", {"train=3"}); }), "'train'");
}

TEST_F(LoaderTest, PerSplitFormatResolution) {
  const std::string path = config(
      "data:\n"
      "  format: tsv\n"
      "  text: 1\n"
      "  label: 0\n"
      "  test:\n"
      "    format: csv\n"
      "    text: [title, body]\n");
  const SiftConfig c = load_config(path);
  const FormatConfig train = resolved_format(c, Split::train);
  const FormatConfig valid = resolved_format(c, Split::valid);
  const FormatConfig test = resolved_format(c, Split::test);
  EXPECT_EQ(train.format, FileFormat::tsv);
  EXPECT_EQ(valid.format, FileFormat::tsv);
  EXPECT_EQ(test.format, FileFormat::csv);
  EXPECT_EQ(train.text, (std::vector<std::string>{"1"}));
  EXPECT_EQ(test.text, (std::vector<std::string>{"title", "body"}));
  EXPECT_EQ(test.label, "0");  // not overridden: the shared value
  EXPECT_EQ(train.label, "0");
}

TEST_F(LoaderTest, SplitValueEqualToDefaultStillOverrides) {
  // data.test.format set explicitly to the built-in default must beat data.format.
  const SiftConfig c = load_config("", {"data.format=tsv", "data.test.format=fasttext"});
  EXPECT_EQ(resolved_format(c, Split::test).format, FileFormat::fasttext);
  EXPECT_EQ(resolved_format(c, Split::train).format, FileFormat::tsv);
}

TEST_F(LoaderTest, DumpRoundTrip) {
  const std::string path = config(
      "run:\n  name: demo\n  seed: 7\n"
      "data:\n  format: tsv\n  text: [1, 2]\n  label: 0\n"
      "  train:\n    path: [a.tsv, 'b c.tsv']\n  test:\n    format: fasttext\n"
      "  labels: [ham, spam]\n"
      "train:\n  epochs: 2\n  optimizer:\n    lr: 0.1\n    type: adam\n");
  const SiftConfig first = load_config(path);
  const std::string dump1 = dump_config(first);
  const std::string path2 = write_file(dir_ + "/dump.yaml", dump1);
  const SiftConfig second = load_config(path2);
  const std::string dump2 = dump_config(second);
  EXPECT_EQ(dump1, dump2);
  EXPECT_EQ(second.run.name, "demo");
  EXPECT_EQ(second.data.train.path, (std::vector<std::string>{"a.tsv", "b c.tsv"}));
  EXPECT_DOUBLE_EQ(second.train.optimizer.lr, 0.1);
  EXPECT_EQ(resolved_format(second, Split::test).format, FileFormat::fasttext);
  EXPECT_EQ(resolved_format(second, Split::train).format, FileFormat::tsv);
  EXPECT_EQ(resolved_format(second, Split::valid).text, (std::vector<std::string>{"1", "2"}));
  // Every declared option appears in the dump.
  for (const auto& option : all_options()) {
    const std::string leaf = option.name.substr(option.name.rfind('.') + 1);
    EXPECT_CONTAINS(dump1, leaf + ":") << option.name;
  }
}

TEST_F(LoaderTest, DumpOfDefaultsRoundTrips) {
  const std::string dump1 = dump_config(load_config(""));
  const std::string dump2 = dump_config(load_config(write_file(dir_ + "/d.yaml", dump1)));
  EXPECT_EQ(dump1, dump2);
}

TEST_F(LoaderTest, DumpOfTheEmbeddedConfigRoundTrips) {
  const SiftConfig c = load_config(std::string(SIFT_SOURCE_DIR) + "/configs/sms_spam.yaml");
  EXPECT_EQ(c.train.loss_reduction, LossReduction::sum);
  const std::string dump1 = dump_config(c);
  const std::string dump2 = dump_config(load_config(write_file(dir_ + "/s.yaml", dump1)));
  EXPECT_EQ(dump1, dump2);
}

TEST(OptionTable, NamesAreUniqueAndEveryOptionHasHelp) {
  std::set<std::string> names;
  for (const auto& o : all_options()) {
    EXPECT_TRUE(names.insert(o.name).second) << "duplicate " << o.name;
    EXPECT_FALSE(o.help.empty()) << o.name;
    EXPECT_EQ(find_option(o.name), &o);
  }
  EXPECT_EQ(find_option("train.nope"), nullptr);
  EXPECT_TRUE(is_option_group("train.optimizer"));
  EXPECT_FALSE(is_option_group("train.epochs"));
  EXPECT_EQ(closest_option("train.batchsize"), "train.batch_size");
}

TEST(OptionReference, CommittedDocsMatchTheOptionTable) {
  const std::string path = std::string(SIFT_SOURCE_DIR) + "/docs/options.md";
  ASSERT_TRUE(std::ifstream(path)) << "cannot open " << path;
  // The per-model tune table after the option table needs the model registry (LibTorch):
  // OptionReferenceCli.SiftConfigReferenceMatchesTheCommittedDocs checks the whole file.
  std::string committed = testing::slurp(path);
  committed = committed.substr(0, committed.find("\n## What `sift tune` searches"));
  const std::string generated = option_reference();
  if (committed == generated) return;
  // Name the lines that differ rather than print both files.
  auto lines = [](const std::string& text) {
    std::vector<std::string> v;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);) v.push_back(l);
    return v;
  };
  const auto a = lines(committed), b = lines(generated);
  const std::set<std::string> in_a(a.begin(), a.end()), in_b(b.begin(), b.end());
  std::string diff;
  for (const auto& l : a)
    if (!in_b.count(l)) diff += "- " + l + "\n";
  for (const auto& l : b)
    if (!in_a.count(l)) diff += "+ " + l + "\n";
  ADD_FAILURE() << "docs/options.md is stale: regenerate it with "
                   "`sift config --reference > docs/options.md`\n"
                << (diff.empty() ? std::string("(same lines, different order or spacing)\n")
                                 : diff);
}

TEST(OptionReference, ListsEveryOption) {
  const std::string ref = option_reference();
  for (const auto& o : all_options()) EXPECT_CONTAINS(ref, "`" + o.name + "`") << o.name;
}

}  // namespace loader_test
}  // namespace sift
