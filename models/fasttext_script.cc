// fastText as TorchScript: FastTextImpl::forward over the ids and offsets of a bag batch.
#include <fmt/format.h>

#include "models/fasttext.h"
#include "models/script_writer.h"

namespace sift {

std::string fasttext_script(const ModelConfig&, ScriptWriter& w) {
  const std::string bags = w.bag_mean("embedding.weight");
  return fmt::format(R"(
def forward(self, ids: Tensor, offsets: Tensor) -> Tensor:
    bags = {}
    return {}

def predict_proba(self, ids: Tensor, offsets: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, offsets), 1)
)",
                     bags, w.output(w.linear("bags", "output")));
}

}  // namespace sift
