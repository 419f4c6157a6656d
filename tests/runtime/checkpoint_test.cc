#include "framework/runtime/checkpoint.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/error.h"
#include "framework/runtime/untouched_zeros.h"
#include "tests/test_files.h"

namespace sift {
namespace checkpoint_test {

using sift::testing::make_temp_dir;

using sift::testing::error_of;

namespace fs = std::filesystem;

// Header: magic (8), version (4), body length (8), CRC-32 (4).
constexpr size_t kHeader = 24;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("sift_checkpoint");
    path_ = dir_ + "/m.ckpt";
    torch::manual_seed(3);
    module_ = torch::nn::Linear(5, 3);
    Checkpoint c;
    c.meta = {{"model", "linear"}, {"step", 17}};
    c.blobs["model"] = module_bytes(*module_);
    c.blobs["extra"] = std::string("\0\1\2 bytes", 9);
    save_checkpoint(path_, c);
  }
  std::string dir_, path_;
  torch::nn::Linear module_{nullptr};
};

TEST_F(CheckpointTest, RoundTripRestoresWeightsAndMeta) {
  const Checkpoint c = load_checkpoint(path_);
  EXPECT_EQ(c.meta["model"], "linear");
  EXPECT_EQ(c.meta["step"], 17);
  ASSERT_EQ(c.blobs.count("model"), 1u);
  EXPECT_EQ(c.blobs.at("extra"), std::string("\0\1\2 bytes", 9));
  torch::manual_seed(99);
  torch::nn::Linear other(5, 3);
  ASSERT_FALSE(torch::equal(other->weight, module_->weight));
  load_module_bytes(*other, c.blobs.at("model"), path_);
  EXPECT_TRUE(torch::equal(other->weight, module_->weight));
  EXPECT_TRUE(torch::equal(other->bias, module_->bias));
}

// Tensor sections are serialised while the file is written; the file is byte for byte
// the one a blob of module_bytes gives, and reads back as that blob.
TEST_F(CheckpointTest, TensorSectionsWriteTheSameFileAsBlobs) {
  Checkpoint c;
  c.meta = {{"model", "linear"}, {"step", 17}};
  c.tensor_blobs["model"] = named_tensors(*module_);
  c.blobs["extra"] = std::string("\0\1\2 bytes", 9);
  const std::string streamed = dir_ + "/streamed.ckpt";
  save_checkpoint(streamed, c);
  EXPECT_EQ(testing::slurp(streamed), testing::slurp(path_));
  EXPECT_EQ(load_checkpoint(streamed).blobs.at("model"), module_bytes(*module_));
  c.blobs["model"] = "clash";
  EXPECT_CONTAINS(error_of([&] { save_checkpoint(streamed, c); }), "'model' given twice");
}

// A tensor whose memory is freed (a stage-3 layer between its uses) is filled by
// fill_freed when its bytes are written, in the section's order, and the file is byte for
// byte the one its whole weights give; without fill_freed it is refused by name.
TEST_F(CheckpointTest, AFreedTensorIsFilledWhenItsTurnComesAndTheFileIsTheSame) {
  torch::NoGradGuard no_grad;
  const torch::Tensor weight = module_->weight.detach().clone();
  const auto storage = weight.storage();
  const size_t bytes = storage.nbytes();
  storage.set_data_ptr_noswap(at::DataPtr(nullptr, weight.device()));
  storage.set_nbytes(0);
  Checkpoint c;
  c.meta = {{"model", "linear"}, {"step", 17}};
  c.tensor_blobs["model"] = {{"weight", weight}, {"bias", module_->bias}};
  c.blobs["extra"] = std::string("\0\1\2 bytes", 9);
  const std::string streamed = dir_ + "/filled.ckpt";
  EXPECT_CONTAINS(error_of([&] { save_checkpoint(streamed, c); }), "'weight' is freed");
  int calls = 0;
  c.fill_freed["model"] = [&](const torch::Tensor& t) {
    ++calls;
    EXPECT_TRUE(t.is_same(weight));
    storage.set_data_ptr_noswap(at::getCPUAllocator()->allocate(bytes));
    storage.set_nbytes(bytes);
    t.copy_(module_->weight);
  };
  save_checkpoint(streamed, c);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(testing::slurp(streamed), testing::slurp(path_));
}

