// What the option checks need to know of a model type. Declared here, below models/, so
// that config's one validate() can check a config against the model it names; each
// model's registry entry (models/registry.cc) carries one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/enums.h"
#include "config/search_space.h"

namespace sift {

struct ModelConfig;  // config/config.h

// What run.shard: parameters (ZeRO stage 3) gathers of a model around each use.
enum class ParameterShards {
  none,    // nothing: refused
  layers,  // its blocks, run through run_block one at a time, each gathered whole
  rows,    // its embedding table, by the rows a batch reads (BlockShards::gather_rows)
};

// What a model reads of a text (datasets/text_encoder.h encodes it).
enum class InputKind {
  bag,       // word ids and hashed n-gram ids, order-free (fastText)
  sequence,  // one id per token, in order, padded per batch
};

struct ModelTraits {
  std::string name;     // model.type
  std::string summary;  // one line for `sift config --reference` and errors
  // The model.* keys this model reads; any other explicitly set model.* key is refused.
  std::vector<std::string> options;
  // It has blocks that train.gradient_checkpointing can re-run in backward.
  bool recomputation = false;
  // Its embedding tables can take sparse gradients (used with plain SGD).
  bool sparse_gradients = false;
  // It trains under bf16 / fp16 autocast.
  bool bf16 = true;
  bool fp16 = true;
  // The parameters its model.* options alone imply (the vocabulary and label rows, known
  // only after the data is read, come on top), in double so that no size overflows; and
  // the keys that drive it, for the error when it cannot fit in memory. Unset: not checked.
  std::function<double(const ModelConfig&)> parameters = {};
  std::vector<std::string> size_keys = {};
  // What `sift tune` searches by default for this model: option keys, each with its own
  // space here or (nullopt) the option table's.
  struct Tuned {
    std::string key;
    std::optional<SearchSpace> space;
  };
  std::vector<Tuned> tuned = {};
  // The structures train.prune.structure may name for this model (unstructured: any).
  std::vector<PruneStructure> prune = {PruneStructure::unstructured};
  // The output-layer losses train.loss may name for this model.
  std::vector<Loss> losses = {Loss::softmax};
  // This model's own defaults (key, YAML value), where the file and --set say nothing:
  // the settings a config of data paths alone learns with (apply_model_defaults).
  std::vector<std::pair<std::string, std::string>> defaults = {};
  // An encoder with token states and tied input embeddings: masked-token pretraining
  // (`sift pretrain`) trains it. (Last: the registry's entries set the fields above by
  // position.)
  bool masked_lm = false;
  // Its training step has a fused loop over plain arrays (models/base/fused_sgd.h): the
  // fast path's rules (framework/train/base/fast_path_rules.h) may take it.
  bool fused_step = false;
  // The words of model.pretrained's file join the vocabulary (with no training count),
  // as fastText's -pretrainedVectors adds them: a test word the training data lacks then
  // starts from its vector instead of <unk>.
  bool pretrained_words_join_vocabulary = false;
  // What run.shard: parameters (ZeRO stage 3) keeps a slice of on each rank.
  ParameterShards parameter_shards = ParameterShards::none;
  // What it reads of a text: a bag of ids, or a sequence.
  InputKind input = InputKind::sequence;
};

}  // namespace sift
