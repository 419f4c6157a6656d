// Every model type's traits (config/model_traits.h): its options, what it supports, its
// size estimate and what `sift tune` searches. Torch-free, so that a program without
// LibTorch (sift-lite) checks a config as sift-main does.
#pragma once

#include <vector>

#include "config/model_traits.h"

namespace sift {

std::vector<ModelTraits> model_traits();

}  // namespace sift
