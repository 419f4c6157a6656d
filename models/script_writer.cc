#include "models/script_writer.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>
#include <torch/csrc/jit/frontend/resolver.h>

#include <algorithm>

#include "core/crc32.h"
#include "core/error.h"

namespace sift {
namespace {

// "layers.0.ff_in.weight" -> "layers_0_ff_in_weight": attribute names cannot hold dots.
std::string attribute_name(const std::string& name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

// One scale per output row (dim 0) of symmetric int8: a row's largest weight maps to 127.
// Rows of zeros (the padding embedding) keep scale 1.
torch::Tensor row_scales(const torch::Tensor& w) {
  auto scale = w.reshape({w.size(0), -1}).abs().amax(1) / 127.0;
  return torch::where(scale > 0, scale, torch::ones_like(scale));
}

std::pair<torch::Tensor, torch::Tensor> quantize_rows(const torch::Tensor& w) {
  auto flat = w.reshape({w.size(0), -1});
  auto scale = row_scales(w);
  auto q = torch::round(flat / scale.unsqueeze(1)).clamp(-127, 127).to(torch::kInt8);
  std::vector<int64_t> scale_shape(static_cast<size_t>(w.dim()), 1);
  scale_shape[0] = w.size(0);
  return {q.view(w.sizes()).contiguous(), scale.view(scale_shape).contiguous()};
}

// Calls a registered operator (quantized::linear_prepack, ...) by name: its C++ headers
// are not all installed, and the dispatcher needs none.
c10::IValue call_op(const char* name, torch::jit::Stack stack) {
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
  op.callBoxed(&stack);
  return stack.at(0);
}

bool is_packed(const c10::IValue& v) {
  if (v.isObject()) return !v.toObject()->type()->is_module();
  if (v.isList()) {
    auto list = v.toListRef();
    return !list.empty() && std::all_of(list.begin(), list.end(), [](const c10::IValue& e) {
      return e.isObject() && !e.toObject()->type()->is_module();
    });
  }
  return false;
}

uint32_t tensor_crc(uint32_t crc, const torch::Tensor& value) {
  torch::Tensor t = value.detach().to(torch::kCPU);
  if (t.is_quantized()) {
    const torch::Tensor scales = t.qscheme() == at::kPerChannelAffine
                                     ? t.q_per_channel_scales().to(torch::kDouble).contiguous()
                                     : torch::tensor({t.q_scale()}, torch::kDouble);
    t = t.int_repr().contiguous();
    crc = crc32_update(crc, t.data_ptr(), t.nbytes());
    return crc32_update(crc, scales.data_ptr(), scales.nbytes());
  }
  t = t.contiguous();
  return crc32_update(crc, t.data_ptr(), t.nbytes());
}

// `torch` as the default resolver has it, plus `quantized` for the quantized:: operators
// (quantized.linear_dynamic): the default resolver knows only `torch`, and
// `torch.ops.quantized...` does not resolve in C++. Saved files spell them
// ops.quantized..., which Python and C++ load.
struct QuantizedOpsResolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name,
                                                         torch::jit::GraphFunction&,
                                                         const torch::jit::SourceRange&) override {
    if (name == "torch") return std::make_shared<torch::jit::BuiltinModule>("aten");
    if (name == "quantized") return std::make_shared<torch::jit::BuiltinModule>("quantized");
    return nullptr;
  }
  c10::TypePtr resolveType(const std::string&, const torch::jit::SourceRange&) override {
    return nullptr;
  }
};

}  // namespace

std::string script_number(double value) { return fmt::format("{:.17g}", value); }

