#include "framework/train/base/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace sift {

double scheduled_lr(const TrainConfig& config, int64_t step, int64_t total_steps) {
  const auto& s = config.scheduler;
  const double lr = config.optimizer.lr;
  if (s.type == SchedulerType::constant || total_steps <= 0) return lr;
  const double floor = lr * s.final_lr_ratio;
  int64_t warmup = 0;
  if (s.type != SchedulerType::linear) {
    warmup = s.warmup_steps > 0
                 ? s.warmup_steps
                 : static_cast<int64_t>(s.warmup_ratio * static_cast<double>(total_steps));
  }
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double progress =
      std::min(1.0, static_cast<double>(step - warmup) /
                        static_cast<double>(std::max<int64_t>(total_steps - warmup, 1)));
  if (s.type == SchedulerType::warmup_cosine) {
    return floor + (lr - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  return lr - (lr - floor) * progress;  // linear and warmup_linear
}

}  // namespace sift
