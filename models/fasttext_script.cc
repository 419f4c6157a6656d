// fastText as TorchScript: FastTextImpl::forward over the ids and offsets of a bag batch.
#include <fmt/format.h>

#include "models/fasttext.h"
#include "models/script_writer.h"

namespace sift {

std::string fasttext_script(const ModelConfig&, ScriptWriter& w) {
  // Rows pruned by train.prune: the table holds the kept rows and one zero row last, and
  // kept_ids their sorted ids; every other id reads the zero row (it still counts in its
  // bag's mean, as the masked row did).
  std::string remap;
  if (w.has("embedding.kept_ids")) {
    remap = fmt::format(
        "    kept = {}\n"
        "    ids32 = ids.int()\n"
        "    pos = torch.searchsorted(kept, ids32).clamp(0, kept.size(0) - 1)\n"
        "    ids = torch.where(kept[pos] == ids32, pos, torch.full_like(pos, kept.size(0)))\n",
        w.weight("embedding.kept_ids"));
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
