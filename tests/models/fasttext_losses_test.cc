// train.loss hs, ns and ova of the fastText model: fastText's Huffman tree, the tree's
// distribution and search, the negative draws, and the fused step against autograd.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "models/base/fasttext_loss.h"
#include "models/base/label_tree.h"
#include "models/base/negative_sampler.h"
#include "models/fasttext.h"
#include "models/fasttext_tables.h"
#include "tests/models/bag_batch.h"

namespace sift {
namespace fasttext_losses_test {

ModelShape shape_with(Loss loss, std::vector<uint64_t> counts, int64_t negatives = 3) {
  ModelShape s = test_util::bag_shape(20, static_cast<int64_t>(counts.size()));
  s.loss = loss;
  s.label_counts = std::move(counts);
  s.negatives = negatives;
  return s;
}

// Thirteen labels of uneven counts, in no particular order.
const std::vector<uint64_t> kCounts = {40, 3, 17, 1, 8, 8, 120, 2, 30, 5, 1, 60, 11};

// A model with a random (not zero) output layer, so every row matters.
FastText model_with(Loss loss, const std::vector<uint64_t>& counts = kCounts) {
  torch::manual_seed(3);
  ModelConfig c;
  c.dim = 8;
  FastText m(c, shape_with(loss, counts));
  torch::NoGradGuard no_grad;
  for (auto& p : m->named_parameters()) {
    if (p.key().rfind("output.", 0) == 0) p.value().normal_(0.0, 0.7);
  }
  return m;
}

TEST(LabelTree, IsFastTextsHuffmanTreeWithLeavesRenumberedAsLabels) {
  // Worked by hand through fastText's buildTree on the counts sorted 5, 3, 2, 1: node 4
  // joins the counts 1 and 2, node 5 joins node 4 and the 3, the root 6 joins the 5 and
  // node 5. Here the labels come unsorted: ids 1, 3, 2, 0 hold 5, 3, 2, 1.
  const LabelTree t = build_label_tree({1, 5, 2, 3});
  EXPECT_EQ(t.paths[1], (std::vector<int64_t>{2}));
  EXPECT_EQ(t.codes[1], (std::vector<uint8_t>{0}));
  EXPECT_EQ(t.paths[3], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(t.codes[3], (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(t.paths[2], (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(t.codes[2], (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(t.paths[0], (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(t.codes[0], (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(t.depth(), 3);
  EXPECT_EQ(t.parent[6], -1);
}

TEST(LabelTree, FrequentLabelsGetShortPaths) {
  std::vector<int64_t> counts(kCounts.begin(), kCounts.end());
  const LabelTree t = build_label_tree(counts);
  EXPECT_LE(t.paths[6].size(), t.paths[3].size());  // 120 against 1
  EXPECT_LE(t.paths[11].size(), t.paths[10].size());
}

TEST(FastTextHs, ProbabilitiesOverTheLeavesSumToOne) {
  FastText m = model_with(Loss::hs);
  EXPECT_EQ(m->named_parameters()["output.weight"].size(0), 12);  // labels - 1 nodes
  const torch::Tensor p = torch::exp(m->forward(test_util::bags()));
  EXPECT_EQ(p.sizes(), (std::vector<int64_t>{3, 13}));
  EXPECT_TRUE(torch::allclose(p.sum(1), torch::ones({3}), 0.0, 1e-5)) << p.sum(1);
  // softmax of the log-probabilities is the tree's own distribution.
  EXPECT_TRUE(torch::allclose(torch::softmax(m->forward(test_util::bags()), 1), p, 0.0, 1e-6));
}

TEST(FastTextHs, EachLabelsLogProbabilityIsMinusItsPathLoss) {
  // forward sums down the tree a level at a time; example_losses sums each label's own
  // path, leaf up: two routes to the same number for every label and example.
  FastText m = model_with(Loss::hs);
  torch::NoGradGuard no_grad;
  const torch::Tensor logp = m->forward(test_util::bags());
  for (int64_t label = 0; label < 13; ++label) {
    const torch::Tensor path_loss =
        m->example_losses(test_util::bags(), torch::full({3}, label, torch::kInt64));
    EXPECT_TRUE(torch::allclose(logp.select(1, label), -path_loss, 0.0, 1e-5))
        << "label " << label << logp.select(1, label) << path_loss;
  }
}

TEST(FastTextHs, TreeLevelsVisitEveryNodeBelowTheRootOnceAfterItsParent) {
  const LabelTree t = build_label_tree({40, 3, 17, 1, 8, 8, 120, 2, 30, 5, 1, 60, 11});
  std::vector<int> seen(2 * 13 - 1, 0);
  seen[2 * 13 - 2] = 1;  // the root
  for (const auto& level : tree_levels(t)) {
    for (int64_t i = 0; i < level.nodes.size(0); ++i) {
      EXPECT_EQ(seen[level.parents[i].item<int64_t>()], 1) << "a parent comes first";
      ++seen[level.nodes[i].item<int64_t>()];
    }
  }
  for (size_t n = 0; n < seen.size(); ++n) EXPECT_EQ(seen[n], 1) << "node " << n;
}

TEST(FastTextHs, TreeSearchFindsWhatExhaustiveSearchFinds) {
  FastText m = model_with(Loss::hs);
  const torch::Tensor logp = m->forward(test_util::bags()).detach();
  for (int64_t k = 1; k <= 13; ++k) {
    auto [values, indices] = m->top_k(test_util::bags(), k, 0.0);
    auto [want_values, want_indices] = torch::exp(logp).topk(k, 1);
    EXPECT_TRUE(torch::equal(indices, want_indices)) << "k " << k << indices << want_indices;
    EXPECT_TRUE(torch::allclose(values, want_values, 0.0, 1e-6)) << "k " << k;
  }
}

TEST(FastTextHs, TreeSearchStopsBelowTheThreshold) {
  FastText m = model_with(Loss::hs);
  auto [values, indices] = m->top_k(test_util::bags(), 13, 0.2);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 13; ++j) {
      if (indices[i][j].item<int64_t>() < 0) continue;
      EXPECT_GE(values[i][j].item<double>(), 0.2);
    }
  }
}

TEST(FastTextNs, ScoresEveryLabelAndTrainsOnlyTheSampled) {
  FastText m = model_with(Loss::ns);
  EXPECT_EQ(m->forward(test_util::bags()).sizes(), (std::vector<int64_t>{3, 13}));
  auto [values, indices] = m->top_k(test_util::bags(), 2, 0.0);
  EXPECT_FALSE(values.defined());  // only hs searches a tree
}

TEST(NegativeSampler, NeverDrawsTheTargetAndRepeatsForTheSameSeed) {
  const NegativeSampler s({40, 3, 17, 0, 8});
  for (int64_t i = 0; i < 200; ++i) {
    const auto a = s.draw(0, 5, 99, i);
    EXPECT_EQ(a.size(), 5u);
    for (const int64_t l : a) {
      EXPECT_NE(l, 0);
      EXPECT_NE(l, 3);  // never seen: never drawn
    }
    EXPECT_EQ(a, s.draw(0, 5, 99, i));
  }
  EXPECT_NE(s.draw(0, 5, 99, 1), s.draw(0, 5, 100, 1));
}

TEST(NegativeSampler, DrawsLabelsByTheSquareRootOfTheirCounts) {
  const NegativeSampler s({100, 25, 1});
  std::map<int64_t, int> seen;
  for (int64_t i = 0; i < 20000; ++i) {
    for (const int64_t l : s.draw(0, 1, 7, i)) ++seen[l];
  }
  // Without label 0: labels 1 and 2 at 5 : 1.
  EXPECT_NEAR(double(seen[1]) / double(seen[2]), 5.0, 0.5);
}

TEST(NegativeSampler, GivesNoNegativesWhenNoOtherLabelWasSeen) {
  EXPECT_TRUE(NegativeSampler({5, 0}).draw(0, 3, 1, 0).empty());
}

RawBatch batch() { return test_util::four_bags({0, 6, 3, 12}); }
using test_util::input_of;

// The batch's summed loss through autograd, the way training computes it.
torch::Tensor autograd_loss(FastText& m, const RawBatch& b, Loss loss) {
  const auto labels = torch::tensor(b.labels, torch::kInt64);
  if (loss == Loss::ova) {
    const auto targets = torch::one_hot(labels, 13).to(torch::kFloat32);
    return torch::binary_cross_entropy_with_logits(m->forward(input_of(b)), targets, {}, {},
                                                   at::Reduction::Sum);
  }
  return m->example_losses(input_of(b), labels).sum();
}

TEST(FastTextLossesSgd, OneFusedStepAtLrOneMovesEachWeightByAutogradsGradient) {
  for (const Loss loss : {Loss::hs, Loss::ns, Loss::ova}) {
    for (const bool sum : {true, false}) {
      FastText m = model_with(loss);
      const RawBatch b = batch();
      torch::manual_seed(11);  // the same negatives on both paths
      torch::Tensor l = autograd_loss(m, b, loss) * (sum ? 1.0 : 0.25);
      l.backward();
      std::vector<torch::Tensor> before;
      for (const auto& p : m->parameters()) before.push_back(p.detach().clone());
      auto fused = bag_sgd(bag_tables_of(*m));
      torch::manual_seed(11);
      const double fused_loss = fused->gradient(b, sum ? 1.0 : 0.25);
      fused->apply(b, 1.0);
      EXPECT_NEAR(fused_loss, l.item<double>() * (sum ? 1.0 : 4.0), 1e-4) << to_string(loss);
      const auto params = m->parameters();
      for (size_t i = 0; i < params.size(); ++i) {
        const auto moved = before[i] - params[i].detach();
        const auto grad = params[i].grad().to_dense();
        EXPECT_TRUE(torch::allclose(moved, grad, 0.0, 1e-6))
            << to_string(loss) << " parameter " << i << (sum ? " (sum)" : " (mean)")
            << ": max difference " << (moved - grad).abs().max().item<double>();
        EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << to_string(loss) << " parameter " << i;
      }
    }
  }
}

TEST(FastTextLossesSgd, HsTouchesOnlyTheRowsOnTheLabelsPaths) {
  FastText m = model_with(Loss::hs);
  const auto before = m->named_parameters()["output.weight"].detach().clone();
  auto fused = bag_sgd(bag_tables_of(*m));
  RawBatch one;
  one.add({1, 2}, 6);  // the most frequent label: a short path
  fused->gradient(one, 1.0);
  fused->apply(one, 0.5);
  const auto moved =
      (m->named_parameters()["output.weight"].detach() - before).abs().sum(1).gt(0).sum();
  EXPECT_EQ(moved.item<int64_t>(), static_cast<int64_t>(m->tree().paths[6].size()));
}

TEST(FastTextHs, ALoadedCheckpointsCountsRebuildTheTree) {
  FastText trained = model_with(Loss::hs);
  ModelConfig c;
  c.dim = 8;
  ModelShape empty = shape_with(Loss::hs, kCounts);
  empty.label_counts.clear();  // as load_run builds it: no counts yet
  FastText loaded(c, empty);
  torch::NoGradGuard no_grad;
  for (auto& b : loaded->named_buffers()) b.value().copy_(trained->named_buffers()[b.key()]);
  for (auto& p : loaded->named_parameters()) p.value().copy_(trained->named_parameters()[p.key()]);
  EXPECT_TRUE(
      torch::allclose(loaded->forward(test_util::bags()), trained->forward(test_util::bags())));
}

// The torch-free losses (models/base/fasttext_loss.h: sift-lite's evaluation, `sift
// predict` without LibTorch) against the LibTorch model's forward on the same weights.
TEST(FastTextLoss, EveryLossScoresAndPredictsAsTheLibTorchModelDoes) {
  for (const Loss loss : {Loss::softmax, Loss::ns, Loss::ova, Loss::hs}) {
    SCOPED_TRACE(to_string(loss));
    FastText m = model_with(loss);
    torch::NoGradGuard no_grad;
    const ModelInput in = test_util::bags();
    const torch::Tensor h = m->hidden(in).contiguous();
    const torch::Tensor z = m->forward(in);  // hs: each label's log-probability
    auto params = m->named_parameters();
    const torch::Tensor w = params["output.weight"].contiguous();
    const torch::Tensor b = params["output.bias"].contiguous();
    const OutputLayer out{w.data_ptr<float>(), b.data_ptr<float>(), w.size(0), w.size(1)};
    const LabelTree empty;
    const auto plain =
        fasttext_loss({loss, 13, loss == Loss::hs ? &m->tree() : &empty, nullptr, 0});
    const bool sigmoid = loss == Loss::ns || loss == Loss::ova;
    const torch::Tensor p = sigmoid ? torch::sigmoid(z) : torch::softmax(z, 1);
    for (int64_t i = 0; i < 3; ++i) {
      const float* hi = h.data_ptr<float>() + i * h.size(1);
      const LabelProbabilities top = plain->top_k(out, hi, 13, -1.0);
      ASSERT_EQ(top.size(), 13u);
      const torch::Tensor order = std::get<1>(p[i].topk(13));
      for (size_t j = 0; j < top.size(); ++j) {
        EXPECT_EQ(top[j].first, order[static_cast<int64_t>(j)].item<int64_t>()) << "rank " << j;
        EXPECT_NEAR(top[j].second, p[i][top[j].first].item<float>(), 1e-6);
      }
      for (int64_t label = 0; label < 13; ++label) {
        const Scored s = plain->score(out, hi, label);
        const torch::Tensor zi = z[i].to(torch::kDouble);
        const double want = loss == Loss::hs ? -zi[label].item<double>()
                            : loss == Loss::ova
                                ? (torch::softplus(zi).sum() - zi[label]).item<double>()
                                : (torch::logsumexp(zi, 0) - zi[label]).item<double>();
        EXPECT_NEAR(s.loss, want, 1e-5) << "label " << label;
        EXPECT_EQ(s.label, top[0].first);
        EXPECT_NEAR(
            s.probability,
            loss == Loss::ns ? torch::softmax(zi, 0).max().item<double>() : double(top[0].second),
            1e-6);
      }
    }
  }
}

}  // namespace fasttext_losses_test
}  // namespace sift