// `count` parameters of `shape` and an Adam over them that took `steps` steps (its state
// filled); path_ holds a checkpoint of that state as an optimizer_bytes blob, returned.
struct SteppedAdam {
  std::vector<torch::Tensor> params;
  std::unique_ptr<torch::optim::Adam> adam;
  Checkpoint whole;
};
SteppedAdam stepped_adam(int count, std::vector<int64_t> shape, int steps,
                         const std::string& path) {
  SteppedAdam a;
  for (int i = 0; i < count; ++i) a.params.push_back(torch::randn(shape).requires_grad_(true));
  a.adam = std::make_unique<torch::optim::Adam>(a.params, torch::optim::AdamOptions(0.01));
  for (int step = 0; step < steps; ++step) {
    for (auto& p : a.params) p.mutable_grad() = torch::randn_like(p);
    a.adam->step();
  }
  a.whole.meta = {{"model", "adam"}};
  a.whole.blobs["optimizer"] = optimizer_bytes(*a.adam);
  save_checkpoint(path, a.whole);
  return a;
}

// A whole optimizer state (data parallelism's, one process's) streamed from its own memory
// writes the bytes of its optimizer_bytes blob, and read back from the file as the archive
// asks for its records (a resume) it is the state that was saved. A section cut short is
// refused naming the file.
TEST_F(CheckpointTest, AWholeOptimizerStateIsStreamedFromItsMemoryAndReadBackFromTheFile) {
  const SteppedAdam a = stepped_adam(3, {64, 32}, 3, path_);
  const auto& params = a.params;
  const Checkpoint& whole = a.whole;
  Checkpoint streamed;
  streamed.meta = whole.meta;
  streamed.streams["optimizer"] = optimizer_stream(*a.adam, {}, [](const torch::Tensor&) {});
  const std::string path = dir_ + "/streamed.ckpt";
  save_checkpoint(path, streamed);
  EXPECT_EQ(testing::slurp(path), testing::slurp(path_));

  const Checkpoint on_disk = load_checkpoint(path, {"optimizer"});
  ASSERT_EQ(on_disk.blobs.count("optimizer"), 0u);
  ASSERT_EQ(on_disk.on_disk.count("optimizer"), 1u);
  torch::optim::Adam restored(params, torch::optim::AdamOptions(0.01));
  load_optimizer_section(restored, on_disk.on_disk.at("optimizer"));
  EXPECT_EQ(optimizer_bytes(restored), whole.blobs.at("optimizer"));

  SectionRef cut = on_disk.on_disk.at("optimizer");
  cut.size /= 2;
  torch::optim::Adam refused(params, torch::optim::AdamOptions(0.01));
  EXPECT_CONTAINS(error_of([&] { load_optimizer_section(refused, cut); }),
                  path + ": the optimizer state does not fit");
}

// An optimizer whose state tensors are untouched zeros (run.shard's save) writes, through
// optimizer_stream, the file that its filled state gives as an optimizer_bytes blob,
// byte for byte; each tensor is filled once, right before its bytes are taken, and at no
// fill do the state's mappings hold more than the tensor filled then (mincore: the one
// before was given back). Adam over 4 tensors of 64K floats: 2 MiB of state, 256 KiB
// each.
TEST_F(CheckpointTest, AnOptimizerStateFilledATensorAtATimeWritesTheFileOfTheWholeState) {
  SteppedAdam a = stepped_adam(4, {256, 256}, 2, path_ + ".unused");
  std::vector<torch::Tensor>& params = a.params;
  torch::optim::Adam& adam = *a.adam;
  Checkpoint& whole = a.whole;
  whole.blobs["rng"] = "after";
  save_checkpoint(path_, whole);

  // The same parameters (the state's keys), the state as zeros that hold no memory.
  torch::optim::Adam lazy(params, torch::optim::AdamOptions(0.01));
  std::vector<torch::Tensor> deferred;
  std::map<const void*, torch::Tensor> source;
  for (auto& p : params) {
    const auto& filled = static_cast<torch::optim::AdamParamState&>(
        *adam.state().at(c10::guts::to_string(p.unsafeGetTensorImpl())));
    auto state = std::make_unique<torch::optim::AdamParamState>();
    state->step(filled.step());
    state->exp_avg(untouched_zeros(p.sizes(), p.options()));
    state->exp_avg_sq(untouched_zeros(p.sizes(), p.options()));
    for (const auto& [mine, theirs] : {std::pair{state->exp_avg(), filled.exp_avg()},
                                       std::pair{state->exp_avg_sq(), filled.exp_avg_sq()}}) {
      deferred.push_back(mine);
      source[mine.data_ptr()] = theirs;
    }
    lazy.state()[c10::guts::to_string(p.unsafeGetTensorImpl())] = std::move(state);
  }
  std::set<const void*> seen;
  torch::Tensor before;
  int64_t most = 0;
  Checkpoint streamed;
  streamed.meta = whole.meta;
  streamed.blobs["rng"] = "after";
  streamed.streams["optimizer"] = optimizer_stream(lazy, deferred, [&](const torch::Tensor& t) {
    EXPECT_TRUE(seen.insert(t.data_ptr()).second) << "filled twice";
    if (before.defined()) give_back_pages(before);
    t.copy_(source.at(t.data_ptr()));
    before = t;
    int64_t resident = 0;
    for (const auto& d : deferred) resident += resident_bytes(d);
    most = std::max(most, resident);
  });
  const std::string path = dir_ + "/streamed.ckpt";
  save_checkpoint(path, streamed);
  EXPECT_EQ(seen.size(), deferred.size());
  EXPECT_EQ(testing::slurp(path), testing::slurp(path_));
  EXPECT_EQ(most, 256 * 256 * 4);
  torch::optim::Adam restored(params, torch::optim::AdamOptions(0.01));
  load_optimizer_bytes(restored, load_checkpoint(path).blobs.at("optimizer"), path);
  EXPECT_EQ(optimizer_bytes(restored), whole.blobs["optimizer"]);

  // A stream that gives other than the bytes it announced is refused.
  streamed.streams["optimizer"].size += 1;
  seen.clear();
  before = torch::Tensor();
  EXPECT_CONTAINS(error_of([&] { save_checkpoint(path, streamed); }), "a streamed section gave");
  EXPECT_EQ(testing::slurp(path), testing::slurp(path_)) << "the file is left as it was";
}

