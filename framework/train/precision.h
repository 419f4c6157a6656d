// Mixed precision (train.precision): dynamic loss scaling for fp16 (the autocast scope
// is models/autocast.h). Weights and optimizer state stay fp32; autocast only changes
// the dtype that listed ops (matmul, linear, conv) compute in.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/train/base/run_plan.h"

namespace sift {

// Dynamic loss scaling, as torch.cuda.amp.GradScaler: the loss is multiplied by the scale
// so that small fp16 gradients do not flush to zero; before the optimizer step the
// gradients are divided by it and checked. A step with an inf/nan gradient is skipped
// and the scale is multiplied by backoff_factor; after growth_interval clean steps in a
// row it is multiplied by growth_factor. CUDA gradients go through ATen's fused kernels
// (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_); LibTorch 1.13 has
// those for CUDA only, so CPU (and sparse) gradients take the same steps in plain ops.
class LossScaler {
 public:
  LossScaler() = default;  // disabled: scale() and unscale() change nothing
  explicit LossScaler(LossScalerOptions options);

  bool enabled() const { return enabled_; }
  double scale() const { return scale_; }
  int64_t skipped_steps() const { return skipped_; }

  torch::Tensor scale_loss(const torch::Tensor& loss) const;
  // Divides the gradients of `parameters` by the scale in place. Returns false when one
  // of them holds inf or nan: the caller then skips the optimizer step.
  bool unscale(const std::vector<torch::Tensor>& parameters);
  // After each step (taken or skipped): lowers or raises the scale.
  void update(bool finite);

  // Saved in last.ckpt so that a resumed run continues with the same scale.
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  bool enabled_ = false;
  LossScalerOptions options_;
  double scale_ = 1.0;
  int64_t growth_tracker_ = 0;  // clean steps since the last change
  int64_t skipped_ = 0;
};

// The scaler a run's precision plan asks for (disabled unless plan.loss_scaling).
LossScaler make_scaler(const PrecisionPlan& plan);

}  // namespace sift
