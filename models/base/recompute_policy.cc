#include "models/base/recompute_policy.h"

namespace sift {

RecomputePolicy recompute_policy(GradientCheckpointing mode, int64_t every) {
  if (mode == GradientCheckpointing::all) return {1};
  if (mode == GradientCheckpointing::every) return {every};
  return {0};
}

}  // namespace sift
