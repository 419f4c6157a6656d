// Rebuilding a trained model as TorchScript: a C++ module cannot be scripted or traced
// (NOTES.md), so each model type writes its forward as TorchScript source over copies of
// its trained tensors, which this writer registers on a torch::jit::Module.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/product_quantizer.h"

namespace sift {

// How an export stores and computes with its weights.
//  fp32: as trained.
//  int8: Linear layers as int8 weights with one scale per output row, packed for the
//        loading process's quantized engine and run by the dynamic quantized kernel
//        (quantized::linear_dynamic) when the product is large enough; embedding tables,
//        positions, convolution kernels and LSTM/GRU gates as int8 with a scale per row,
//        dequantized by the source (no int8 kernel serves them, or none pays: rnn_script.cc).
//  bf16: every floating-point tensor in bf16 and the computation with it, but layer norms
//        (fp32: layer_norm()); logits come back as fp32.
enum class WeightFormat { fp32, int8, bf16 };

// int8 Linear products of fewer multiply-adds run in fp32 (ScriptWriter::linear): oneDNN's
// int8 kernel (LibTorch 1.13, one thread) was slower than fp32 on 40 x 128 x 384
// multiply-adds (68-85 against 36-39 us) and 2.8x faster on 40 x 512 x 2048 (240 against
// 669-704 us; bench/python/int8_linear_calls.py).
inline constexpr int64_t kInt8MinMacs = int64_t{1} << 23;
// The method of an int8 export that keeps its Linear layers' dequantized weights for the
// products that run in fp32 (ScriptWriter::linear); a loader calls it once, before serving
// (the forward then only reads them, from any thread). Absent from other exports.
inline constexpr const char* kPrepareWeights = "prepare_weights";
// int8 Linear inputs of at most this many values get a quantization range the kernel has
// seen before (ScriptWriter::linear; 128 tokens of 1,024 values).
inline constexpr int64_t kInt8AnchorMaxValues = int64_t{1} << 17;

// `sift export --quantize pq`: which of a model's tables its script stores product-
// quantized (models that support it ask ScriptWriter::pq_request()).
struct PqRequest {
  PqOptions table;      // the embedding table
  bool output = false;  // --qout: the output matrix too (same dsub and qnorm)
  // Tables whose codes are known already, by name (an imported fastText .ftz): stored as
  // they are instead of quantized again; their rows must be the table's.
  std::map<std::string, PqTable> given;
};

class ScriptWriter {
 public:
  // `tensors`: the trained parameters and buffers by their module names
  // ("layers.0.ff_in.weight").
  ScriptWriter(std::map<std::string, torch::Tensor> tensors, WeightFormat format,
               int64_t int8_min_macs = kInt8MinMacs);

  // An expression for the tensor `name` (fp32, or bf16 in a bf16 export), registering it
  // on first use. int8 matrices are dequantized.
  std::string weight(const std::string& name);
  // torch.linear(x, <prefix>.weight, <prefix>.bias) as an expression; with int8, a
  // helper method that runs the dynamic quantized kernel on weights packed when the file
  // is loaded, or fp32 on them dequantized when the product is too small to pay for the
  // kernel's fixed cost.
  std::string linear(const std::string& x, const std::string& prefix, bool bias = true);
  // torch.layer_norm of `x` over its last `dim` values with <prefix>.weight and .bias. A
  // bf16 export normalizes in fp32: LibTorch 1.13's bf16 layer_norm on the CPU took 9.0 ms
  // a call on the AG News Transformer's [64, 128, 128] activations against 0.7 ms in fp32,
  // half of the bf16 export's time at batch 64 (Python profiler, one thread).
  std::string layer_norm(const std::string& x, const std::string& prefix, int64_t dim,
                         double eps = 1e-5);
  // An expression for the rows `index` (an int64 tensor expression of any shape) of the
  // table `name`: [index..., dim]. Only the rows looked up are dequantized, so a
  // 2M-row fastText table costs nothing extra per call.
  std::string rows(const std::string& name, const std::string& index);
  // An expression for the mean of the rows of the table `name` over each bag of the
  // source's `ids` and `offsets` (torch::nn::EmbeddingBag in mean mode): [bags, dim].
  std::string bag_mean(const std::string& name);
  // Asks the model's script to store its embedding table (and with `output` its output
  // matrix) product-quantized; null when not asked. Set before the script is written.
  void request_pq(const PqRequest& request) { pq_request_ = request; }
  const PqRequest* pq_request() const { return pq_request_ ? &*pq_request_ : nullptr; }
  // Stores the matrix `name` as product-quantization codes and centroids: rows(), bag_mean()
  // and weight() of it gather centroids by codes, so the file never holds the dense table.
  void product_quantize(const std::string& name, const PqOptions& options);
  // `logits` as fp32 (a bf16 export computes in bf16).
  std::string output(const std::string& logits) const;
  bool has(const std::string& name) const { return tensors_.count(name) > 0; }
  // A tensor the source needs besides the trained ones (index or sign tables): registered
  // as it is (never quantized or cast) under `name`; returns its expression.
  std::string constant(const std::string& name, const torch::Tensor& value);
  // The run's train.loss and data.multi_label, which decide how scores become
  // probabilities (probabilities()).
  void set_loss(Loss loss, bool multi_label) {
    loss_ = loss;
    multi_label_ = multi_label;
  }
  Loss loss() const { return loss_; }
  // The probabilities of `scores` [batch, labels] as an expression: softmax; a sigmoid per
  // label for multi-label data and train.loss ns and ova; exp for hs, whose scores are
  // log-probabilities already.
  std::string probabilities(const std::string& scores) const;
  bool int8() const { return format_ == WeightFormat::int8; }
  WeightFormat format() const { return format_; }
  const torch::Tensor& tensor(const std::string& name) const;

  // Defines `source` (whole methods) on the module and returns it.
  torch::jit::Module finish(const std::string& source);

 private:
  std::string attribute(const std::string& name);  // registers and returns its name
  // The rows `index` of the product-quantized matrix whose attribute is `attr`.
  std::string pq_rows(const std::string& attr, const std::string& index) const;
  torch::Tensor fp32(const std::string& name) const;
  // quantized::linear_prepack of the matrix `weight` (per-row int8) and `bias` ("": none).
  c10::IValue pack_linear(const std::string& weight, const std::string& bias) const;

  std::map<std::string, torch::Tensor> tensors_;
  WeightFormat format_;
  torch::jit::Module module_;
  int64_t int8_min_macs_;
  std::string methods_;  // helper methods the expressions call (int8 Linear layers)
  std::string prepare_;  // kPrepareWeights' body: each int8 Linear's fp32 weights kept
  Loss loss_ = Loss::softmax;
  bool multi_label_ = false;
  std::optional<PqRequest> pq_request_;
  std::map<std::string, PqOptions> pq_;  // matrices stored product-quantized
};

// A double as TorchScript source, read back to the same value.
std::string script_number(double value);

// Names of the module's attributes that hold packed weights (custom-class objects or
// lists of them), sorted: what weights_crc hashes after the parameters and buffers.
std::vector<std::string> packed_attributes(const torch::jit::Module& module);
// CRC-32 update over a packed attribute's state (its __getstate__: int8 weights, their
// scales and biases), the same whatever engine packed it.
uint32_t packed_crc(uint32_t crc, const c10::IValue& value);

}  // namespace sift
