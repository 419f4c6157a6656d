#include "models/init.h"

#include <ATen/CPUGeneratorImpl.h>

namespace sift {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

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