std::vector<std::string> packed_attributes(const torch::jit::Module& module) {
  std::vector<std::string> names;
  const auto type = module.type();
  for (size_t i = 0; i < type->numAttributes(); ++i) {
    const std::string name = type->getAttributeName(i);
    if (is_packed(module.attr(name))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

uint32_t packed_crc(uint32_t crc, const c10::IValue& value) {
  if (value.isTensor()) return tensor_crc(crc, value.toTensor());
  if (value.isTuple()) {
    for (const auto& e : value.toTupleRef().elements()) crc = packed_crc(crc, e);
  } else if (value.isList()) {
    for (const auto& e : value.toListRef()) crc = packed_crc(crc, e);
  } else if (value.isObject()) {
    auto* getstate = value.toObject()->type()->findMethod("__getstate__");
    if (!getstate) return crc;
    torch::jit::Stack stack{value};
    getstate->run(stack);
    crc = packed_crc(crc, stack.back());
  }
  return crc;  // numbers and strings of a state are not weights
}

ScriptWriter::ScriptWriter(std::map<std::string, torch::Tensor> tensors, WeightFormat format,
                           int64_t int8_min_macs)
    : tensors_(std::move(tensors)),
      format_(format),
      module_("sift.Classifier"),
      int8_min_macs_(int8_min_macs) {}

const torch::Tensor& ScriptWriter::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw Error(fmt::format("export: the model has no tensor '{}'", name));
  }
  return it->second;
}

void ScriptWriter::product_quantize(const std::string& name, const PqOptions& options) {
  const std::string attr = attribute_name(name);
  if (pq_.count(name)) return;
  if (module_.hasattr(attr)) {
    throw Error(fmt::format("export: '{}' is already stored unquantized", name));
  }
  const bool known = pq_request_ && pq_request_->given.count(name) != 0;
  const PqTable pq = known ? pq_request_->given.at(name) : pq_encode(tensor(name), options);
  if (pq.codes.size(0) != tensor(name).size(0)) {
    throw Error(fmt::format("export: the codes of '{}' have {} rows, the table {}", name,
                            pq.codes.size(0), tensor(name).size(0)));
  }
  const int64_t subs = pq.codes.size(1);
  module_.register_buffer(attr + "_codes", pq.codes);
  module_.register_buffer(attr + "_centroids", pq.centroids);
  // Where position m's centroids start: codes + this index the centroid table.
  module_.register_buffer(attr + "_sub", torch::arange(subs) * kPqCentroids);
  if (pq.norm_codes.defined()) {
    module_.register_buffer(attr + "_norm_codes", pq.norm_codes);
    module_.register_buffer(attr + "_norm_centroids", pq.norm_centroids);
  }
  pq_[name] = options;
}

std::string ScriptWriter::pq_rows(const std::string& attr, const std::string& index) const {
  // Two gathers: the codes of the rows, then the centroids they name ([..., subs, dsub],
  // flattened to [..., dim]); with qnorm, times the rows' quantized norms.
  std::string rows = fmt::format(
      "torch.embedding(self.{0}_centroids, torch.embedding(self.{0}_codes, {1}).long() + "
      "self.{0}_sub).flatten(-2)",
      attr, index);
  if (module_.hasattr(attr + "_norm_codes")) {
    rows = fmt::format(
        "({} * torch.embedding(self.{}_norm_centroids, torch.embedding(self.{}_norm_codes, "
        "{}).long()).flatten(-2))",
        rows, attr, attr, index);
  }
  return rows;
}

std::string ScriptWriter::attribute(const std::string& name) {
  const torch::Tensor& t = tensor(name);
  const std::string attr = attribute_name(name);
  if (pq_.count(name)) return attr;  // registered by product_quantize
  const bool quantized = int8() && t.dim() >= 2;
  const std::string probe = quantized ? attr + "_q" : attr;
  if (module_.hasattr(probe)) return attr;
  if (quantized) {
    auto [q, scale] = quantize_rows(t.detach().to(torch::kCPU, torch::kFloat));
    module_.register_buffer(attr + "_q", q);
    module_.register_buffer(attr + "_s", scale);
  } else {
    torch::Tensor copy = t.detach().to(torch::kCPU).clone();
    if (format_ == WeightFormat::bf16 && copy.is_floating_point()) copy = copy.to(torch::kBFloat16);
    module_.register_parameter(attr, copy, /*is_buffer=*/false);
  }
  return attr;
}

std::string ScriptWriter::constant(const std::string& name, const torch::Tensor& value) {
  const std::string attr = attribute_name(name);
  if (!module_.hasattr(attr)) module_.register_buffer(attr, value.detach().to(torch::kCPU).clone());
  return "self." + attr;
}

std::string ScriptWriter::probabilities(const std::string& scores) const {
  if (loss_ == Loss::hs) return fmt::format("torch.exp({})", scores);
  if (multi_label_ || loss_ == Loss::ns || loss_ == Loss::ova) {
    return fmt::format("torch.sigmoid({})", scores);
  }
  return fmt::format("torch.softmax({}, 1)", scores);
}

std::string ScriptWriter::weight(const std::string& name) {
  const std::string attr = attribute(name);
  if (pq_.count(name)) {
    return pq_rows(attr, fmt::format("torch.arange({}, device=self.{}_codes.device)",
                                     tensor(name).size(0), attr));
  }
  if (int8() && tensor(name).dim() >= 2) {
    return fmt::format("(self.{0}_q.float() * self.{0}_s)", attr);
  }
  return "self." + attr;
}

torch::Tensor ScriptWriter::fp32(const std::string& name) const {
  return tensor(name).detach().to(torch::kCPU, torch::kFloat).contiguous();
}

c10::IValue ScriptWriter::pack_linear(const std::string& weight, const std::string& bias) const {
  const torch::Tensor w = fp32(weight);
  const torch::Tensor scale = row_scales(w).to(torch::kDouble);
  const torch::Tensor q = at::quantize_per_channel(
      w.contiguous(), scale, torch::zeros({w.size(0)}, torch::kLong), 0, torch::kQInt8);
  // A zero bias when the layer has none: QNNPACK packs a zero bias of its own, so the
  // object's state (and the weights checksum) would differ between engines otherwise.
  const torch::Tensor b = bias.empty() ? torch::zeros({w.size(0)}) : fp32(bias);
  return call_op("quantized::linear_prepack", {q, b});
}

namespace {

// The body of an int8 Linear method: quantized.linear_dynamic on `x` [..., in] with the
// packed weights `attr`. oneDNN (LibTorch 1.13) builds two reorder primitives for every
// input scale it has not seen (ONEDNN_VERBOSE=2: create:cache_miss), and dynamic
// quantization gives every input its own scale. So inputs of a few rows (batch 1) have
// their range rounded up to one of four steps an octave and given to the kernel by one
// extra row [top, -top, 0...], and the primitives come from the cache: on 40 x 512 x 2048
// multiply-adds a call took 240 us against 439 (fp32 704), and the wide Transformer's
// batch-1 p50 went from 4.5-7.1 to 3.5-4.8 ms (four alternating pairs). On batches of 64
// the copy costs what the cache saves (no change beyond the noise), so larger inputs go to
// the kernel as they are. The rounding costs at most a fifth of the input's resolution
// (relative error of the output 0.015 against 0.013). The range stays symmetric, [-top, top], so
// its zero point follows from its scale: with the two ends rounded apart, LibTorch 1.13's onednn
// kernel returned wrong outputs for a scale it had seen with another zero point (324 and 351 of
// 4,000 mixed calls off by more than 5%, none with the symmetric range;
// ExportInt8.ManyCallsOfVariedShapeStayCloseToFp32 fails on that variant).
std::string int8_call(const std::string& x, const std::string& attr, int64_t in, int64_t out) {
  const std::string plain = fmt::format("quantized.linear_dynamic({}, self.{})", x, attr);
  if (in < 2) return fmt::format("        return {}\n", plain);
  return fmt::format(
      "        if {0}.numel() > {4}:\n"
      "            return {5}\n"
      "        rows = {0}.reshape(-1, {2})\n"
      "        low, high = torch.aminmax(rows)\n"
      "        bound = torch.maximum(high, -low).clamp_min(1e-30)\n"
      "        top = torch.exp2(torch.ceil(torch.log2(bound) * 4.0) * 0.25)\n"
      "        anchor = rows.new_zeros([1, {2}])\n"
      "        anchor[0, 0] = top\n"
      "        anchor[0, 1] = -top\n"
      "        y = quantized.linear_dynamic(torch.cat([rows, anchor]), self.{1})\n"
      "        return y.narrow(0, 0, rows.size(0)).view({0}.shape[:-1] + [{3}])\n",
      x, attr, in, out, kInt8AnchorMaxValues, plain);
}

}  // namespace

std::string ScriptWriter::linear(const std::string& x, const std::string& prefix, bool bias) {
  const std::string dotted = prefix + ".";
  if (!int8()) {
    return fmt::format("torch.linear({}, {}, {})", x, weight(dotted + "weight"),
                       bias ? weight(dotted + "bias") : "None");
  }
  // Packed for the engine of the process that writes; the packed object's state is the
  // plain int8 weights, scales and bias, re-packed for the loading process's engine.
  const std::string attr = attribute_name(dotted + "weight") + "_packed";
  const std::string method = "linear_" + attribute_name(prefix);
  if (!module_.hasattr(attr)) {
    const c10::IValue packed = pack_linear(dotted + "weight", bias ? dotted + "bias" : "");
    module_.register_attribute(attr, packed.type(), packed);
    // Small products (batch 1, fastText's output layer) run in fp32 on the weights
    // unpacked from the same object: at 40 x 128 x 384 multiply-adds oneDNN's int8 kernel
    // took 68-85 us against 36-39 us in fp32 (LibTorch 1.13, one thread), so only products of at
    // least int8_min_macs_ multiply-adds use it. Unpacking and dequantizing at each call cost
    // 169 us of a batch-1 forward of the SST-2 Transformer (9 layers) and 1,057 us of one at
    // BERT-Mini's shape (17): prepare_weights() keeps them, once, in <attr>_fp32 (left None
    // in the file, so that it stays int8-sized; Sift's loaders call it).
    const int64_t in = tensor(dotted + "weight").size(1), out = tensor(dotted + "weight").size(0);
    module_.register_attribute(attr + "_fp32", c10::OptionalType::create(c10::TensorType::get()),
                               c10::IValue());
    prepare_ += fmt::format(
        "    self.{0}_fp32 = quantized.linear_unpack(self.{0})[0].dequantize()\n", attr);
    methods_ += fmt::format(
        "\ndef {0}(self, x: Tensor) -> Tensor:\n"
        "    if x.numel() * {1} >= {2}:\n"
        "{3}"
        "    w = self.{4}_fp32\n"
        "    if w is not None:\n"
        "        return torch.linear(x, w, {5})\n"
        "    return torch.linear(x, quantized.linear_unpack(self.{4})[0].dequantize(), {5})\n",
        method, out, int8_min_macs_, int8_call("x", attr, in, out), attr,
        bias ? weight(dotted + "bias") : "None");
  }
  return fmt::format("self.{}({})", method, x);
}

std::string ScriptWriter::layer_norm(const std::string& x, const std::string& prefix, int64_t dim,
                                     double eps) {
  const std::string w = weight(prefix + ".weight"), b = weight(prefix + ".bias");
  if (format_ == WeightFormat::bf16) {
    return fmt::format(
        "torch.layer_norm({0}.float(), [{1}], {2}.float(), {3}.float(), {4}).to({0}.dtype)", x, dim,
        w, b, eps);
  }
  return fmt::format("torch.layer_norm({}, [{}], {}, {}, {})", x, dim, w, b, eps);
}

std::string ScriptWriter::output(const std::string& logits) const {
  return format_ == WeightFormat::bf16 ? "(" + logits + ").float()" : logits;
}

std::string ScriptWriter::rows(const std::string& name, const std::string& index) {
  const std::string attr = attribute(name);
  if (pq_.count(name)) return pq_rows(attr, index);
  // torch.embedding (index_select) rather than table[index]: on a 2M x 10 int8 table and
  // 3,200 ids, 264 us against 543 us for advanced indexing (fp32 embedding_bag: 52 us).
  if (int8()) {
    return fmt::format(
        "(torch.embedding(self.{0}_q, {1}).float() * torch.embedding(self.{0}_s, {1}))", attr,
        index);
  }
  return fmt::format("torch.embedding(self.{}, {})", attr, index);
}

std::string ScriptWriter::bag_mean(const std::string& name) {
  // mode 1 is the mean. The int8 or product-quantized table is decoded for the looked-up
  // rows only, which are then averaged by the same op as bags of one row each.
  if (int8() || pq_.count(name)) {
    return fmt::format(
        "torch.embedding_bag({}, torch.arange(ids.size(0), device=ids.device), "
        "offsets, False, 1, False, None, False)[0]",
        rows(name, "ids"));
  }
  // embedding_bag has no bf16 kernel on the CPU (LibTorch 1.13): the looked-up rows are
  // averaged in fp32, then the computation goes on in bf16.
  if (format_ == WeightFormat::bf16) {
    return fmt::format(
        "torch.embedding_bag({}.float(), torch.arange(ids.size(0), device=ids.device), "
        "offsets, False, 1, False, None, False)[0].to({}.dtype)",
        rows(name, "ids"), weight(name));
  }
  return fmt::format("torch.embedding_bag({}, ids, offsets, False, 1, False, None, False)[0]",
                     weight(name));
}

torch::jit::Module ScriptWriter::finish(const std::string& source) {
  const std::string prepare =
      prepare_.empty() ? ""
                       : "\ndef " + std::string(kPrepareWeights) + "(self) -> None:\n" + prepare_;
  module_.define(source + methods_ + prepare, std::make_shared<QuantizedOpsResolver>());
  module_.eval();
  return module_;
}

}  // namespace sift
