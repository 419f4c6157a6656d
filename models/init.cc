#include "models/init.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/splitmix.h"

namespace sift {
void fast_uniform_(torch::Tensor& tensor, double lo, double hi) {
  torch::NoGradGuard no_grad;
  if (tensor.scalar_type() != torch::kFloat || !tensor.is_contiguous() || !tensor.is_cpu()) {
    tensor.uniform_(lo, hi);
    return;
  }
  uint64_t state;
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    state = at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
  }
  float* data = tensor.data_ptr<float>();
  const int64_t n = tensor.numel();
  const double scale = (hi - lo) / 16777216.0;  // 24 random bits per value
  for (int64_t i = 0; i < n; ++i) {
    data[i] = static_cast<float>(lo + static_cast<double>(splitmix64(state) >> 40) * scale);
  }
}

}  // namespace sift
