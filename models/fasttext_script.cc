// fastText as TorchScript: FastTextImpl::forward over the ids and offsets of a bag batch.
#include <fmt/format.h>

#include "models/script_writer.h"

namespace sift {

std::string fasttext_script(const ModelConfig&, ScriptWriter& w) {
  // The mean of each bag's rows (mode 1), as torch::nn::EmbeddingBag computes it. The
  // int8 table is dequantized for the looked-up rows only, which are then averaged by the
  // same op.
  const std::string bags =
      w.int8() ? fmt::format("torch.embedding_bag({}, torch.arange(ids.size(0), "
                             "device=ids.device), offsets, False, 1, False, None, False)[0]",
                             w.rows("embedding.weight", "ids"))
               : fmt::format("torch.embedding_bag({}, ids, offsets, False, 1, False, None, "
                             "False)[0]",
                             w.weight("embedding.weight"));
  return fmt::format(R"(
def forward(self, ids: Tensor, offsets: Tensor) -> Tensor:
    bags = {}
    return torch.linear(bags, {}, {})

def predict_proba(self, ids: Tensor, offsets: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, offsets), 1)
)",
                     bags, w.weight("output.weight"), w.weight("output.bias"));
}

}  // namespace sift
