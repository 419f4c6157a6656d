// TorchScript export of a trained run (`sift export`), and loading such a file back as
// a ModelBundle that predict and eval use like a run folder.
#pragma once

#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "framework/runtime/model_bundle.h"
#include "models/script_writer.h"

namespace sift {

struct ExportOptions {
  // "none"; "int8": Linear layers and RNN gates run by the dynamic quantized kernels,
  // embedding tables and convolutions stored int8 and dequantized (models/script_writer.h);
  // "pq": fastText's `quantize`, the embedding table product-quantized (export_pq.h).
  std::string quantize = "none";
  // pq only: keep the `cutoff` rows of largest norm (0: all); sub-vectors of `dsub` dims;
  // norms quantized apart (`qnorm`); the output matrix product-quantized too (`qout`).
  int64_t cutoff = 0;
  int64_t dsub = 2;
  bool qnorm = false;
  bool qout = false;
  // The rows --cutoff keeps (bool [rows]) when chosen beforehand: --retrain picks them,
  // then trains, and the export must keep the same ones. Undefined: chosen at export.
  torch::Tensor kept_rows;
  // pq: tables already product-quantized, by name (an imported fastText .ftz), stored as
  // they are; their rows are the table's after --cutoff.
  std::map<std::string, PqTable> pq_given;
  // How the run was retrained on the kept rows, for the file's description ("": not).
  std::string retrained;
  std::string dtype = "fp32";  // "fp32" or "bf16" (weights and computation; fp32 logits)
  // int8 Linear products of fewer multiply-adds run in fp32 on the unpacked weights (0:
  // always the int8 kernel, as tests use to exercise it).
  int64_t int8_min_macs = kInt8MinMacs;
};

// The quantized engines this LibTorch has ("fbgemm", "onednn", "qnnpack"), and the one
// in use: int8 exports pack their weights for it when loaded.
std::vector<std::string> quantized_engines();
std::string quantized_engine();
// Makes `name` the engine for int8 exports loaded from now on; sift::Error naming the
// engines this LibTorch has when it lacks `name`.
void use_quantized_engine(const std::string& name);

// Writes the run's model with its labels, tokenizer, vocabulary, config and format
// description (extra files of the archive, export_format.h) to `out`, through a
// temporary name. Returns the file's size in bytes.
int64_t export_run(const ModelBundle& bundle, const std::string& out,
                   const ExportOptions& options = {});

// CRC-32 over the names and bytes of a module's parameters and buffers, then over the
// names and states (int8 weights, scales, biases) of its packed int8 weights.
uint32_t weights_crc(const torch::jit::Module& module);

// A run's model as its exported TorchScript module sees it: a Classifier whose forward
// calls the script.
class ScriptedClassifierImpl : public ClassifierImpl {
 public:
  ScriptedClassifierImpl(torch::jit::Module module, InputKind kind);
  torch::Tensor forward(const ModelInput& input) override;
  torch::jit::Module& script() { return module_; }

 private:
  torch::jit::Module module_;
  InputKind kind_;
};

// Loads an export written by export_run; the bundle's run_dir is the file's path and its
// model a ScriptedClassifierImpl. `overrides` are --set assignments on the stored
// config. sift::Error with one clear sentence for a file that is missing, not ours,
// truncated or corrupted, or of a newer format version.
ModelBundle load_export(const std::string& path, const std::vector<std::string>& overrides = {});

// A run folder (load_run) or an exported file (load_export), told apart by what is there.
ModelBundle load_model(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace sift
