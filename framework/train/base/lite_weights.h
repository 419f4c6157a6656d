// The fastText model's weights as plain arrays, for the fastText learner (fasttext_learner.h):
// either its own, made as FastTextImpl makes them (the embedding table a uniform fill drawn
// from LibTorch's generator after torch::manual_seed(run.seed), the output layer zero: the
// sift-lite program), or a view of the LibTorch model's tensors (sift-main's fast path).
// Written to and read from checkpoints under the LibTorch model's tensor names, so that
// both programs write the same run folder.
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
  // A view of arrays another keeps (sift-main's LibTorch model): `t` (its rows, classes,
  // dim, loss, hs's tree, the label counts), `labels` and `fills`, the model's initial
  // fills: the table is written as its changed rows while it holds one under the table's
  // name, read when a checkpoint is written.
  FastTextTables(const BagTables& t, int64_t labels, const TensorFills* fills);
  FastTextTables(const FastTextTables&) = delete;
  FastTextTables& operator=(const FastTextTables&) = delete;
  int64_t rows() const { return rows_; }
  int64_t labels() const { return labels_; }
  int64_t classes() const { return classes_; }  // output rows
  Loss loss() const { return loss_; }
  const LabelTree& tree() const { return *tree_; }  // hs only
  int64_t dim() const { return dim_; }
  const float* embedding() const { return embedding_; }
  const float* output() const { return output_; }
  const float* bias() const { return bias_; }

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
  std::vector<int64_t>
      label_counts_;  // hs, ns: the tree's and draws' counts, a buffer of the model
  LabelTree own_tree_;
  const LabelTree* tree_ = &own_tree_;
  TensorFills own_fills_;
  const TensorFills* fills_ = &own_fills_;  // the table's, by kFastTextTable
  // Owned arrays (empty for a view): rows x dim, not zeroed first (the fill writes all).
  std::unique_ptr<float[]> own_embedding_;
  std::vector<float> own_output_, own_bias_;
  float* embedding_;
  float* output_;
  float* bias_;
};

}  // namespace sift
