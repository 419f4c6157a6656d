// After the search, the winner's settings trained again on the training and validation
// data together, for the epochs of its best validation, as fastText's autotune trains its
// winner again: the validation data has done its work (choosing) and is more to learn from.
// The gain, against the winning trial itself on the same test file, is in bench/RESULTS.md.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "tools/tune/trial_record.h"

namespace sift {

struct RefitPlan {
  std::string why_not;                 // "" when the refit can run
  std::vector<std::string> overrides;  // --set KEY=VALUE after the winner's own
  int64_t epochs = 0;
  double seconds = 0.0;  // its wall time, estimated from the winner's trial
};

// The refit of `winner`, a trial of a search on `base` (the base config with the search's
// --set overrides). Refused (why_not) when the validation files are read in another
// format than the training files, or for cross-validation.
RefitPlan plan_refit(const SiftConfig& base, const TrialRecord& winner);

}  // namespace sift
