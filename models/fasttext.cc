#include "models/fasttext.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "core/error.h"
#include "models/base/fasttext_forward.h"
#include "models/base/fasttext_loss.h"
#include "models/embeddings.h"

namespace sift {

FastTextImpl::FastTextImpl(const ModelConfig& config, const ModelShape& shape)
    : loss_(shape.loss), negatives_(shape.negatives) {
  // Sparse gradients: a step touches only the rows of the batch's words, not the
  // millions of hash buckets. fastText's initialisation: small uniform inputs (the table),
  // zero output layer (below).
  UniformFill fill;
  embedding_ = register_module("embedding", make_bag_table(config, shape, fill));
  remember_fill(kFastTextTable, fill);
  // hs: one row per internal node of the tree, labels - 1.
  const int64_t rows = fasttext_output_rows(loss_, shape.num_classes);
  output_ = register_module("output", torch::nn::Linear(config.dim, rows));
  if (loss_ == Loss::hs || loss_ == Loss::ns) {
    label_counts_ = register_buffer(
        kFastTextLabelCounts,
        torch::tensor(label_counts_of(shape.label_counts, shape.num_classes), torch::kInt64));
  }
  torch::NoGradGuard no_grad;
  output_->weight.zero_();
  output_->bias.zero_();
}

uint64_t negative_seed() {
  return static_cast<uint64_t>(
      torch::randint(std::numeric_limits<int64_t>::max(), {1}, torch::kInt64).item<int64_t>());
}

std::vector<int64_t> counts_of(const torch::Tensor& counts) {
  const torch::Tensor c = counts.to(torch::kCPU, torch::kInt64).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

std::vector<FastTextImpl::TreeLevel> tree_levels(const LabelTree& tree) {
  const int64_t labels = tree.labels;
  std::vector<FastTextImpl::TreeLevel> levels;
  std::vector<int64_t> parents{2 * labels - 2};  // the root
  while (!parents.empty()) {
    std::vector<int64_t> nodes, up, steps, next;
    for (const int64_t p : parents) {
      if (p < labels) continue;  // a leaf
      for (const int64_t child : {tree.left[p], tree.right[p]}) {
        nodes.push_back(child);
        up.push_back(p);
        steps.push_back((p - labels) + (tree.code[child] ? labels - 1 : 0));
        next.push_back(child);
      }
    }
    if (nodes.empty()) break;
    levels.push_back({torch::tensor(nodes), torch::tensor(up), torch::tensor(steps)});
    parents = std::move(next);
  }
  return levels;
}

void FastTextImpl::refresh() {
  if (!label_counts_.defined()) {
    throw Error(fmt::format("train.loss {} keeps no label tree or draws", to_string(loss_)));
  }
  // Compared by value: a checkpoint loads into the buffer's memory without a version bump.
  std::vector<int64_t> counts = counts_of(label_counts_);
  if ((tree_ || sampler_) && counts == counts_) return;
  counts_ = std::move(counts);
  tree_.reset();
  sampler_.reset();
  if (loss_ == Loss::hs) {
    tree_ = std::make_unique<LabelTree>(build_label_tree(counts_));
    levels_ = tree_levels(*tree_);
  } else {
    sampler_ = std::make_unique<NegativeSampler>(counts_);
  }
  plain_ = fasttext_loss(
      {loss_, static_cast<int64_t>(counts_.size()), tree_.get(), sampler_.get(), negatives_});
}

const LabelTree& FastTextImpl::tree() {
  refresh();
  if (!tree_) throw Error("train.loss: only hs has a label tree");
  return *tree_;
}

const NegativeSampler& FastTextImpl::sampler() {
  refresh();
  if (!sampler_) throw Error("train.loss: only ns draws negatives");
  return *sampler_;
}

torch::Tensor FastTextImpl::hidden(const ModelInput& input) {
  // run.shard: parameters: the table holds the rows of the ranks' batches, ids renumbered.
  const torch::Tensor ids =
      recompute_.shards ? recompute_.shards->gather_rows(embedding_->weight, input.ids) : input.ids;
  return embedding_->forward(ids, input.offsets);
}

torch::Tensor FastTextImpl::binary_losses(const torch::Tensor& h, const torch::Tensor& rows,
                                          const torch::Tensor& signs) {
  const int64_t n = rows.size(0), m = rows.size(1);
  const torch::Tensor flat = rows.reshape({-1});
  const torch::Tensor w = output_->weight.index_select(0, flat).view({n, m, -1});
  const torch::Tensor b = output_->bias.index_select(0, flat).view({n, m});
  const torch::Tensor scores = torch::bmm(w, h.unsqueeze(2)).squeeze(2) + b;
  return -(torch::log_sigmoid(scores * signs) * signs.abs()).sum(1);
}

torch::Tensor FastTextImpl::forward(const ModelInput& input) {
  const torch::Tensor scores = output_->forward(hidden(input));
  return loss_ == Loss::hs ? tree_log_probabilities(scores) : scores;
}

torch::Tensor FastTextImpl::tree_log_probabilities(const torch::Tensor& scores) {
  tree();
  // Node-major [nodes, batch], so that each level's gathers and copies move whole
  // contiguous rows of the batch.
  const torch::Tensor s = scores.to(torch::kFloat32).t().contiguous();
  const int64_t labels = s.size(0) + 1;
  // log sigmoid(x) = -softplus(-x): softplus needs no buffer beside its result.
  const torch::Tensor steps = torch::cat({-torch::softplus(s), -torch::softplus(-s)}, 0);
  // Every row but the root's is written before it is read.
  torch::Tensor log_p = torch::empty({2 * labels - 1, s.size(1)}, s.options());
  log_p[2 * labels - 2].zero_();
  const torch::Device d = s.device();
  for (const TreeLevel& level : levels_) {
    log_p.index_copy_(
        0, level.nodes.to(d),
        log_p.index_select(0, level.parents.to(d)) + steps.index_select(0, level.steps.to(d)));
  }
  return log_p.narrow(0, 0, labels).t().contiguous();
}

std::pair<torch::Tensor, torch::Tensor> FastTextImpl::top_k(const ModelInput& input, int64_t k,
                                                            double min_probability) {
  if (loss_ != Loss::hs) return {};
  refresh();
  const torch::Tensor h = hidden(input).to(torch::kCPU, torch::kFloat32).contiguous();
  const torch::Tensor w = output_->weight.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  const torch::Tensor b = output_->bias.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  const int64_t n = h.size(0), dim = h.size(1);
  const OutputLayer out{w.data_ptr<float>(), b.data_ptr<float>(), w.size(0), dim};
  auto values = torch::zeros({n, k}, torch::kFloat32);
  auto indices = torch::full({n, k}, -1, torch::kInt64);
  for (int64_t i = 0; i < n; ++i) {
    const auto best = plain_->top_k(out, h.data_ptr<float>() + i * dim, k, min_probability);
    for (size_t j = 0; j < best.size(); ++j) {
      values[i][static_cast<int64_t>(j)] = best[j].second;
      indices[i][static_cast<int64_t>(j)] = best[j].first;
    }
  }
  return {values, indices};
}

std::pair<torch::Tensor, torch::Tensor> FastTextImpl::target_matrices(const torch::Tensor& labels,
                                                                      uint64_t seed) {
  // One pass over the batch into flat lists (example i's targets end at ends[i]), so that
  // the batch costs a few growing buffers rather than two vectors an example.
  const int64_t n = labels.size(0);
  const int64_t* l = labels.data_ptr<int64_t>();
  std::vector<int64_t> rows, one_rows;
  std::vector<uint8_t> positive, one_positive;
  std::vector<size_t> ends;
  size_t width = 1;
  for (int64_t i = 0; i < n; ++i) {
    plain_->targets(l[i], seed, i, one_rows, one_positive);
    rows.insert(rows.end(), one_rows.begin(), one_rows.end());
    positive.insert(positive.end(), one_positive.begin(), one_positive.end());
    ends.push_back(rows.size());
    width = std::max(width, one_rows.size());
  }
  auto r = torch::zeros({n, static_cast<int64_t>(width)}, torch::kInt64);
  auto s = torch::zeros({n, static_cast<int64_t>(width)}, torch::kFloat32);
  auto ra = r.accessor<int64_t, 2>();
  auto sa = s.accessor<float, 2>();
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = i == 0 ? 0 : ends[i - 1], j = 0; k < ends[i]; ++k, ++j) {
      ra[i][j] = rows[k];
      sa[i][j] = positive[k] ? 1.0f : -1.0f;
    }
  }
  return {r, s};
}

torch::Tensor FastTextImpl::example_losses(const ModelInput& input, const torch::Tensor& labels) {
  if (loss_ != Loss::hs && loss_ != Loss::ns) return {};
  const torch::Tensor h = hidden(input);
  refresh();
  // Only ns draws: hs takes nothing from the generator.
  const uint64_t seed = loss_ == Loss::ns ? negative_seed() : 0;
  auto [rows, signs] = target_matrices(labels.to(torch::kCPU, torch::kInt64).contiguous(), seed);
  return binary_losses(h, rows.to(h.device()), signs.to(h.device(), h.scalar_type()));
}

}  // namespace sift
