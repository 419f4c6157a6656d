// Evaluation of a LibTorch model over a batch stream (evaluation_result.h: what it counts).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "datasets/sharded_stream.h"
#include "framework/runtime/base/evaluation_result.h"
#include "models/model.h"

namespace sift {

// Runs the model in eval mode over one pass of `batches`. `confused` (single-label, with
// batches that carry their texts: StreamOptions::keep_text) keeps a few misclassified texts.
Evaluation evaluate(Classifier& model, ShardedStream& batches, InputKind kind, int64_t classes,
                    torch::Device device, LabelMode mode = {},
                    ConfusedExamples* confused = nullptr);

}  // namespace sift
