// The options a search tunes: the model type's defaults (ModelTraits::tuned) with the
// config's `tune:` section laid over them, each checked before any trial starts.
#pragma once

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

// The traits of `base`'s model type; throws naming model.type.
const ModelTraits& traits_of(const SiftConfig& base, const std::vector<ModelTraits>& models);

}  // namespace sift
