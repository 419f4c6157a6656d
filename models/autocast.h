// Autocast scopes (train.precision): the forward pass computes listed ops (matmul,
// linear, conv) in bf16 or fp16 while weights stay fp32. Below the trainer because
// gradient checkpointing (models/recompute.cc) re-enters the state a block first ran in.
#pragma once

#include <torch/torch.h>

#include <string>

#include "config/enums.h"

namespace sift {

// The thread-local autocast switches of the CPU and CUDA backends.
struct AutocastState {
  bool cpu = false;
  at::ScalarType cpu_dtype = at::kBFloat16;
  bool cuda = false;
  at::ScalarType cuda_dtype = at::kHalf;

  static AutocastState current();
  void apply() const;
  bool any() const { return cpu || cuda; }
};

// Turns autocast on for `device` in `precision` (fp32: off) for the
// guard's lifetime, then restores the previous state and drops autocast's weight cache.
class AutocastGuard {
 public:
  AutocastGuard(Precision precision, const torch::Device& device);
  // Re-enters a captured state (gradient checkpointing re-runs a block as it first ran).
  explicit AutocastGuard(const AutocastState& state);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  void enter(const AutocastState& state);

  AutocastState previous_;
  bool active_ = false;
};

}  // namespace sift
