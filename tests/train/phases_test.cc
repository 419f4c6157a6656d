#include "framework/train/base/phases.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "framework/runtime/base/tensor_memory.h"

namespace sift {
namespace phases_test {

using std::chrono::milliseconds;

TEST(PhaseTimes, SharesAndMsPerStepAddUpToTheWallTimeWithOther) {
  PhaseTimes t;
  t.add(Phase::forward, milliseconds(300));
  t.add(Phase::backward, milliseconds(500));
  const nlohmann::json j = t.to_json(1.0, 100);
  double share = 0.0;
  for (const auto& row : j["table"]) share += row["share"].get<double>();
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(j["table"][2]["phase"], "forward");
  EXPECT_NEAR(j["table"][2]["ms_per_step"].get<double>(), 3.0, 1e-9);
  EXPECT_EQ(j["table"].back()["phase"], "other");
  EXPECT_NEAR(j["table"].back()["seconds"].get<double>(), 0.2, 1e-9);
  EXPECT_FALSE(j.contains("bottleneck"));
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
}

TEST(PhaseTimes, ARunWaitingOnDataSaysSoWithTheShareOfStepTime) {
  PhaseTimes t;
  t.add(Phase::data_wait, milliseconds(610));
  t.add(Phase::forward, milliseconds(390));
  t.add(Phase::validation, milliseconds(5000));  // not step time
  const nlohmann::json j = t.to_json(6.0, 10);
  ASSERT_TRUE(j.contains("bottleneck"));
  EXPECT_EQ(j["bottleneck"],
            "data-bound: 61% of step time waiting for batches; raise data.workers");
  EXPECT_NE(phase_table_text(j).find("data-bound: 61%"), std::string::npos);
}

// More readers help only where the readers and the training leave cores idle: on 2 cores,
// 2 readers beside training, the run says so instead.
TEST(PhaseTimes, TheDataBoundRemedyAsksForMoreReadersOnlyWhereCoresAreIdle) {
  EXPECT_EQ(data_bound_remedy(2, 1, 8), "raise data.workers (now 2)");
  EXPECT_EQ(data_bound_remedy(2, 1, 2),
            "its 2 reader threads and 1 training thread already share this machine's 2 cores");
  EXPECT_EQ(data_bound_remedy(1, 1, 1),
            "its 1 reader thread and 1 training thread already share this machine's 1 core");
  EXPECT_EQ(data_bound_remedy(2, 1, 0), "raise data.workers (now 2)");  // cores unknown
  PhaseTimes t;
  t.add(Phase::data_wait, milliseconds(700));
  t.add(Phase::fused, milliseconds(300));
  EXPECT_EQ(t.to_json(1.0, 10, data_bound_remedy(2, 1, 2))["bottleneck"],
            "data-bound: 70% of step time waiting for batches; its 2 reader threads and 1 "
            "training thread already share this machine's 2 cores");
}

TEST(PhaseTimes, TheFastPathsFusedStepIsStepTimeSoADataBoundShareCountsIt) {
  PhaseTimes t;
  t.add(Phase::data_wait, milliseconds(200));
  t.add(Phase::fused, milliseconds(600));
  const nlohmann::json j = t.to_json(1.0, 100);
  EXPECT_EQ(j["table"][2]["phase"], "fused");  // after the data, before any forward
  EXPECT_NEAR(j["table"][2]["ms_per_step"].get<double>(), 6.0, 1e-9);
  EXPECT_NEAR(j["data_wait_share_of_step"].get<double>(), 0.25, 1e-9);
  EXPECT_FALSE(j.contains("bottleneck"));  // 25%: below the data-bound line
  PhaseTimes without;                      // a run off the fast path has no fused row
  without.add(Phase::forward, milliseconds(1));
  for (const auto& row : without.to_json(1.0, 1)["table"]) EXPECT_NE(row["phase"], "fused");
}

TEST(PhaseTimes, APhaseRecordsThePeakOfTheTensorBytesItHeld) {
  count_tensor_memory();
  PhaseTimes t;
  {
    PhaseTimer timer(t, Phase::forward);
    auto big = torch::zeros({1 << 20}, torch::kFloat64);  // 8 MiB, freed inside the phase
  }
  { PhaseTimer timer(t, Phase::backward); }
  const nlohmann::json j = t.to_json(1.0, 1);
  const int64_t forward = j["table"][2]["peak_tensor_bytes"].get<int64_t>();
  const int64_t backward = j["table"][3]["peak_tensor_bytes"].get<int64_t>();
  EXPECT_GE(forward, 8 << 20);
  EXPECT_GE(forward - backward, 8 << 20);  // the tensor was gone before backward began
  EXPECT_FALSE(j["table"].back().contains("peak_tensor_bytes"));  // "other" has none
}

}  // namespace phases_test
}  // namespace sift
