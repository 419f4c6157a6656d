#include "models/autocast.h"

#include <torch/version.h>

#include <ATen/autocast_mode.h>

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

AutocastGuard::AutocastGuard(Precision precision, const torch::Device& device) {
  if (precision == Precision::fp32) return;
  AutocastState s = AutocastState::current();
  const at::ScalarType dtype = precision == Precision::fp16 ? at::kHalf : at::kBFloat16;
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

}  // namespace sift
