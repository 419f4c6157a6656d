// Checkpoint files: a magic number and format version, named sections (metadata JSON,
// model weights, optimizer state) and a CRC-32, written to a temporary name and renamed.
// The container and its tensor records are read in checkpoint_file.h (no LibTorch); this
// file writes them from LibTorch tensors and reads them into modules and optimizers.
#pragma once

#include <torch/torch.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/uniform_fill.h"
#include "framework/runtime/base/checkpoint_file.h"
#include "framework/runtime/base/checkpoint_writer.h"

namespace sift {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// What gives memory to a tensor whose memory is freed (run.shard: parameters: a layer
// between its uses) when a checkpoint's record of it is written or read; called in the
// records' order, and the memory must stay until the next call.
using FillFreed = std::function<void(const torch::Tensor&)>;

// What load_checkpoint reads (StoredCheckpoint: meta, sections) and, for writing, tensors.
struct Checkpoint : StoredCheckpoint {
  Checkpoint() = default;
  explicit Checkpoint(StoredCheckpoint stored) : StoredCheckpoint(std::move(stored)) {}
  // Written only: sections serialised from these tensors as the file is written, in
  // tensors_bytes' layout, so that a large table (fastText buckets: 80-400 MB) is never
  // held twice. load_checkpoint returns them in `blobs`. Names must differ from blobs'.
  std::map<std::string, NamedTensors> tensor_blobs;
  // Written only: by section, the tensors of tensor_blobs that began as a uniform fill
  // (ClassifierImpl::initial_fills). Each is written as its rows that differ from the
  // fill when that is under half its size: of a fastText table's 2M bucket rows, a small
  // set's training changes a few thousand.
  std::map<std::string, TensorFills> fills;
  // Written only: by section, what fills a tensor of tensor_blobs whose memory is freed,
  // right before its bytes are written. Such a tensor is written dense; one without
  // this is an Error.
  std::map<std::string, FillFreed> fill_freed;
  // Written only: sections whose bytes a function hands over as the file is written
  // (optimizer_stream). Names must differ from the others'.
  std::map<std::string, StreamedSection> streams;
};

// A module's parameters and buffers, by their dotted names.
NamedTensors named_tensors(const torch::nn::Module& module);

// Serialises weights as raw tensors (module_bytes) and an optimizer as a LibTorch archive.
std::string module_bytes(const torch::nn::Module& module);
std::string tensors_bytes(const NamedTensors& tensors);
std::string optimizer_bytes(const torch::optim::Optimizer& optimizer);
// optimizer_bytes' bytes, byte for byte, handed over as a checkpoint is written, for an
// optimizer whose state tensors `deferred` have no values yet (run.shard: each is
// gathered from every rank's slice): fill(t) is called for each of them in the order the
// archive writes them, right before their bytes are taken (LibTorch's writer takes a
// record's CRC first), and their memory must stay until the next call or the end. They
// must hold zeros that take no memory until written (untouched_zeros.h): a first pass
// over them, before the file is written, measures the archive and the order.
StreamedSection optimizer_stream(const torch::optim::Optimizer& optimizer,
                                 const std::vector<torch::Tensor>& deferred, FillFreed fill);
// Loads those bytes back; `path` only names the file in errors. Returns the fills of
// the tensors stored as changed rows (for ClassifierImpl::remember_fills).
TensorFills load_module_bytes(torch::nn::Module& module, const std::string& bytes,
                              const std::string& path);
// Fine-tuning's leeway (train.init_from): the tensors that may differ between a checkpoint
// and the model loading it (a new output layer for other labels, a pretraining head the
// classifier lacks). A record of such a name that the model lacks or shapes otherwise is
// read past, and a tensor of the model that the checkpoint lacks keeps its initialisation;
// their names are added to `left`. Empty: every tensor must fit.
struct WeightsLeeway {
  std::function<bool(const std::string& name)> may_differ;
  std::vector<std::string>* left = nullptr;
};
// The checkpoint's "model" section, in memory or on disk, into `module`; `path` names
// the file in errors (one without weights is refused).
// A tensor of the module whose memory is freed gets it from `fill_freed` before its record
// is read (one without it is an Error).
TensorFills load_model_weights(torch::nn::Module& module, const StoredCheckpoint& checkpoint,
                               const std::string& path, const WeightsLeeway& leeway = {},
                               const FillFreed& fill_freed = {});
void load_optimizer_bytes(torch::optim::Optimizer& optimizer, const std::string& bytes,
                          const std::string& path);
// The same from a section left on disk, read as the archive asks for its records.
void load_optimizer_section(torch::optim::Optimizer& optimizer, const SectionRef& section);

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);
// read_checkpoint (checkpoint_file.h) as a Checkpoint.
Checkpoint load_checkpoint(const std::string& path,
                           const std::vector<std::string>& leave_on_disk = {});

}  // namespace sift
