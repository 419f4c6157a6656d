#include "framework/runtime/base/calibration.h"

#include <gtest/gtest.h>

namespace sift {
namespace calibration_test {

TEST(Calibration, TheErrorWeighsEachBinsGapByItsShareOfTheExamples) {
  Calibration c;
  c.add(0.95, true);
  c.add(0.95, false);
  c.add(0.15, false);
  // 2/3 * |0.5 - 0.95| + 1/3 * |0 - 0.15|
  EXPECT_NEAR(c.expected_calibration_error(), 0.35, 1e-12);
  const nlohmann::json j = c.to_json();
  ASSERT_EQ(j["bins"].size(), 10u);
  EXPECT_EQ(j["bins"][9]["examples"], 2);
  EXPECT_NEAR(j["bins"][9]["accuracy"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(j["bins"][9]["confidence"].get<double>(), 0.95, 1e-12);
  EXPECT_EQ(j["bins"][1]["examples"], 1);
  EXPECT_EQ(j["bins"][0]["examples"], 0);
  EXPECT_FALSE(j["bins"][0].contains("accuracy"));
}

TEST(Calibration, AConfidenceOfOneFallsInTheLastBinAndAPerfectModelHasNoError) {
  Calibration c;
  c.add(1.0, true);
  c.add(1.0, true);
  EXPECT_EQ(c.examples(), 2);
  EXPECT_EQ(c.to_json()["bins"][9]["examples"], 2);
  EXPECT_DOUBLE_EQ(c.expected_calibration_error(), 0.0);
}

}  // namespace calibration_test
}  // namespace sift
