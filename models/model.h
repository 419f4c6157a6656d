// The interface every classifier in the model zoo implements, and the registry that
// creates them by name.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/model_traits.h"
#include "datasets/text_encoder.h"
#include "config/config.h"
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
  // Returns logits [batch, classes].
  virtual torch::Tensor forward(const ModelInput& input) = 0;

  // train.gradient_checkpointing: the blocks that re-run in backward instead of keeping their
  // activations. Models without blocks (fasttext) ignore it.
  void set_recompute(RecomputePolicy policy) { recompute_ = policy; }

 protected:
  RecomputePolicy recompute_;
};
// Held by pointer: the interface is abstract, so TORCH_MODULE's holder cannot wrap it.
using Classifier = std::shared_ptr<ClassifierImpl>;

// What a model needs to be built: sizes from the data, options from the config.
struct ModelShape {
  int64_t num_ids = 0;      // embedding rows, including hashed n-gram buckets
  int64_t num_classes = 0;
  // Embedding gradients may be sparse: true only for optimizers that accept them
  // (plain SGD), which then update just the rows a batch touched.
  bool sparse_gradients = false;
  // The word vocabulary behind the ids (null when unknown, as in some tests): what
  // model.pretrained vectors are matched against.
  std::shared_ptr<const Vocab> vocab;
};

struct ModelSpec {
  std::string name;
  std::string summary;
  InputKind input = InputKind::bag;
  // The model.* keys this model reads; any other explicitly set model.* key is refused.
  std::vector<std::string> options;
  std::function<Classifier(const ModelConfig&, const ModelShape&)> create;
};

// The registry, filled once on first use, in one place (models/registry.cc).
const std::vector<ModelSpec>& model_registry();
// The model named `name`; throws sift::Error listing the known ones.
const ModelSpec& find_model(const std::string& name);
// What config's validate() needs to know of each registered model.
std::vector<ModelTraits> model_traits();

}  // namespace sift
