// RUN/tune.html: the page of a search, self-contained like report.html (core/html_page.h):
// the tuned metric of every validation against the search's time with the best so far,
// each tuned option against the metric, the winner and its test figures, and the trials
// table. Rewritten after every trial, so that it shows a search under way.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tune/sampler.h"
#include "tools/tune/trial_record.h"

namespace sift {

struct TunePage {
  std::string config;  // the searched config file
  std::string metric;  // "accuracy", "f1:spam", ...
  std::string field;   // its metrics.jsonl key
  std::vector<TunedParam> params;
  std::vector<TrialRecord> records;
  nlohmann::json summary;  // tune.json at the end; null while the search runs
};

std::string tune_page(const TunePage& page);

}  // namespace sift
