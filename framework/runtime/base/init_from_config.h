// What a config that continues a run folder (train.init_from: a `sift import hf` run, a
// pretraining or any earlier run) takes of the run's config.yaml before its model's
// defaults apply, so that `train.init_from: runs/imported` and the data paths are a whole
// fine-tuning config:
//   - model.type and every key of the run's model (its traits' options) it does not give
//     (but model.pretrained: the run's weights replace pretrained vectors), every
//     tokenizer.* key it does not give, and data.max_length;
//   - the run's own copies of its files: tokenizer.model (WordPiece vocabulary or
//     SentencePiece model) and the stop words, as `sift predict` reads them;
//   - a model.* key it gives must hold the run's value (the weights are the run's), but
//     for a fine-tuning's own choices: model.dropout, model.freeze_embeddings and
//     model.pooling. A config of another model.type is left alone (the run plan refuses it,
//     naming both types).
// Torch-free (sift_runtime_base).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "config/model_traits.h"

namespace sift {

// Takes into `config` what it does not give of run folder `from` (see above); values taken
// have the origin "train.init_from (FROM)". Nothing when `from` holds no config.yaml (a
// checkpoint file; the weights' loader names what is missing). Throws sift::Error naming
// the contradicting key, where it was given, its value and the run's.
// `models`: models/base/traits.h's model_traits().
void take_run_model(SiftConfig& config, const std::string& from,
                    const std::vector<ModelTraits>& models);

// A training config: `path` and `overrides` as load_config reads them, then what a
// train.init_from run folder gives (take_run_model), then the model type's defaults
// (apply_model_defaults). `sift train`, `sift cv` and `sift config --dump` read it so.
SiftConfig load_training_config(const std::string& path, const std::vector<std::string>& overrides,
                                const std::vector<ModelTraits>& models);

}  // namespace sift
