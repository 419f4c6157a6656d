// fastText as TorchScript: FastTextImpl::forward over the ids and offsets of a bag batch.
#include <fmt/format.h>

#include "models/fasttext.h"
#include "models/kept_rows.h"
#include "models/script_writer.h"

namespace sift {

namespace {

// The return of forward: the output layer's scores; for train.loss hs each label's
// log-probability, the sum of log-sigmoids of the signed node scores along its path
// (log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), plain ops that Python loads too).
std::string scores(ScriptWriter& w) {
  const std::string out = w.output(w.linear("bags", "output"));
  if (w.loss() != Loss::hs) return fmt::format("    return {}\n", out);
  auto [rows, signs] = path_matrices(build_label_tree(counts_of(w.tensor("label_counts"))));
  return fmt::format(
      "    scores = {}\n"
      "    signs = {}\n"
      "    x = torch.index_select(scores, 1, {}.reshape(-1)).reshape(-1, {}, {}) * signs\n"
      "    return ((torch.clamp(x, max=0.0) - torch.log1p(torch.exp(-torch.abs(x)))) * "
      "torch.abs(signs)).sum(2)\n",
      out, w.constant("hs.signs", signs), w.constant("hs.rows", rows), rows.size(0), rows.size(1));
}

}  // namespace

std::string fasttext_script(const ModelConfig&, ScriptWriter& w) {
  // Rows pruned by train.prune: the table holds the kept rows and one zero row last; an
  // id's row is the kept rows before its block plus its rank in the block, and a pruned
  // id reads the zero row (it still counts in its bag's mean, as the masked row did).
  std::string remap;
  if (w.has("embedding.kept_rank")) {
    remap = fmt::format(
        "    rank = torch.index_select({0}, 0, ids).long()\n"
        "    row = torch.index_select({1}, 0, torch.div(ids, {2}, rounding_mode=\"floor\")) + "
        "rank\n"
        "    ids = torch.where(rank == {3}, torch.full_like(row, {4}), row)\n",
        w.weight("embedding.kept_rank"), w.weight("embedding.kept_before"), kKeptBlock,
        static_cast<int>(kPrunedRank), w.tensor("embedding.weight").size(0) - 1);
  }
  const std::string bags = w.bag_mean("embedding.weight");
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
