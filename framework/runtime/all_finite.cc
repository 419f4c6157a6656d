#include "framework/runtime/all_finite.h"

#include <cfloat>
#include <cmath>

namespace sift {

bool all_finite(const torch::Tensor& t) {
  if (t.scalar_type() != torch::kFloat || !t.is_contiguous() || !t.device().is_cpu()) {
    return torch::isfinite(t).all().item<bool>();
  }
  const float* data = t.data_ptr<float>();
  const int64_t n = t.numel();
  bool finite = true;
  // No early exit, so the loop vectorises; NaN fails the comparison.
  for (int64_t i = 0; i < n; ++i) finite &= std::fabs(data[i]) <= FLT_MAX;
  return finite;
}

}  // namespace sift
