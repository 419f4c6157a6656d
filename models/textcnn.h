// TextCNN (Kim 2014): word embeddings, one convolution per filter width with ReLU and
// max-over-time pooling, then dropout and a linear layer. The convolutions are wide (w-1
// zeros at both ends of each text, as in Kim's code) and the max runs over the windows
// that overlap the text only, so a batch's padding never changes a text's output.
#pragma once

#include "models/model.h"

namespace sift {

class TextCnnImpl : public ClassifierImpl {
 public:
  TextCnnImpl(const ModelConfig& config, const ModelShape& shape);
  torch::Tensor forward(const ModelInput& input) override;

 private:
  std::vector<int64_t> widths_;
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::ModuleList convs_;
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(TextCnn);

// Its forward as TorchScript source, for export (models/textcnn_script.cc).
std::string textcnn_script(const ModelConfig& config, ScriptWriter& writer);

}  // namespace sift
