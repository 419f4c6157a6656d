// `sift pretrain`'s config before it is resolved (torch-free): the checks that name a key
// (no unlabelled files; train.init_from of a model that is not an encoder; a vocabulary
// that does not match the encoder it continues), and what continuing a run brings: the
// model.* and tokenizer.* keys the config does not give, from the train.init_from run
// folder (an `sift import hf` run, or an earlier pretraining), its WordPiece vocabulary
// included (take_run_model, init_from_config.h). train.best_metric defaults to masked_accuracy.
#pragma once

#include <vector>

#include "config/config.h"
#include "config/model_traits.h"

namespace sift {

// `config` as loaded without model defaults; returns it ready for apply_model_defaults.
// Throws sift::Error naming the key.
SiftConfig pretraining_config(SiftConfig config, const std::vector<ModelTraits>& models);

}  // namespace sift
