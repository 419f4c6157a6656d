// The interface every classifier in the model zoo implements, and the registry that
// creates them by name.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/model_traits.h"
#include "core/uniform_fill.h"
#include "datasets/text_encoder.h"
#include "models/base/bag_sgd.h"
#include "models/base/traits.h"
#include "models/prune_units.h"
#include "models/recompute.h"

namespace sift {

// A batch on the model's device. Bag models: `ids` flat [total] with `offsets` [batch].
// Sequence models: `ids` [batch, length] padded with Vocab::kPad (0) on the right, and
// `lengths` [batch] (each >= 1: an empty text is one padding token).
struct ModelInput {
  torch::Tensor ids;
  torch::Tensor offsets;
  torch::Tensor lengths;
};

class ClassifierImpl : public torch::nn::Module {
 public:
  // Returns logits [batch, classes] (train.loss hs: each label's log-probability).
  virtual torch::Tensor forward(const ModelInput& input) = 0;

  // Each example's training loss [batch] when the output layer computes its own from the
  // rows it touches (the fastText model's hs and ns losses: the depth of the tree, or the
  // label and its negatives, instead of every label); `labels` [batch] on the model's
  // device. Undefined: the framework's loss over forward()'s logits.
  virtual torch::Tensor example_losses(const ModelInput& /*input*/,
                                       const torch::Tensor& /*labels*/) {
    return {};
  }

  // The k most probable labels of each example and their probabilities ([batch, k]
  // each, on the CPU; fewer than k columns when the threshold leaves fewer), when the
  // model finds them faster than by scoring every label (the fastText model's hs: a
  // search down its tree, cut below `min_probability`). {}: score every label.
  virtual std::pair<torch::Tensor, torch::Tensor> top_k(const ModelInput& /*input*/, int64_t /*k*/,
                                                        double /*min_probability*/) {
    return {};
  }

  // Encoders (traits masked_lm) built with ModelShape::masked_lm: the scores over every id
  // [n, ids] of the n positions `positions` (flat indices into input.ids [batch, length])
  // from the masked-token head tied to the input embeddings. Undefined: no such head.
  virtual torch::Tensor masked_token_logits(const ModelInput& /*input*/,
                                            const torch::Tensor& /*positions*/) {
    return {};
  }

  // train.optimizer.layer_decay: the depth of parameter `name` in a stack of layers, 0
  // the embeddings, i + 1 layer i, layer_count() + 1 what reads the top layer (head,
  // output); -1: this model has no stack of layers (the default).
  virtual int64_t depth_of(const std::string& /*name*/) const { return -1; }
  virtual int64_t layer_count() const { return 0; }

  // run.shard: parameters: the name of the table its forward reads through
  // BlockShards::gather_rows ("": none); the only unit of a model whose traits say
  // ParameterShards::rows, kept by rows beside the layers of one that says layers.
  virtual std::string row_table() const { return ""; }

  // train.gradient_checkpointing: the blocks that re-run in backward instead of keeping their
  // activations. Models without blocks (fasttext) ignore it.
  void set_recompute(RecomputePolicy policy) { recompute_.every = policy.every; }
  // run.shard: parameters: the slices of the blocks' parameters or of the table's rows
  // (null: whole), for the models whose traits say parameter_shards; they pass recompute_
  // to run_block, or gather their table's rows through it.
  void set_block_shards(BlockShards* shards) { recompute_.shards = shards; }

  // The tensors that began as a recomputable uniform fill (the bag tables): checkpoints
  // store only their rows that differ from it. A checkpoint's own fills replace them when
  // it is loaded (load_model_weights returns them).
  const TensorFills& initial_fills() const { return fills_; }
  void remember_fill(const std::string& name, const UniformFill& fill) { fills_[name] = fill; }
  void remember_fills(const TensorFills& fills) {
    for (const auto& [name, fill] : fills) fills_[name] = fill;
  }

 protected:
  RecomputePolicy recompute_;

 private:
  TensorFills fills_;
};
// Held by pointer: the interface is abstract, so TORCH_MODULE's holder cannot wrap it.
using Classifier = std::shared_ptr<ClassifierImpl>;

// What a model needs to be built: sizes from the data, options from the config.
struct ModelShape {
  int64_t num_ids = 0;  // embedding rows, including hashed n-gram buckets
  int64_t num_classes = 0;
  // Embedding gradients may be sparse: true only for optimizers that accept them
  // (plain SGD), which then update just the rows a batch touched.
  bool sparse_gradients = false;
  // The word vocabulary behind the ids (null when unknown, as in some tests): what
  // model.pretrained vectors are matched against.
  std::shared_ptr<const Vocab> vocab;
  // train.loss and what it needs: training records per label (hs builds its tree, ns its
  // draws from them; empty when a saved model is loaded, whose weights bring them), and
  // train.neg.
  Loss loss = Loss::softmax;
  std::vector<uint64_t> label_counts;
  int64_t negatives = 5;
  // Masked-token pretraining (pretrain.files): an encoder adds its masked-token head
  // (module "mlm", models/masked_lm_head.h).
  bool masked_lm = false;
};

// The parameter names of the classifier's output layer ("output.weight", ...), which a
// fine-tuning run with other labels starts anew, and of an encoder's masked-token head.
inline constexpr const char* kOutputLayerPrefix = "output.";
inline constexpr const char* kMaskedLmHeadPrefix = "mlm.";

class ScriptWriter;  // models/script_writer.h

// Builds the model from its options and the data's sizes.
using ModelFactory = std::function<Classifier(const ModelConfig&, const ModelShape&)>;
// Writes the TorchScript methods forward(ids, offsets_or_lengths) -> logits and
// predict_proba(...) over the trained tensors the writer holds (models/*_script.cc).
using ScriptSource = std::function<std::string(const ModelConfig&, ScriptWriter&)>;

// A view of a model's weights as the fused step's tables, valid while it keeps them.
using BagTablesOf = std::function<BagTables(ClassifierImpl& model)>;

// Everything the framework knows of a model type: one entry in models/registry.cc.
struct ModelSpec {
  ModelTraits traits;  // name, summary, the model.* keys it reads, what it supports
  InputKind input = InputKind::bag;
  ModelFactory create;
  ScriptSource script;
  // Its weights as the fused SGD step's tables (train.fast_path: bag_sgd.h); null: autograd
  // only.
  BagTablesOf bag_tables = nullptr;
  // Its units for structured pruning (traits.prune lists the structures); null: none.
  PruneUnits prune_units = nullptr;
  // Its encoder alone as TorchScript, for the export of a `sift pretrain` run (no classes):
  // forward(ids, attention_mask) -> each token's state and pooled(...) -> one vector a
  // text; null: the model is no encoder.
  ScriptSource encoder_script = nullptr;
};

// Factory for a `FooImpl` + TORCH_MODULE(Foo) model built as Foo(config, shape).
template <typename Module>
ModelFactory factory_of() {
  return [](const ModelConfig& c, const ModelShape& s) { return Classifier(Module(c, s).ptr()); };
}

// The registry, filled once on first use, in one place (models/registry.cc).
const std::vector<ModelSpec>& model_registry();
// The model named `name`; throws sift::Error listing the known ones.
const ModelSpec& find_model(const std::string& name);

}  // namespace sift
