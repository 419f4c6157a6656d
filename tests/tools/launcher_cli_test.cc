// The `sift` launcher (tools/launcher): it starts sift-main with OMP_WAIT_POLICY=PASSIVE,
// glibc's malloc asking for transparent huge pages and OpenBLAS with one thread, each
// unless the user chose, and report.json's "environment" says what the run ran with.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "golden_fixture.h"
#include "run_sift.h"

namespace sift {
namespace launcher_cli_test {

namespace fs = std::filesystem;
using testing::quote;
using testing::operator<<;

class LauncherCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::golden_fixture_copy("sift_launcher"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // report.json's "environment" of a golden run started under `env` (env(1)'s arguments).
  nlohmann::json environment_under(const std::string& env) {
    const auto r = testing::run_command(
        "env " + env + " " + quote(SIFT_BINARY) + " train golden.yaml --quiet --set train.epochs=1",
        dir_, "", dir_);
    EXPECT_EQ(r.status, 0) << r;
    const auto report = nlohmann::json::parse(testing::slurp(dir_ + "/runs/golden/report.json"));
    fs::remove_all(dir_ + "/runs");
    return report.at("environment");
  }
  std::string dir_;
};

TEST_F(LauncherCli, RunsAskForPassiveOpenMpThreadsAndLeaveHugePagesToTheUser) {
  const auto e = environment_under(
      "-u GLIBC_TUNABLES -u OMP_WAIT_POLICY -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS "
      "-u OMP_NUM_THREADS");
  EXPECT_EQ(e.at("glibc_tunables"), "");
  EXPECT_EQ(e.at("omp_wait_policy"), "PASSIVE");
  EXPECT_EQ(e.at("openblas_num_threads"), "1");
}

TEST_F(LauncherCli, OpenBlasKeepsTheThreadCountTheUserGaveIt) {
  EXPECT_EQ(
      environment_under("-u OMP_NUM_THREADS OPENBLAS_NUM_THREADS=2").at("openblas_num_threads"),
      "2");
  // OpenBLAS would read OMP_NUM_THREADS: the launcher adds nothing in front of it.
  EXPECT_EQ(
      environment_under("-u OPENBLAS_NUM_THREADS OMP_NUM_THREADS=2").at("openblas_num_threads"),
      "");
}

TEST_F(LauncherCli, TheUsersOwnTunablesReachTheRunUnchanged) {
  EXPECT_EQ(environment_under("GLIBC_TUNABLES=glibc.malloc.check=0").at("glibc_tunables"),
            "glibc.malloc.check=0");
  EXPECT_EQ(environment_under("GLIBC_TUNABLES=glibc.malloc.hugetlb=1").at("glibc_tunables"),
            "glibc.malloc.hugetlb=1");
}

TEST_F(LauncherCli, AUserWhoChoseLeavesTheLauncherNothingToChange) {
  const auto e = environment_under("GLIBC_TUNABLES=glibc.malloc.hugetlb=0 OMP_WAIT_POLICY=ACTIVE");
  EXPECT_EQ(e.at("glibc_tunables"), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(e.at("omp_wait_policy"), "ACTIVE");
}

}  // namespace launcher_cli_test
}  // namespace sift
