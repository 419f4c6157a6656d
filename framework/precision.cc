#include "framework/precision.h"

#include <torch/version.h>

#include <ATen/autocast_mode.h>

#include <fmt/format.h>

#include <cmath>

#include "framework/error.h"

namespace sift {

// LibTorch 2.4 replaced the per-backend autocast calls by ones taking a device type.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define SIFT_AUTOCAST_BY_DEVICE 1
#endif

AutocastState AutocastState::current() {
  AutocastState s;
#ifdef SIFT_AUTOCAST_BY_DEVICE
  s.cpu = at::autocast::is_autocast_enabled(at::kCPU);
  s.cpu_dtype = at::autocast::get_autocast_dtype(at::kCPU);
  s.cuda = at::autocast::is_autocast_enabled(at::kCUDA);
  s.cuda_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
#else
  s.cpu = at::autocast::is_cpu_enabled();
  s.cpu_dtype = at::autocast::get_autocast_cpu_dtype();
  s.cuda = at::autocast::is_enabled();
  s.cuda_dtype = at::autocast::get_autocast_gpu_dtype();
#endif
  return s;
}

void AutocastState::apply() const {
#ifdef SIFT_AUTOCAST_BY_DEVICE
  at::autocast::set_autocast_enabled(at::kCPU, cpu);
  at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype);
  at::autocast::set_autocast_enabled(at::kCUDA, cuda);
  at::autocast::set_autocast_dtype(at::kCUDA, cuda_dtype);
#else
  at::autocast::set_cpu_enabled(cpu);
  at::autocast::set_autocast_cpu_dtype(cpu_dtype);
  at::autocast::set_enabled(cuda);
  at::autocast::set_autocast_gpu_dtype(cuda_dtype);
#endif
}

AutocastGuard::AutocastGuard(const std::string& precision, const torch::Device& device) {
  if (precision == "fp32") return;
  AutocastState s = AutocastState::current();
  const at::ScalarType dtype = precision == "fp16" ? at::kHalf : at::kBFloat16;
  if (device.is_cuda()) {
    s.cuda = true;
    s.cuda_dtype = dtype;
  } else {
    s.cpu = true;
    s.cpu_dtype = dtype;
  }
  enter(s);
}

AutocastGuard::AutocastGuard(const AutocastState& state) {
  if (state.any()) enter(state);
}

void AutocastGuard::enter(const AutocastState& state) {
  previous_ = AutocastState::current();
  state.apply();
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  // The cache holds low-precision copies of the weights; they go stale at the next step.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  previous_.apply();
}

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

bool loss_scaling_enabled(const std::string& loss_scaling, const std::string& precision) {
  return loss_scaling == "dynamic" || (loss_scaling == "auto" && precision == "fp16");
}

LossScaler make_loss_scaler(const TrainConfig& train) {
  if (!loss_scaling_enabled(train.loss_scaling, train.precision)) return LossScaler();
  LossScalerOptions options;
  options.growth_interval = train.loss_scale_growth_interval;
  return LossScaler(options);
}

void validate_precision_options(const SiftConfig& config) {
  const bool cuda = config.run.device.rfind("cuda", 0) == 0;
  if (config.train.precision == "fp16" && !cuda) {
    throw Error(fmt::format(
        "train.precision: fp16 needs a CUDA device (run.device is '{}'); LibTorch has no fp16 "
        "autocast on the CPU: use bf16 there.",
        config.run.device));
  }
  if (config.train.checkpointing != "off" && config.model.type == "fasttext") {
    throw Error(
        "train.checkpointing: The fasttext model has no layers whose activations could be "
        "recomputed; set it to off (it works with textcnn, rnn and transformer).");
  }
}

}  // namespace sift
