#include "framework/train/base/step_log.h"

#include <gtest/gtest.h>

namespace sift {
namespace step_log_test {

TEST(StepLog, ParsingKeepsCompleteRowsAndSkipsALineCutShortOrOfTheWrongWidth) {
  const StepLogTable t = parse_step_log("step,epoch,x\n1,1,0.5\n2,1\n3,1,\n4,1,0.");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"step", "epoch", "x"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][2], "0.5");
  EXPECT_EQ(t.rows[1][0], "3");
  EXPECT_EQ(t.rows[1][2], "");
}

TEST(StepLog, AnEmptyOrHeaderlessTextIsAnEmptyTable) {
  EXPECT_TRUE(parse_step_log("").columns.empty());
  EXPECT_TRUE(parse_step_log("step,epo").columns.empty());
}

}  // namespace step_log_test
}  // namespace sift
