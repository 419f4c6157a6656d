#include "models/base/negative_sampler.h"

#include <algorithm>
#include <cmath>

#include "core/splitmix.h"

namespace sift {

NegativeSampler::NegativeSampler(const std::vector<int64_t>& counts) {
  double total = 0.0;
  for (const int64_t c : counts) {
    total += std::sqrt(static_cast<double>(std::max<int64_t>(c, 0)));
    cumulative_.push_back(total);
  }
}

std::vector<int64_t> NegativeSampler::draw(int64_t target, int64_t negatives, uint64_t seed,
                                           int64_t index) const {
  std::vector<int64_t> out;
  if (cumulative_.empty()) return out;
  const double total = cumulative_.back();
  const auto t = static_cast<size_t>(target);
  const double own = t < cumulative_.size() ? cumulative_[t] - (t ? cumulative_[t - 1] : 0.0) : 0.0;
  if (!(total - own > 0)) return out;  // no other label was ever seen
  uint64_t state = mix64(seed ^ mix64(static_cast<uint64_t>(index)));
  while (static_cast<int64_t>(out.size()) < negatives) {
    // 53 random bits: a uniform double in [0, total).
    const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53 * total;
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    const int64_t label = std::min<int64_t>(it - cumulative_.begin(), cumulative_.size() - 1);
    if (label != target) out.push_back(label);
  }
  return out;
}

}  // namespace sift
