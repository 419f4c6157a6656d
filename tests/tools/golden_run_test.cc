// The byte-identical guard: a tiny fastText run (tests/data/golden) trained and exported
// by the `sift` binary must give files with exactly the committed SHA-256 digests. A
// refactoring that should not change behaviour keeps them; a change that alters the
// numbers, the checkpoint layout or the export format has to update them on purpose
// (and say why in its commit). The digests came from the tree before the layer split
// (see tests/data/golden/README.md for how to produce them again).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "run_sift.h"

namespace sift {
namespace {

namespace fs = std::filesystem;
using testing::make_temp_dir;
using testing::quote;
using testing::SiftResult;

const std::string kFixture = std::string(SIFT_SOURCE_DIR) + "/tests/data/golden";

// Committed digests (sha256sum) of the run's files.
constexpr const char* kLastCkpt = "TODO";
constexpr const char* kBestCkpt = "TODO";
constexpr const char* kExport = "TODO";

class GoldenRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("sift_golden");
    // The run works in a folder of its own with relative paths only: the config it saves
    // (and export embeds) then holds no path of this machine.
    for (const char* name : {"golden.yaml", "train.txt", "test.txt"}) {
      fs::copy_file(kFixture + "/" + name, dir_ + "/" + name);
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  SiftResult sift(const std::string& args) { return testing::run_sift(args, dir_, "", dir_); }
  std::string sha256(const std::string& path) {
    const SiftResult r = testing::run_command("sha256sum " + quote(path), dir_);
    EXPECT_EQ(r.status, 0) << r;
    return r.out.substr(0, r.out.find(' '));
  }

  std::string dir_;
};

TEST_F(GoldenRun, CheckpointsAndExportKeepTheirBytes) {
  const SiftResult train = sift("train golden.yaml --quiet");
  ASSERT_EQ(train.status, 0) << train;
  const SiftResult exported = sift("export runs/golden --out golden.pt");
  ASSERT_EQ(exported.status, 0) << exported;
  EXPECT_EQ(sha256(dir_ + "/runs/golden/last.ckpt"), kLastCkpt);
  EXPECT_EQ(sha256(dir_ + "/runs/golden/best.ckpt"), kBestCkpt);
  EXPECT_EQ(sha256(dir_ + "/golden.pt"), kExport);
}

}  // namespace
}  // namespace sift
