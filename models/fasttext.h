// fastText-style classifier (Joulin et al. 2016): the mean of word and hashed n-gram
// embeddings, then one linear layer, trained with fastText's losses (train.loss): softmax,
// hierarchical softmax (hs), negative sampling (ns) or one-vs-all (ova).
#pragma once

#include <memory>

#include "models/base/fasttext_loss.h"
#include "models/base/label_tree.h"
#include "models/base/negative_sampler.h"
#include "models/model.h"

namespace sift {

// The seed of a batch's ns draws, from LibTorch's default generator: a checkpoint's saved
// generator state brings the same draws back on resume.
uint64_t negative_seed();

class FastTextImpl : public ClassifierImpl {
 public:
  FastTextImpl(const ModelConfig& config, const ModelShape& shape);
  // softmax, ns, ova: a score per label; hs: each label's log-probability (the sum of
  // log-sigmoids along its path), so that softmax of it is the tree's distribution.
  torch::Tensor forward(const ModelInput& input) override;
  // hs: the binary logistic losses along the label's path; ns: of the label and
  // shape.negatives drawn labels. Undefined for softmax and ova.
  // ns draws its negatives from a seed it takes from LibTorch's generator
  // (negative_seed), as the fused step does: after torch::manual_seed both draw alike.
  torch::Tensor example_losses(const ModelInput& input, const torch::Tensor& labels) override;

  // hs: fastText's depth-first search of the tree (tree_top_k) on each example; rows
  // past the labels found above `min_probability` hold probability 0 and label -1.
  std::pair<torch::Tensor, torch::Tensor> top_k(const ModelInput& input, int64_t k,
                                                double min_probability) override;

  std::string row_table() const override { return "embedding.weight"; }

  Loss loss() const { return loss_; }
  int64_t negatives() const { return negatives_; }
  // hs: the tree of the label counts the weights hold ("label_counts", rebuilt when a
  // checkpoint loads new ones); ns: the draws from them.
  const LabelTree& tree();
  const NegativeSampler& sampler();
  // The mean of each bag's embedding rows [batch, dim].
  torch::Tensor hidden(const ModelInput& input);
  // hs: every label's log-probability [batch, labels] (fp32) from the internal nodes'
  // scores [batch, labels - 1], summed down the tree one level at a time: work in
  // batch x nodes, where the padded paths took batch x labels x depth (at 2,000 Zipf
  // labels, depth 22, the final evaluation of a 1-minute run took most of it).
  torch::Tensor tree_log_probabilities(const torch::Tensor& scores);

  // The tree below the root, a level at a time from the root down: the level's node ids,
  // their parents' ids and the column of [log_sigmoid(-s), log_sigmoid(s)] that scores
  // the step from the parent (code 0: parent's row, code 1: labels - 1 + its row).
  struct TreeLevel {
    torch::Tensor nodes, parents, steps;
  };

 private:
  // The per-example binary logistic losses of the output rows `rows` [batch, m] with
  // signs `signs` (+1 positive, -1 negative, 0 padding).
  torch::Tensor binary_losses(const torch::Tensor& h, const torch::Tensor& rows,
                              const torch::Tensor& signs);
  // The output rows each example's loss reads, as the fused step reads them
  // (FastTextLoss::targets: hs the label's path, ns the label and its draws), padded to the
  // batch's longest: rows [n, m] and signs (+1 positive, -1 negative, 0 past the end). Per
  // batch: every label's path, padded to the deepest leaf, was 27 MB for a Zipf tree of
  // 10,000 labels, the peak RSS of such a run's test pass.
  std::pair<torch::Tensor, torch::Tensor> target_matrices(const torch::Tensor& labels,
                                                          uint64_t seed);
  void refresh();  // rebuilds the tree and sampler when label_counts changed

  torch::nn::EmbeddingBag embedding_{nullptr};
  torch::nn::Linear output_{nullptr};
  Loss loss_ = Loss::softmax;
  int64_t negatives_ = 5;
  torch::Tensor label_counts_;   // hs, ns: int64 [labels], a buffer (in checkpoints, exports)
  std::vector<int64_t> counts_;  // what tree_ or sampler_ was built from
  std::unique_ptr<LabelTree> tree_;
  std::unique_ptr<NegativeSampler> sampler_;
  std::vector<TreeLevel> levels_;
  // hs's tree search and ns's draws, as the torch-free paths run them (fasttext_loss.h).
  std::unique_ptr<FastTextLoss> plain_;
};
TORCH_MODULE(FastText);

// An int64 tensor's values.
std::vector<int64_t> counts_of(const torch::Tensor& counts);

// The tree's levels below the root, from the root down (FastTextImpl::TreeLevel).
std::vector<FastTextImpl::TreeLevel> tree_levels(const LabelTree& tree);

// Its forward as TorchScript source, for export (models/fasttext_script.cc).
std::string fasttext_script(const ModelConfig& config, ScriptWriter& writer);

}  // namespace sift
