#include "framework/train/base/save_policy.h"

namespace sift {

SavePolicy::SavePolicy(SaveLast mode, int64_t state_bytes)
    : mode_(mode), save_seconds_(static_cast<double>(state_bytes) / kEstimatedBytesPerSecond) {}

bool SavePolicy::saves_at_epoch_end(double trained_seconds) const {
  switch (mode_) {
    case SaveLast::epoch:
      return true;
    case SaveLast::end:
      return false;
    case SaveLast::automatic:
      return trained_seconds >= kSaveCostRatio * save_seconds_;
  }
  return true;
}

}  // namespace sift
