// The RNN as TorchScript: RnnImpl::forward, with pack_padded_sequence and
// pad_packed_sequence spelled out as the ATen ops they call (sort by length, pack, run
// the packed LSTM/GRU kernel, pad, unsort), then the same pooling.
#include <fmt/format.h>

#include "core/error.h"
#include "models/rnn.h"
#include "models/script_writer.h"

namespace sift {
namespace {

// The flat weights in the order torch::lstm / torch::gru take them: per layer, per
// direction, w_ih, w_hh, b_ih, b_hh.
std::string rnn_params(const ModelConfig& config, ScriptWriter& w) {
  std::vector<std::string> params;
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    for (int dir = 0; dir < (config.bidirectional ? 2 : 1); ++dir) {
      const std::string suffix = rnn_suffix(layer, dir == 1);
      for (const char* kind : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
        params.push_back(w.weight(fmt::format("rnn.{}{}", kind, suffix)));
      }
    }
  }
  return fmt::format("[{}]", fmt::join(params, ", "));
}

std::string recurrence(const ModelConfig& config, ScriptWriter& w) {
  // int8 keeps the gates' weights int8 and dequantizes them here rather than running
  // torch.quantized_lstm on packed cells: measured on the AG News BiLSTM (hidden 128,
  // LibTorch 1.13, oneDNN), the quantized cells took 80 ms a text at batch 1 against 16 ms
  // in fp32, and were no faster at batch 64: each time step makes two small products
  // (64 x 512 x 128 multiply-adds at most), far below what pays for oneDNN's 140 us a
  // call (kInt8MinMacs).
  const std::string bidirectional = config.bidirectional ? "True" : "False";
  if (config.cell == "lstm") {
    return fmt::format("torch.lstm(data, batch_sizes, [h0, h0], {}, True, {}, 0.0, False, {})",
                       rnn_params(config, w), config.layers, bidirectional);
  }
  return fmt::format("torch.gru(data, batch_sizes, h0, {}, True, {}, 0.0, False, {})",
                     rnn_params(config, w), config.layers, bidirectional);
}

// The hidden size the weights have: config.hidden, or fewer units after train.prune's
// hidden pruning, which keeps the same number in every layer and direction (one sparsity,
// the same units per group), as the single h0 of torch.lstm / torch.gru needs.
int64_t hidden_size(const ModelConfig& config, const ScriptWriter& w) {
  const int64_t hidden = w.tensor("rnn.weight_hh" + rnn_suffix(0, false)).size(1);
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    for (int dir = 0; dir < (config.bidirectional ? 2 : 1); ++dir) {
      const std::string name = "rnn.weight_hh" + rnn_suffix(layer, dir == 1);
      if (w.tensor(name).size(1) != hidden) {
        throw Error(fmt::format(
            "export: the rnn's layers kept different numbers of hidden units ({} has {}, "
            "rnn.weight_hh_l0 {}); one LSTM/GRU call needs the same number in each",
            name, w.tensor(name).size(1), hidden));
      }
    }
  }
  return hidden;
}

std::string pooling(const ModelConfig& config, ScriptWriter& w) {
  if (config.pooling == "max") {
    return "    pooled = torch.max(states.masked_fill(torch.logical_not(valid), "
           "float(\"-inf\")), 1)[0]\n";
  }
  if (config.pooling == "mean") {
    return "    counts = lengths.unsqueeze(1).to(states.dtype)\n"
           "    pooled = states.masked_fill(torch.logical_not(valid), 0.0).sum(1) / counts\n";
  }
  if (config.pooling == "attention") {
    return fmt::format(
        "    scores = {}\n"
        "    scores = scores.masked_fill(torch.logical_not(valid), float(\"-inf\"))\n"
        "    pooled = (torch.softmax(scores, 1) * states).sum(1)\n",
        w.linear(fmt::format("torch.tanh({})", w.linear("states", "attention")), "attention_query",
                 /*bias=*/false));
  }
  throw Error(fmt::format("export: the rnn model has no pooling '{}'", config.pooling));
}

}  // namespace

std::string rnn_script(const ModelConfig& config, ScriptWriter& w) {
  const int64_t states = config.layers * (config.bidirectional ? 2 : 1);
  return fmt::format(R"(
def forward(self, ids: Tensor, lengths: Tensor) -> Tensor:
    length = ids.size(1)
    embedded = {0}
    sorted_lengths, order = torch.sort(lengths.cpu(), -1, True)
    order = order.to(ids.device)
    data, batch_sizes = torch._pack_padded_sequence(embedded.index_select(0, order), sorted_lengths, True)
    h0 = torch.zeros([{1}, int(batch_sizes[0]), {2}], dtype=data.dtype, device=data.device)
    out = {3}[0]
    states = torch._pad_packed_sequence(out, batch_sizes, True, 0.0, length)[0]
    unsort = torch.empty_like(order).scatter_(0, order, torch.arange(order.size(0), device=order.device))
    states = states.index_select(0, unsort)
    lengths = lengths.to(ids.device)
    valid = (torch.arange(length, device=ids.device).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(2)
{4}    return {5}

def predict_proba(self, ids: Tensor, lengths: Tensor) -> Tensor:
    return torch.softmax(self.forward(ids, lengths), 1)
)",
                     w.rows("embedding.weight", "ids"), states, hidden_size(config, w),
                     recurrence(config, w), pooling(config, w),
                     w.output(w.linear("pooled", "output")));
}

}  // namespace sift
