// TextCNN as TorchScript: TextCnnImpl::forward (wide convolutions, max over the windows
// that overlap the text) unrolled over the filter widths. Dropout is off at inference.
#include <fmt/format.h>

#include "models/script_writer.h"
#include "models/textcnn.h"

namespace sift {

std::string textcnn_script(const ModelConfig& config, ScriptWriter& w) {
  std::string body;
  std::vector<std::string> pooled;
  for (size_t i = 0; i < config.widths.size(); ++i) {
    const int64_t width = config.widths[i];
    const std::string conv = fmt::format("convs.{}.", i);
    body += fmt::format(
        "    h = torch.relu(torch.conv1d(torch.constant_pad_nd(x, [{0}, {0}], 0.0), {1}, {2}))\n"
        "    keep = torch.arange(length + {0}, device=ids.device).unsqueeze(0) < lens + {0}\n"
        "    h = h.masked_fill(torch.logical_not(keep.unsqueeze(1)), 0.0)\n"
        "    p{3} = torch.max(h, 2)[0]\n",
        width - 1, w.weight(conv + "weight"), w.weight(conv + "bias"), i);
    pooled.push_back(fmt::format("p{}", i));
  }
  return fmt::format(R"(
def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
    length = ids.size(1)
    lengths = lengths.to(ids.device)
    valid = torch.arange(length, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)
    x = {}
    x = x * valid.unsqueeze(2).to(x.dtype)
    x = x.transpose(1, 2)
    lens = lengths.unsqueeze(1)
{}    features = torch.cat([{}], 1)
    return {}

def predict_proba(self, ids: Tensor, lengths: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, lengths), 1)
)",
                     w.rows("embedding.weight", "ids"), body, fmt::join(pooled, ", "),
                     w.output(w.linear("features", "output")));
}

}  // namespace sift
