// train.checkpointing / train.checkpoint_every were renamed to train.gradient_checkpointing /
// train.gradient_checkpointing_every; the old names still read, with a warning.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace alias_test {

using testing::make_temp_dir;
using testing::write_file;

TEST(OptionAlias, TheOldNameSetsTheNewFieldAndWarnsOnce) {
  ::testing::internal::CaptureStderr();
  const SiftConfig c = load_config("", {"train.checkpointing=every", "train.checkpoint_every=3"});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.train.gradient_checkpointing, GradientCheckpointing::every);
  EXPECT_EQ(c.train.gradient_checkpointing_every, 3);
  EXPECT_EQ(err,
            "sift: warning: train.checkpointing is deprecated; use train.gradient_checkpointing\n"
            "sift: warning: train.checkpoint_every is deprecated; use "
            "train.gradient_checkpointing_every\n");
}

TEST(OptionAlias, TheOldNameReadsFromAYamlFile) {
  const std::string dir = make_temp_dir("sift_alias");
  const std::string path = dir + "/c.yaml";
  write_file(path, "train:\n  checkpointing: all\n");
  ::testing::internal::CaptureStderr();
  const SiftConfig c = load_config(path);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.train.gradient_checkpointing, GradientCheckpointing::all);
  EXPECT_NE(err.find("train.checkpointing is deprecated"), std::string::npos) << err;
}

TEST(OptionAlias, ADumpWritesOnlyTheNewName) {
  ::testing::internal::CaptureStderr();
  const std::string dump = dump_config(load_config("", {"train.checkpointing=all"}));
  ::testing::internal::GetCapturedStderr();
  EXPECT_NE(dump.find("gradient_checkpointing: all"), std::string::npos) << dump;
  EXPECT_EQ(dump.find(" checkpointing:"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("checkpoint_every:"), std::string::npos) << dump;
}

TEST(OptionAlias, GivingBothNamesIsAnErrorNamingBoth) {
  ::testing::internal::CaptureStderr();
  std::string message;
  try {
    load_config("", {"train.gradient_checkpointing=all", "train.checkpointing=off"});
  } catch (const Error& e) {
    message = e.what();
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("train.checkpointing"), std::string::npos) << message;
  EXPECT_NE(message.find("train.gradient_checkpointing"), std::string::npos) << message;
}

TEST(OptionAlias, GivingBothNamesInOneFileIsAnError) {
  const std::string dir = make_temp_dir("sift_alias");
  const std::string path = dir + "/c.yaml";
  write_file(path, "train:\n  checkpoint_every: 2\n  gradient_checkpointing_every: 4\n");
  ::testing::internal::CaptureStderr();
  std::string message;
  try {
    load_config(path);
  } catch (const Error& e) {
    message = e.what();
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("train.gradient_checkpointing_every and train.checkpoint_every are "
                         "both given"),
            std::string::npos)
      << message;
}

TEST(OptionAlias, ASetOverridesTheOldNameGivenInTheFile) {
  const std::string dir = make_temp_dir("sift_alias");
  const std::string path = dir + "/c.yaml";
  write_file(path, "train:\n  checkpointing: all\n");
  ::testing::internal::CaptureStderr();
  const SiftConfig c = load_config(path, {"train.gradient_checkpointing=off"});
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.train.gradient_checkpointing, GradientCheckpointing::off);
}

}  // namespace alias_test
}  // namespace sift
