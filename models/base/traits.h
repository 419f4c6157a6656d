// Every model type's traits (config/model_traits.h): its options, what it supports, its
// size estimate and what `sift tune` searches. Torch-free, so that a program without
// LibTorch (sift-lite) checks a config as sift-main does.
#pragma once

#include <string>
#include <vector>

#include "config/model_traits.h"
#include "core/out_of_memory.h"

namespace sift {

std::vector<ModelTraits> model_traits();

// The traits of model type `type` (sift::Error naming model.type when there is none).
const ModelTraits& traits_of(const std::string& type);

// The scope of allocating a model's weights, for the line a failure ends with: its size
// keys and its size estimate (4 bytes a parameter).
Allocating allocating_weights(const ModelConfig& model);

}  // namespace sift
