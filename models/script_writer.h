// Rebuilding a trained model as TorchScript: a C++ module cannot be scripted or traced
// (NOTES.md), so each model type writes its forward as TorchScript source over copies of
// its trained tensors, which this writer registers on a torch::jit::Module.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <string>

#include "config/config.h"

namespace sift {

class ScriptWriter {
 public:
  // `tensors`: the trained parameters and buffers by their module names
  // ("layers.0.ff_in.weight"). With int8, every matrix (and convolution kernel) is
  // stored as int8 with one fp32 scale per output row, and dequantized by the source.
  ScriptWriter(std::map<std::string, torch::Tensor> tensors, bool int8);

  // An expression for the fp32 tensor `name`, registering it on first use.
  std::string weight(const std::string& name);
  // An expression for the rows `index` (an int64 tensor expression of any shape) of the
  // table `name`: [index..., dim]. Only the rows looked up are dequantized, so a
  // 2M-row fastText table costs nothing extra per call.
  std::string rows(const std::string& name, const std::string& index);
  // An expression for the mean of the rows of the table `name` over each bag of the
  // source's `ids` and `offsets` (torch::nn::EmbeddingBag in mean mode): [bags, dim].
  std::string bag_mean(const std::string& name);
  bool has(const std::string& name) const { return tensors_.count(name) > 0; }
  bool int8() const { return int8_; }
  const torch::Tensor& tensor(const std::string& name) const;

  // Defines `source` (whole methods) on the module and returns it.
  torch::jit::Module finish(const std::string& source);

 private:
  std::string attribute(const std::string& name);  // registers and returns its name

  std::map<std::string, torch::Tensor> tensors_;
  bool int8_;
  torch::jit::Module module_;
};

// A double as TorchScript source, read back to the same value.
std::string script_number(double value);

}  // namespace sift
