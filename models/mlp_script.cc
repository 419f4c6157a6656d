// The MLP as TorchScript: MlpImpl::forward with fastText's bag input (models/
// fasttext_script.cc) and one linear + ReLU line per hidden layer. Dropout is off at
// inference.
#include <fmt/format.h>

#include "models/mlp.h"
#include "models/script_writer.h"

namespace sift {

std::string mlp_script(const ModelConfig& config, ScriptWriter& w) {
  const std::string bags = w.bag_mean("embedding.weight");
  std::string body = fmt::format("    x = {}\n", bags);
  for (int64_t i = 0; i < config.layers; ++i) {
    body += fmt::format("    x = torch.relu({})\n", w.linear("x", fmt::format("hidden_{}", i)));
  }
  return fmt::format(R"(
def forward(self, ids: Tensor, offsets: Tensor) -> Tensor:
{}    return {}

def predict_proba(self, ids: Tensor, offsets: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, offsets), 1)
)",
                     body, w.output(w.linear("x", "output")));
}

}  // namespace sift
