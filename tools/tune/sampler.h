// Which values the next trial of `sift tune` tries: the config's own values first (trial
// 0), uniform random positions in each space for the next trials, then mutations of one
// of the best trials so far (a small evolutionary search: each numeric position moves by
// a Gaussian step, each choice is redrawn with some probability). Seeded by (seed, trial
// number) alone, so a search with the same finished trials proposes the same values,
// which is what makes --resume exact.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/search_space.h"

namespace sift {

struct TunedParam {
  std::string key;
  SearchSpace space;
};

// One finished (or stopped) trial as the sampler sees it.
struct ScoredTrial {
  std::map<std::string, std::string> values;  // key -> YAML text
  double metric = 0.0;                        // higher is better
};

class Sampler {
 public:
  // `random_trials`: how many trials draw uniformly before mutations start. `start`: the
  // values trial 0 tries (key -> YAML text); a key it lacks is drawn.
  Sampler(std::vector<TunedParam> params, uint64_t seed, int64_t random_trials,
          std::map<std::string, std::string> start = {});

  // The values of trial `trial` (0-based) given the trials scored so far; `attempt` > 0
  // draws again for the same trial (after a proposal was refused, e.g. too large).
  std::map<std::string, std::string> propose(int64_t trial, const std::vector<ScoredTrial>& scored,
                                             int64_t attempt = 0) const;

 private:
  std::vector<TunedParam> params_;
  uint64_t seed_;
  int64_t random_trials_;
  std::map<std::string, std::string> start_;
};

}  // namespace sift
