#include "tools/tune/refit.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/loader.h"

namespace sift {
namespace {

bool same_format(const FormatConfig& a, const FormatConfig& b) {
  return a.format == b.format && a.text == b.text && a.label == b.label &&
         a.header == b.header && a.encoding == b.encoding && a.unescape == b.unescape &&
         a.label_mapping == b.label_mapping;
}

// The refit reads this much more than a trial (a tenth more data, and no validation to
// make up for it), with room for the noise of a shared machine: a chosen margin.
constexpr double kSlack = 1.25;

}  // namespace

RefitPlan plan_refit(const SiftConfig& base, const TrialRecord& winner) {
  RefitPlan plan;
  const DataConfig& d = base.data;
  if (d.folds > 0) {
    plan.why_not = "cross-validation (data.folds) keeps its folds apart";
    return plan;
  }
  std::vector<std::string> train = d.train.path;
  if (!d.valid.path.empty()) {
    if (!same_format(resolved_format(base, Split::train), resolved_format(base, Split::valid))) {
      plan.why_not = "data.valid is read in another format than data.train";
      return plan;
    }
    train.insert(train.end(), d.valid.path.begin(), d.valid.path.end());
  }
  plan.epochs = std::max<int64_t>(1, winner.best_epoch);
  plan.seconds = kSlack * winner.seconds * double(plan.epochs) /
                 double(std::max<int64_t>(1, winner.epochs));
  plan.overrides = {"data.train.path=" + yaml_quoted_list(train),
                    "data.valid.path=[]",
                    "data.valid_split=0",
                    "train.patience=0",
                    fmt::format("train.epochs={}", plan.epochs)};
  return plan;
}

}  // namespace sift
