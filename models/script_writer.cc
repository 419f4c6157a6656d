#include "models/script_writer.h"

#include <fmt/format.h>

#include "core/error.h"

namespace sift {
namespace {

// "layers.0.ff_in.weight" -> "layers_0_ff_in_weight": attribute names cannot hold dots.
std::string attribute_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '.') c = '_';
  }
  return out;
}

// Symmetric int8 with one scale per output row (dim 0): a row's largest weight maps to
// 127. Rows of zeros (the padding embedding) keep scale 1.
std::pair<torch::Tensor, torch::Tensor> quantize_rows(const torch::Tensor& w) {
  auto flat = w.reshape({w.size(0), -1});
  auto scale = flat.abs().amax(1) / 127.0;
  scale = torch::where(scale > 0, scale, torch::ones_like(scale));
  auto q = torch::round(flat / scale.unsqueeze(1)).clamp(-127, 127).to(torch::kInt8);
  std::vector<int64_t> scale_shape(static_cast<size_t>(w.dim()), 1);
  scale_shape[0] = w.size(0);
  return {q.view(w.sizes()).contiguous(), scale.view(scale_shape).contiguous()};
}

}  // namespace

std::string script_number(double value) { return fmt::format("{:.17g}", value); }

ScriptWriter::ScriptWriter(std::map<std::string, torch::Tensor> tensors, bool int8)
    : tensors_(std::move(tensors)), int8_(int8), module_("sift.Classifier") {}

const torch::Tensor& ScriptWriter::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw Error(fmt::format("export: the model has no tensor '{}'", name));
  }
  return it->second;
}

std::string ScriptWriter::attribute(const std::string& name) {
  const torch::Tensor& t = tensor(name);
  const std::string attr = attribute_name(name);
  const bool quantized = int8_ && t.dim() >= 2;
  const std::string probe = quantized ? attr + "_q" : attr;
  if (module_.hasattr(probe)) return attr;
  if (quantized) {
    auto [q, scale] = quantize_rows(t.detach().to(torch::kCPU, torch::kFloat));
    module_.register_buffer(attr + "_q", q);
    module_.register_buffer(attr + "_s", scale);
  } else {
    module_.register_parameter(attr, t.detach().to(torch::kCPU).clone(), /*is_buffer=*/false);
  }
  return attr;
}

std::string ScriptWriter::weight(const std::string& name) {
  const std::string attr = attribute(name);
  if (int8_ && tensor(name).dim() >= 2) {
    return fmt::format("(self.{0}_q.float() * self.{0}_s)", attr);
  }
  return "self." + attr;
}

std::string ScriptWriter::rows(const std::string& name, const std::string& index) {
  const std::string attr = attribute(name);
  if (int8_) return fmt::format("(self.{0}_q[{1}].float() * self.{0}_s[{1}])", attr, index);
  return fmt::format("torch.embedding(self.{}, {})", attr, index);
}

std::string ScriptWriter::bag_mean(const std::string& name) {
  // mode 1 is the mean. The int8 table is dequantized for the looked-up rows only, which
  // are then averaged by the same op as bags of one row each.
  if (int8_) {
    return fmt::format("torch.embedding_bag({}, torch.arange(ids.size(0), device=ids.device), "
                       "offsets, False, 1, False, None, False)[0]",
                       rows(name, "ids"));
  }
  return fmt::format("torch.embedding_bag({}, ids, offsets, False, 1, False, None, False)[0]",
                     weight(name));
}

torch::jit::Module ScriptWriter::finish(const std::string& source) {
  module_.define(source);
  module_.eval();
  return module_;
}

}  // namespace sift
