#include "models/fasttext_tables.h"

#include <fmt/format.h>

#include "core/error.h"
#include "models/base/fasttext_forward.h"
#include "models/fasttext.h"
#include "models/model.h"

namespace sift {
namespace {

// A handle by value: named_parameters() returns a temporary dict, so a pointer into it
// dangles once the statement ends (a use after free: sift-main crashed here in 3 of
// about 580 runs of FastTextCli.ALabelPrefixOfItsOwn..., and once in CI).
torch::Tensor weights_of(ClassifierImpl& model, const std::string& name) {
  const auto parameters = model.named_parameters();
  const torch::Tensor* t = parameters.find(name);
  if (t == nullptr || t->scalar_type() != torch::kFloat32 || !t->is_contiguous() ||
      !t->device().is_cpu()) {
    throw Error(fmt::format("fused SGD: the model has no contiguous fp32 CPU '{}'", name));
  }
  return *t;
}

}  // namespace

BagTables bag_tables_of(ClassifierImpl& model) {
  const torch::Tensor embedding = weights_of(model, kFastTextTable);
  const torch::Tensor weight = weights_of(model, kFastTextOutput);
  BagTables t;
  t.embedding = embedding.data_ptr<float>();
  t.weight = weight.data_ptr<float>();
  t.bias = weights_of(model, kFastTextBias).data_ptr<float>();
  t.rows = embedding.size(0);
  t.classes = weight.size(0);
  t.dim = weight.size(1);
  auto* fasttext = dynamic_cast<FastTextImpl*>(&model);
  if (fasttext == nullptr) return t;  // the bag of another model: softmax
  t.loss = fasttext->loss();
  t.negatives = fasttext->negatives();
  if (t.loss == Loss::hs) t.tree = &fasttext->tree();
  if (t.loss == Loss::ns) t.sampler = &fasttext->sampler();
  if (t.loss == Loss::hs || t.loss == Loss::ns) {
    const auto buffers = model.named_buffers();  // a handle: the data is the model's
    if (const torch::Tensor* c = buffers.find(kFastTextLabelCounts)) {
      t.label_counts = c->data_ptr<int64_t>();
    }
  }
  t.seed = negative_seed;
  return t;
}

}  // namespace sift
