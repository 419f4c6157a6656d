// fastText as TorchScript: FastTextImpl::forward over the ids and offsets of a bag batch.
#include <fmt/format.h>

#include "models/base/fasttext_forward.h"
#include "models/fasttext.h"
#include "models/kept_rows.h"
#include "models/script_writer.h"

namespace sift {
namespace {

// Source that sets `row` (each id's row in the reduced table) and `found` (whether the
// id's row was kept), from the id map of kept_rows.h.
std::string kept_row_of_ids(ScriptWriter& w) {
  if (w.has("embedding.kept_ids")) {
    const int64_t kept = w.tensor("embedding.kept_ids").size(0);
    return fmt::format(
        "    row = torch.clamp(torch.searchsorted({0}, ids.int()), max={1})\n"
        "    found = torch.index_select({0}, 0, row) == ids\n",
        w.weight("embedding.kept_ids"), kept - 1);
  }
  return fmt::format(
      "    rank = torch.index_select({0}, 0, ids).long()\n"
      "    row = torch.index_select({1}, 0, torch.div(ids, {2}, rounding_mode=\"floor\")) + "
      "rank\n"
      "    found = rank != {3}\n",
      w.weight("embedding.kept_rank"), w.weight("embedding.kept_before"), kKeptBlock,
      static_cast<int>(kPrunedRank));
}

// Rows pruned by train.prune: the table holds the kept rows and one zero row last, which
// a pruned id reads (it still counts in its bag's mean, as the masked row did). Rows cut
// by --cutoff: their ids leave their bags, as fastText's pruned dictionary drops them,
// and each bag's offset moves back by the ids dropped before it.
std::string remap_ids(ScriptWriter& w) {
  if (!w.has("embedding.kept_rank") && !w.has("embedding.kept_ids")) return "";
  std::string source = kept_row_of_ids(w);
  if (w.has(std::string("embedding") + kUnkeptDroppedSuffix)) {
    return source +
           "    kept = torch.cumsum(found.long(), 0)\n"
           "    offsets = torch.index_select(torch.cat([kept.new_zeros([1]), kept]), 0, "
           "offsets)\n"
           "    ids = torch.masked_select(row, found)\n";
  }
  return source + fmt::format("    ids = torch.where(found, row, torch.full_like(row, {}))\n",
                              w.tensor(kFastTextTable).size(0) - 1);
}

}  // namespace

namespace {

// The return of forward: the output layer's scores; for train.loss hs each label's
// log-probability, the log-sigmoids of the signed node scores summed down the tree a level
// at a time as FastTextImpl::tree_log_probabilities does (log sigmoid(x) = min(x, 0) -
// log1p(exp(-|x|)), plain ops that Python loads too), node-major as there. The levels'
// node, parent and step indices are three buffers, one level after another.
std::string scores(ScriptWriter& w) {
  const std::string out = w.output(w.linear("bags", "output"));
  if (w.loss() != Loss::hs) return fmt::format("    return {}\n", out);
  const LabelTree tree = build_label_tree(counts_of(w.tensor(kFastTextLabelCounts)));
  // The counts too: `sift predict` builds the tree from them and searches it, as it does a
  // run folder's (fasttext_predictor.h).
  w.constant(kFastTextLabelCounts, w.tensor(kFastTextLabelCounts));
  std::vector<torch::Tensor> nodes, parents, steps;
  std::string levels;
  int64_t begin = 0;
  for (const auto& level : tree_levels(tree)) {
    nodes.push_back(level.nodes);
    parents.push_back(level.parents);
    steps.push_back(level.steps);
    const int64_t end = begin + level.nodes.size(0);
    levels += fmt::format(
        "    p.index_copy_(0, nodes[{0}:{1}], torch.index_select(p, 0, parents[{0}:{1}]) + "
        "torch.index_select(steps, 0, moves[{0}:{1}]))\n",
        begin, end);
    begin = end;
  }
  return fmt::format(
      "    s = {}.float().t().contiguous()\n"
      "    soft = torch.log1p(torch.exp(-torch.abs(s)))\n"
      "    steps = torch.cat([torch.clamp(-s, max=0.0) - soft, torch.clamp(s, max=0.0) - soft], "
      "0)\n"
      "    nodes = {}\n"
      "    parents = {}\n"
      "    moves = {}\n"
      "    p = torch.zeros([{}, s.size(1)], dtype=s.dtype, device=s.device)\n"
      "{}"
      "    return p[:{}].t().contiguous()\n",
      out, w.constant("hs.nodes", torch::cat(nodes)), w.constant("hs.parents", torch::cat(parents)),
      w.constant("hs.steps", torch::cat(steps)), 2 * tree.labels - 1, levels, tree.labels);
}

}  // namespace

std::string fasttext_script(const ModelConfig&, ScriptWriter& w) {
  if (const PqRequest* pq = w.pq_request()) {
    w.product_quantize(kFastTextTable, pq->table);
    if (pq->output) w.product_quantize(kFastTextOutput, pq->table);
  }
  const std::string remap = remap_ids(w);
  const std::string bags = w.bag_mean(kFastTextTable);
  return fmt::format(R"(
def forward(self, ids: Tensor, offsets: Tensor) -> Tensor:
{}    bags = {}
{}
def predict_proba(self, ids: Tensor, offsets: Tensor) -> Tensor:
    return {}
)",
                     remap, bags, scores(w), w.probabilities("self.forward(ids, offsets)"));
}

}  // namespace sift
