// Inputs that used to get in or take unbounded memory (issue #42): a label with a control
// character given in data.labels, and predict's line of any length, in sift-lite and
// sift-main alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_sift.h"

namespace sift {
namespace input_limits_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using testing::slurp;

const std::string kSource = SIFT_SOURCE_DIR;
const std::string kFast = " --quiet --set train.epochs=1 --set model.buckets=100000";

class InputLimits : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_limits"); }
  testing::SiftResult sift(const std::string& args, const std::string& env = "",
                           const std::string& input = "") {
    return testing::run_command(env + " " + quote(SIFT_BINARY) + " " + args, dir_, input, kSource);
  }
  std::string dir_;
};

TEST_F(InputLimits, ALabelWithANewlineInDataLabelsIsRefusedNamingTheKey) {
  for (const std::string env : {"", "SIFT_LITE=0"}) {
    const auto r = sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_) +
                            " --set run.name=r" + (env.empty() ? "1" : "2") +
                            " --set 'data.labels=[\"a\\nb\",ham,spam]'",
                        env);
    EXPECT_TRUE(testing::CleanSiftError(r, {"data.labels", "'a\\nb'", "control character"}));
    EXPECT_FALSE(fs::exists(dir_ + "/r1/best.ckpt"));
    EXPECT_FALSE(fs::exists(dir_ + "/r2/best.ckpt"));
  }
  const auto twice = sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_) +
                          " --set run.name=r3 --set 'data.labels=[ham,spam,ham]'");
  EXPECT_TRUE(testing::CleanSiftError(twice, {"data.labels", "'ham' is listed twice"}));
}

TEST_F(InputLimits, PredictRefusesALineOverTheCapInBothPrograms) {
  ASSERT_EQ(sift("train configs/sms_spam.yaml" + kFast + " --set run.dir=" + quote(dir_) +
                 " --set run.name=r")
                .status,
            0);
  // 3 MiB on line 2: over the run's data.max_line_bytes (1 MiB by default).
  const std::string input = "hello there\n" + std::string(3 << 20, 'x') + "\nbye\n";
  for (const std::string env : {"SIFT_LITE_WHY=1", "SIFT_LITE=0"}) {
    SCOPED_TRACE(env);
    const auto r = sift("predict --model " + quote(dir_ + "/r"), env, input);
    EXPECT_TRUE(testing::CleanSiftError(
        r, {"standard input:2", "more than 1048576 bytes", "--max-line-bytes"}));
    // A cap that the line fits: every line predicted.
    const auto ok =
        sift("predict --max-line-bytes 4000000 --model " + quote(dir_ + "/r"), env, input);
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_EQ(testing::lines_of(ok.out).size(), 3u);
  }
}

// Issue #42: a model too large for `ulimit -v` reached the allocator and ended with a bare
// error ("std::bad_alloc", "Resource temporarily unavailable"); the estimate before
// allocating now counts the address space left, in sift-lite and sift-main alike. 300 x
// 4M buckets is 4.8 GB of weights: over a 3.8 GiB ulimit, well under this machine's memory.
TEST_F(InputLimits, AModelOverUlimitVIsRefusedNamingItsKeysBeforeAllocating) {
  for (const std::string fast_path : {"auto", "off"}) {
    const auto r = sift("train configs/sms_spam.yaml" + kFast + " --set model.buckets=4000000" +
                            " --set model.dim=300 --set train.fast_path=" + fast_path +
                            " --set run.dir=" + quote(dir_) + " --set run.name=" + fast_path,
                        "ulimit -v 4000000 &&");
    EXPECT_TRUE(testing::CleanSiftError(r, {"model.buckets, model.dim", "ulimit -v 4000000 KiB"}))
        << fast_path;
  }
}

// Issue #42: allocations past the weights named nothing: a Transformer batch of 20,000
// texts cut at 2,000 tokens asked LibTorch for 3.75 GiB and ended with its bare
// "DefaultCPUAllocator: can't allocate memory". The step, the optimizer's first step,
// evaluation and predict now name what they allocate and the keys that size it.
TEST_F(InputLimits, ABatchTooLargeForMemoryNamesTheActivationsAndTheKeysThatSizeThem) {
  const std::string config = dir_ + "/transformer.yaml";
  std::ofstream(config) << "data:\n  train: {path: " << kSource
                        << "/data/sms_spam/SMSSpamCollection}\n  format: tsv\n  text: 1\n"
                           "  label: 0\nmodel: {type: transformer}\n";
  const auto r = sift("train " + quote(config) + " --quiet --set train.epochs=1" +
                          " --set train.batch_size=20000 --set data.max_length=2000" +
                          " --set run.dir=" + quote(dir_),
                      "ulimit -v 6000000 &&");
  EXPECT_TRUE(testing::CleanSiftError(
      r, {"out of memory allocating a training batch's activations",
          "sized by train.batch_size, data.max_length", "ulimit -v 6000000 KiB"}));
}

}  // namespace input_limits_cli_test
}  // namespace sift
