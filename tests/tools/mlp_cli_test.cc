// The mlp model end to end, as a user runs it: `sift train` on a YAML that names it, then
// `sift export`, and the exported file predicts what the run folder predicts.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "run_sift.h"

namespace sift {
namespace mlp_cli_test {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::quote;
using testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kSmsData = kSource + "/data/sms_spam/SMSSpamCollection";

using Result = testing::SiftResult;
using testing::operator<<;

TEST(MlpCli, TrainsOnSmallSmsAndExportsAFileThatPredictsTheSame) {
  std::string pattern = ::testing::TempDir() + "sift_mlp_cli_XXXXXX";
  const std::string dir = mkdtemp(pattern.data());
  auto sift = [&](const std::string& args) { return testing::run_sift(args, dir, "", kSource); };
  // The small SMS sample the other CLI tests use: the first 600 messages.
  const auto all = lines_of(testing::slurp(kSmsData));
  std::string small, texts;
  for (size_t i = 0; i < 600; ++i) {
    small += all[i] + "\n";
    texts += all[i].substr(all[i].find('\t') + 1) + "\n";
  }
  write_file(dir + "/small.tsv", small);
  write_file(dir + "/texts.txt", texts);

  const Result train = sift(
      "train configs/sms_spam_mlp.yaml --quiet --set train.epochs=2 --set model.buckets=20000"
      " --set model.hidden=16 --set model.layers=2 --set run.dir=" + quote(dir) +
      " --set run.name=mlp --set data.train.path=" + quote(dir + "/small.tsv"));
  ASSERT_EQ(train.status, 0) << train;

  const std::string run = dir + "/mlp", model = dir + "/mlp.pt";
  const Result exported = sift("export " + quote(run) + " --out " + quote(model));
  ASSERT_EQ(exported.status, 0) << exported;
  EXPECT_TRUE(fs::exists(model));

  const std::string input = " --input " + quote(dir + "/texts.txt") + " --top-k 2";
  const Result from_run = sift("predict --model " + quote(run) + input);
  const Result from_file = sift("predict --model " + quote(model) + input);
  ASSERT_EQ(from_run.status, 0) << from_run;
  ASSERT_EQ(from_file.status, 0) << from_file;
  EXPECT_EQ(lines_of(from_file.out).size(), 600u);
  EXPECT_EQ(from_file.out, from_run.out);

  // A key the mlp does not read is refused by name.
  const Result bad = sift("train configs/sms_spam_mlp.yaml --quiet --set model.heads=2" +
                          std::string(" --set run.dir=") + quote(dir) + " --set run.name=bad");
  EXPECT_TRUE(testing::CleanSiftError(bad, {"model.heads", "mlp"}));

  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace mlp_cli_test
}  // namespace sift
