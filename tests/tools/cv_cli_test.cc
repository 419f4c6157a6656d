// `sift cv`: k-fold cross-validation over hashed folds of the training data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_sift.h"

namespace sift {
namespace cv_cli_test {

namespace fs = std::filesystem;

const std::string kSource = SIFT_SOURCE_DIR;

class CrossValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sift::testing::make_temp_dir("sift_cv");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  testing::SiftResult sift(const std::string& args) const {
    return testing::run_sift(args, dir_, "", kSource);
  }
  // The SMS spam config, small and quick.
  std::string sms(const std::string& command) const {
    return command + " configs/sms_spam.yaml --set run.dir=" + dir_ +
           " --set run.name=sms --set model.buckets=20000 --set train.epochs=2";
  }
  std::string dir_;
};

TEST_F(CrossValidation, ThreeFoldsTestEveryRecordOnceAndReportMeanAndStd) {
  const auto r = sift(sms("cv --folds 3 --json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["per_fold"].size(), 3u);
  int64_t examples = 0;
  double sum = 0.0;
  for (const auto& fold : report["per_fold"]) {
    examples += fold["examples"].get<int64_t>();
    sum += fold["accuracy"].get<double>();
    EXPECT_GT(fold["accuracy"].get<double>(), 0.9) << fold;
  }
  EXPECT_EQ(examples, 5574);  // every record of the file is tested exactly once
  EXPECT_NEAR(report["accuracy"]["mean"].get<double>(), sum / 3, 1e-12);
  EXPECT_GT(report["accuracy"]["std"].get<double>(), 0.0);
  EXPECT_LT(report["accuracy"]["std"].get<double>(), 0.05);
  EXPECT_TRUE(fs::is_regular_file(dir_ + "/sms-cv/cv.json"));
  // A fold rerun alone with data.folds and data.fold gives the same figures.
  const auto one = sift(sms("train --quiet --json") + " --set data.folds=3 --set data.fold=1" +
                        " --set run.name=again");
  ASSERT_EQ(one.status, 0) << one.err;
  const auto test = nlohmann::json::parse(one.out)["splits"]["test"];
  EXPECT_EQ(test["examples"], report["per_fold"][1]["examples"]);
  EXPECT_EQ(test["accuracy"], report["per_fold"][1]["accuracy"]);
}

TEST_F(CrossValidation, BadFoldOptionsAreRefusedByName) {
  EXPECT_TRUE(testing::CleanSiftError(sift(sms("cv --folds 1")), {"--folds", "at least 2"}));
  EXPECT_TRUE(testing::CleanSiftError(
      sift(sms("train --quiet") + " --set data.folds=3 --set data.fold=3"), {"data.fold:"}));
  EXPECT_TRUE(testing::CleanSiftError(
      sift(sms("cv --folds 3") + " --set data.test.path=data/sms_spam/SMSSpamCollection"),
      {"data.test.path"}));
}

}  // namespace cv_cli_test
}  // namespace sift