// Weights left on disk are read straight into the module, with the same checks.
TEST_F(CheckpointTest, WeightsLeftOnDiskLoadLikeABlob) {
  const Checkpoint c = load_checkpoint(path_, {"model"});
  EXPECT_EQ(c.blobs.count("model"), 0u);
  ASSERT_EQ(c.on_disk.count("model"), 1u);
  EXPECT_EQ(c.blobs.at("extra"), std::string("\0\1\2 bytes", 9));
  EXPECT_EQ(c.on_disk.at("model").size, module_bytes(*module_).size());
  torch::manual_seed(99);
  torch::nn::Linear other(5, 3);
  ASSERT_FALSE(torch::equal(other->weight, module_->weight));
  load_model_weights(*other, c, path_);
  EXPECT_TRUE(torch::equal(other->weight, module_->weight));
  EXPECT_TRUE(torch::equal(other->bias, module_->bias));
  torch::nn::Linear wrong(4, 3);
  const std::string m = error_of([&] { load_model_weights(*wrong, c, path_); });
  EXPECT_CONTAINS(m, path_);
  EXPECT_CONTAINS(m, "[3, 5]");
  Checkpoint empty;
  EXPECT_CONTAINS(error_of([&] { load_model_weights(*other, empty, path_); }), "no model weights");
}

TEST_F(CheckpointTest, WeightsOnDiskComeFromTheFileThatWasChecked) {
  const Checkpoint c = load_checkpoint(path_, {"model"});
  torch::manual_seed(7);
  torch::nn::Linear newer(5, 3);
  Checkpoint replacement;
  replacement.meta = {{"model", "linear"}};
  replacement.tensor_blobs["model"] = named_tensors(*newer);
  save_checkpoint(path_, replacement);  // renamed over the file read above
  torch::nn::Linear loaded(5, 3);
  load_model_weights(*loaded, c, path_);
  EXPECT_TRUE(torch::equal(loaded->weight, module_->weight));
  EXPECT_FALSE(torch::equal(loaded->weight, newer->weight));
}

TEST_F(CheckpointTest, LeavesNoTemporaryFile) {
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "m.ckpt");
  }
}

