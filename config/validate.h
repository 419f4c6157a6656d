// Every check between options, in one place: run once on a loaded config, against the
// model types the registry declares (their traits), before anything is built from it.
#pragma once

#include <vector>

#include "config/config.h"
#include "config/model_traits.h"

namespace sift {

// Throws sift::Error with one sentence that starts with the offending key ("train.precision:
// ..."). `models` lists every known model type; model.type must name one of them.
void validate(const SiftConfig& config, const std::vector<ModelTraits>& models);

}  // namespace sift
