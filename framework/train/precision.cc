#include "framework/train/precision.h"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <cmath>

#include "core/error.h"
#include "models/model.h"

namespace sift {

LossScaler::LossScaler(LossScalerOptions options)
    : enabled_(true), options_(options), scale_(options.init_scale) {}

torch::Tensor LossScaler::scale_loss(const torch::Tensor& loss) const {
  return enabled_ ? loss * scale_ : loss;
}

namespace {

// Plain-op unscaling: LibTorch 1.13's fused kernel is CUDA-only and dense-only.
bool unscale_plain(const torch::Tensor& grad, double inv_scale) {
  torch::Tensor values = grad.is_sparse() ? grad._values() : grad;
  values.mul_(inv_scale);
  return torch::isfinite(values).all().item<bool>();
}

}  // namespace

bool LossScaler::unscale(const std::vector<torch::Tensor>& parameters) {
  if (!enabled_) return true;
  torch::NoGradGuard no_grad;
  const double inv_scale = 1.0 / scale_;
  bool finite = true;
  std::vector<torch::Tensor> fused;
  for (const auto& p : parameters) {
    const torch::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (g.is_cuda() && !g.is_sparse()) {
      fused.push_back(g);
    } else {
      finite = unscale_plain(g, inv_scale) && finite;
    }
  }
  if (!fused.empty()) {
    auto found_inf = torch::zeros({1}, fused[0].options().dtype(torch::kFloat32));
    auto inv = torch::full({1}, inv_scale, found_inf.options());
    at::_amp_foreach_non_finite_check_and_unscale_(fused, found_inf, inv);
    finite = finite && found_inf.item<float>() == 0.0f;
  }
  return finite;
}

void LossScaler::update(bool finite) {
  if (!enabled_) return;
  // The same rule as ATen's _amp_update_scale_; the scale is one number, kept on the
  // host, since the step already waits for the loss value.
  if (!finite) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    ++skipped_;
    return;
  }
  if (++growth_tracker_ >= options_.growth_interval) {
    const double grown = scale_ * options_.growth_factor;
    if (std::isfinite(static_cast<float>(grown))) scale_ = grown;
    growth_tracker_ = 0;
  }
}

nlohmann::json LossScaler::state() const {
  return {{"scale", scale_}, {"growth_tracker", growth_tracker_}, {"skipped_steps", skipped_}};
}

void LossScaler::load_state(const nlohmann::json& state) {
  scale_ = state.value("scale", options_.init_scale);
  growth_tracker_ = state.value("growth_tracker", int64_t{0});
  skipped_ = state.value("skipped_steps", int64_t{0});
}

LossScaler make_scaler(const PrecisionPlan& plan) {
  return plan.loss_scaling ? LossScaler(plan.scaler) : LossScaler();
}

}  // namespace sift