TEST_F(CheckpointTest, OverwriteReplacesTheFile) {
  Checkpoint c;
  c.meta = {{"model", "second"}};
  save_checkpoint(path_, c);
  EXPECT_EQ(load_checkpoint(path_).meta["model"], "second");
  EXPECT_TRUE(load_checkpoint(path_).blobs.empty());
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(CheckpointTest, OptimizerStateRoundTrips) {
  torch::optim::Adam adam(module_->parameters(), torch::optim::AdamOptions(0.01));
  auto loss = module_->forward(torch::ones({2, 5})).sum();
  loss.backward();
  adam.step();
  const std::string bytes = optimizer_bytes(adam);
  torch::optim::Adam restored(module_->parameters(), torch::optim::AdamOptions(0.01));
  load_optimizer_bytes(restored, bytes, path_);
  EXPECT_EQ(optimizer_bytes(restored), bytes);
}

TEST_F(CheckpointTest, RandomBytesAreNotACheckpoint) {
  const std::string other = dir_ + "/random.ckpt";
  std::string bytes(4096, '\0');
  uint32_t x = 12345;
  for (auto& b : bytes) b = static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
  testing::write_file(other, bytes);
  const std::string m = error_of([&] { load_checkpoint(other); });
  EXPECT_CONTAINS(m, other);
  EXPECT_CONTAINS(m, "is not a Sift checkpoint");
}

TEST_F(CheckpointTest, EmptyFileIsNotACheckpoint) {
  testing::write_file(path_, "");
  EXPECT_CONTAINS(error_of([&] { load_checkpoint(path_); }), "is not a Sift checkpoint");
}

TEST_F(CheckpointTest, TruncatedBody) {
  const std::string bytes = testing::slurp(path_);
  testing::write_file(path_, bytes.substr(0, bytes.size() - 100));
  const std::string m = error_of([&] { load_checkpoint(path_); });
  EXPECT_CONTAINS(m, path_);
  EXPECT_CONTAINS(m, "truncated");
}

TEST_F(CheckpointTest, TruncatedInsideTheHeader) {
  testing::write_file(path_, testing::slurp(path_).substr(0, 12));
  EXPECT_CONTAINS(error_of([&] { load_checkpoint(path_); }), "truncated");
}

TEST_F(CheckpointTest, FlippedByteFailsTheChecksum) {
  std::string bytes = testing::slurp(path_);
  ASSERT_GT(bytes.size(), kHeader + 200);
  bytes[bytes.size() / 2] ^= 0x40;
  testing::write_file(path_, bytes);
  const std::string m = error_of([&] { load_checkpoint(path_); });
  EXPECT_CONTAINS(m, path_);
  EXPECT_CONTAINS(m, "corrupted");
  EXPECT_CONTAINS(m, "checksum");
}

TEST_F(CheckpointTest, FlippedFirstBodyByteFailsTheChecksum) {
  std::string bytes = testing::slurp(path_);
  bytes[kHeader] ^= 0x01;
  testing::write_file(path_, bytes);
  EXPECT_CONTAINS(error_of([&] { load_checkpoint(path_); }), "checksum");
}

TEST_F(CheckpointTest, NewerFormatVersion) {
  std::string bytes = testing::slurp(path_);
  const uint32_t newer = kCheckpointVersion + 1;
  std::memcpy(&bytes[8], &newer, sizeof(newer));
  testing::write_file(path_, bytes);
  const std::string m = error_of([&] { load_checkpoint(path_); });
  EXPECT_CONTAINS(m, path_);
  EXPECT_CONTAINS(m, "newer");
}

TEST_F(CheckpointTest, MissingFile) {
  const std::string m = error_of([&] { load_checkpoint(dir_ + "/absent.ckpt"); });
  EXPECT_CONTAINS(m, dir_ + "/absent.ckpt");
}

TEST_F(CheckpointTest, WeightsOfAnotherShapeAreRefused) {
  const Checkpoint c = load_checkpoint(path_);
  torch::nn::Linear wrong(4, 3);
  const std::string m = error_of([&] { load_module_bytes(*wrong, c.blobs.at("model"), path_); });
  EXPECT_CONTAINS(m, path_);
  EXPECT_CONTAINS(m, "do not fit");
  EXPECT_CONTAINS(m, "'weight'");
  EXPECT_CONTAINS(m, "[3, 5]");
}

TEST_F(CheckpointTest, GarbageWeightBytesAreRefused) {
  torch::nn::Linear target(5, 3);
  EXPECT_CONTAINS(error_of([&] { load_module_bytes(*target, "not an archive", path_); }), path_);
}

TEST_F(CheckpointTest, UnwritableDirectoryIsASiftError) {
  Checkpoint c;
  c.meta = {{"model", "x"}};
  const std::string m = error_of([&] { save_checkpoint(dir_ + "/no/such/dir/m.ckpt", c); });
  EXPECT_CONTAINS(m, "no/such/dir");
}

}  // namespace checkpoint_test
}  // namespace sift
