// The text encoder's options as a config sets them: one mapping for training (DataPlan)
// and for `sift predict`'s torch-free fastText path, which must encode alike.
#pragma once

#include "config/config.h"
#include "datasets/text_encoder.h"

namespace sift {

// tokenizer.*, model.ngrams/buckets and data.max_length; `kind` is the model's input
// (the model registry's ModelSpec::input).
TextEncoderOptions encoder_options(const SiftConfig& config, InputKind kind);

}  // namespace sift
