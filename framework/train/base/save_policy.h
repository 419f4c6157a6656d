// Which epoch ends write last.ckpt (train.save_last). With "auto", an epoch's end saves
// when the training since the last save took at least kSaveCostRatio times as long as a
// save takes, so that saves cost at most about a tenth of a run: on TREC the fastText
// model's 80 MB table took 0.12-0.30 s to write against 0.02 s an epoch to train, and five
// epoch saves were 92% of the training loop (bench/RESULTS.md). The saves
// train.checkpoint_minutes asks for, and the save at the end, are not this class's call.
#pragma once

#include <cstdint>

#include "config/enums.h"

namespace sift {

class SavePolicy {
 public:
  // Until the first save is timed, it is estimated from `state_bytes` (the weights and
  // buffers) at kEstimatedBytesPerSecond.
  SavePolicy(SaveLast mode, int64_t state_bytes);

  // Whether an epoch's end saves, `trained_seconds` after the last save (or the start).
  bool saves_at_epoch_end(double trained_seconds) const;
  // Records how long a save took; later decisions use it instead of the estimate.
  void saved(double seconds) { save_seconds_ = seconds; }
  double save_seconds() const { return save_seconds_; }

  static constexpr double kSaveCostRatio = 10.0;
  // The slow end of the 270-670 MB/s the 80 MB checkpoints were written at here (fsync
  // included), so the estimate errs towards skipping a save the first timing then allows.
  static constexpr double kEstimatedBytesPerSecond = 300e6;

 private:
  SaveLast mode_;
  double save_seconds_;
};

}  // namespace sift
