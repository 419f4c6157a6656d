// The options a search tunes: the model type's defaults (ModelTraits::tuned) with the
// config's `tune:` section laid over them, each checked before any trial starts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/model_traits.h"
#include "tools/tune/sampler.h"

namespace sift {

// Throws a sift::Error naming the key when a space is empty or inverted, names an option
// the model type does not read, or holds a value the option refuses.
std::vector<TunedParam> tuned_params(const SiftConfig& base, const ModelTraits& traits,
                                     const std::vector<std::string>& overrides);

// `base`'s own value (YAML text) of each tuned key whose value lies inside its space: what
// trial 0 tries, so that a search starts from the settings it was given, as fastText's
// autotune starts from its arguments.
std::map<std::string, std::string> start_values(const SiftConfig& base,
                                                const std::vector<TunedParam>& params);

}  // namespace sift
