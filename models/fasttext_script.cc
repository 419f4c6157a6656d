// fastText as TorchScript: FastTextImpl::forward over the ids and offsets of a bag batch.
#include <fmt/format.h>

#include "models/fasttext.h"
#include "models/kept_rows.h"
#include "models/script_writer.h"

namespace sift {

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
    return {}

def predict_proba(self, ids: Tensor, offsets: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, offsets), 1)
)",
                     remap, bags, w.output(w.linear("bags", "output")));
}

}  // namespace sift
