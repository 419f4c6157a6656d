// Mixed precision, gradient checkpointing and loss scaling through the trainer: together,
// with gradient accumulation, across a resume.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <vector>

#include "framework/runtime/checkpoint.h"
#include "config/loader.h"
#include "core/error.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/trainer.h"

namespace sift {
namespace trainer_precision_test {

namespace fs = std::filesystem;

class TrainerPrecision : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sift_precision_XXXXXX";
    dir_ = mkdtemp(tmpl);
    quiet_.quiet = true;
  }
  void TearDown() override { fs::remove_all(dir_); }

  SiftConfig config(const std::string& name, std::vector<std::string> extra = {}) const {
    std::vector<std::string> o = {
        std::string("data.train.path=") + SIFT_SOURCE_DIR + "/data/sms_spam/SMSSpamCollection",
        "data.format=tsv", "data.text=1", "data.label=0", "data.workers=2",
        "data.shuffle_buffer=500", "data.valid_split=0.1", "data.max_length=40",
        "model.type=textcnn", "model.dim=16", "model.filters=8", "model.widths=[2,3]",
        "model.dropout=0.3", "train.epochs=2", "train.batch_size=32", "train.accumulate=2",
        "train.optimizer.type=adam", "train.optimizer.lr=0.003", "train.precision=bf16",
        "train.gradient_checkpointing=all", "train.loss_scaling=dynamic",
        "train.loss_scale_growth_interval=10", "run.threads=1", "run.dir=" + dir_,
        "run.name=" + name};
    o.insert(o.end(), extra.begin(), extra.end());
    return load_config("", o);
  }

  Checkpoint last(const std::string& name) const {
    return load_checkpoint(dir_ + "/" + name + "/last.ckpt");
  }

  std::vector<torch::Tensor> last_weights(const std::string& name) const {
    ModelBundle b = load_run(dir_ + "/" + name);
    load_module_bytes(*b.model, last(name).blobs.at("model"), "last.ckpt");
    return b.model->parameters();
  }

  std::string dir_;
  TrainOptions quiet_;
};

TEST_F(TrainerPrecision, Bf16CheckpointingAndLossScalingResumeExactly) {
  const auto whole = train(config("whole"), quiet_);
  EXPECT_EQ(whole["train"]["precision"], "bf16");
  EXPECT_EQ(whole["train"]["skipped_steps"], 0);
  EXPECT_GT(whole["splits"]["valid"]["accuracy"].get<double>(), 0.9);
  // The scale grew every 10 clean steps, and last.ckpt holds it.
  const auto scaler = last("whole").meta.at("loss_scaler");
  EXPECT_GT(scaler.at("scale").get<double>(), 65536.0);

  const auto stopped = train(config("parts", {"train.max_steps=37"}), quiet_);
  ASSERT_EQ(stopped["train"]["steps"].get<int64_t>(), 37);
  EXPECT_LT(last("parts").meta.at("loss_scaler").at("scale").get<double>(),
            scaler.at("scale").get<double>());
  resume(dir_ + "/parts", {"train.max_steps=0"}, quiet_);
  EXPECT_EQ(last("parts").meta.at("loss_scaler"), scaler);
  const auto a = last_weights("whole"), b = last_weights("parts");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

TEST_F(TrainerPrecision, CheckpointingDoesNotChangeTraining) {
  // fp32, dropout on: recomputation gives the same gradients, so the same weights.
  const std::vector<std::string> fp32 = {"train.precision=fp32", "train.loss_scaling=off",
                                         "train.epochs=1", "train.max_steps=20"};
  auto with = [&](std::string mode) {
    std::vector<std::string> o = fp32;
    o.push_back("train.gradient_checkpointing=" + mode);
    return o;
  };
  train(config("off", with("off")), quiet_);
  train(config("all", with("all")), quiet_);
  const auto a = last_weights("off"), b = last_weights("all");
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 0, 1e-6)) << "parameter " << i;
  }
}

TEST_F(TrainerPrecision, Fp16OnCpuIsRefused) {
  try {
    train(config("fp16", {"train.precision=fp16"}), quiet_);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("train.precision:", 0), 0u) << e.what();
  }
}

}  // namespace trainer_precision_test
}  // namespace sift
