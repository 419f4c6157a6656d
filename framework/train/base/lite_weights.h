// The fastText model's weights as plain arrays, for the torch-free trainer (lite_trainer.h):
// made as FastTextImpl makes them (the embedding table a uniform fill drawn from LibTorch's
// generator after torch::manual_seed(run.seed), the output layer zero), written to and
// read from checkpoints under the LibTorch model's tensor names, so that its run folder is
// the one sift-main would have written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/enums.h"
#include "core/uniform_fill.h"
#include "framework/runtime/base/checkpoint_writer.h"
#include "models/base/bag_sgd.h"
#include "models/base/label_tree.h"

namespace sift {

// The first value LibTorch's default CPU generator gives after torch::manual_seed(seed)
// (its mt19937, two 32-bit draws, high word first): the state of the table's fill.
uint64_t torch_first_random64(uint64_t seed);

class FastTextTables {
 public:
  // `rows` ids of `dim` values (uniform in +-1/dim), an output row of zeros per label
  // (train.loss hs: per internal node of the Huffman tree of `label_counts`, labels - 1).
  FastTextTables(int64_t rows, int64_t labels, int64_t dim, uint64_t seed, Loss loss,
                 const std::vector<uint64_t>& label_counts);
  int64_t rows() const { return rows_; }
  int64_t labels() const { return labels_; }
  int64_t classes() const { return classes_; }  // output rows
  Loss loss() const { return loss_; }
  const LabelTree& tree() const { return tree_; }  // hs only
  int64_t dim() const { return dim_; }
  const UniformFill& fill() const { return fill_; }
  const float* embedding() const { return embedding_.get(); }
  const float* output() const { return output_.data(); }
  const float* bias() const { return bias_.data(); }

  // The fused step's view, updating these arrays.
  BagTables bag();
  // A checkpoint's "model" section over them (views()), the table written as its rows that differ
  // from its fill (checkpoint_writer.h).
  void add_to(CheckpointParts& checkpoint) const;
  // The bytes a checkpoint of them holds (what SavePolicy estimates a save from).
  int64_t bytes() const;
  bool all_finite() const;
  // Reads the "model" section of the checkpoint at `path` (written by add_to) back in, through
  // the one torch-free reader of that section (fasttext_predictor.h).
  void load(const std::string& path);

 private:
  // The LibTorch model's named tensors, in its order ("embedding.weight", "output.weight",
  // "output.bias", and hs's "label_counts"), over these arrays.
  std::vector<TensorView> views() const;

  int64_t rows_, labels_, classes_, dim_;
  Loss loss_;
  std::vector<int64_t> label_counts_;  // hs: the tree's counts, a buffer of the model
  LabelTree tree_;
  UniformFill fill_;
  std::unique_ptr<float[]> embedding_;  // rows x dim; not zeroed first: the fill writes all
  std::vector<float> output_, bias_;
};

}  // namespace sift
