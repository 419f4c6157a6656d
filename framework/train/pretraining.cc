#include "framework/train/pretraining.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "core/splitmix.h"
#include "models/model.h"

namespace sift {
namespace {

constexpr uint64_t kTrainingSalt = 0x6D61736B5F74726EULL;  // "mask_trn"
constexpr uint64_t kValidSalt = 0x6D61736B5F766C64ULL;     // "mask_vld"

torch::Tensor int64_tensor(const std::vector<int64_t>& values, std::vector<int64_t> shape,
                           torch::Device device) {
  return torch::from_blob(const_cast<int64_t*>(values.data()), shape, torch::kInt64)
      .clone()
      .to(device);
}

}  // namespace

MaskedBatch masked_batch(const RawBatch& batch, const MaskedLmPlan& plan, const MaskingVocab& vocab,
                         uint64_t seed, torch::Device device) {
  const PackedSequences packed = pack_sequences(batch, plan.sequence_tokens);
  const MaskedSequences masked = mask_tokens(packed, vocab, plan.masking, seed);
  std::vector<int64_t> positions, targets;
  for (size_t i = 0; i < masked.targets.size(); ++i) {
    if (masked.targets[i] < 0) continue;
    positions.push_back(static_cast<int64_t>(i));
    targets.push_back(masked.targets[i]);
  }
  MaskedBatch b;
  b.input.ids = int64_tensor(masked.inputs, {packed.rows(), packed.length}, device);
  b.input.lengths = int64_tensor(packed.lengths, {packed.rows()}, device);
  b.positions = int64_tensor(positions, {static_cast<int64_t>(positions.size())}, device);
  b.targets = int64_tensor(targets, {static_cast<int64_t>(targets.size())}, device);
  return b;
}

MaskingVocab task_masking_vocab(const Task& task) {
  return task.wordpiece ? masking_vocab(task.wordpiece->vocab(), "tokenizer.model")
                        : masking_vocab(*task.pieces, "tokenizer.model");
}

std::string start_bias_at_unigram(ClassifierImpl& model, const DataPlan& plan, const Task& task) {
  const int64_t lines = plan.masked_lm ? plan.masked_lm->unigram_lines : 0;
  if (lines <= 0) return "";
  const std::string name = std::string(kMaskedLmHeadPrefix) + "bias";
  auto params = model.named_parameters();
  if (!params.contains(name)) {
    throw Error("model.type: the model has no masked-token head (pretrain.files needs an encoder)");
  }
  const MaskingVocab vocab = task_masking_vocab(task);
  std::vector<double> counts(static_cast<size_t>(vocab.size()), 0.0);
  auto stream = open_split(plan, Split::train, LabelSet::from_option(plan.labels));
  TextEncoder encoder = make_encoder(task);
  Example example;
  std::vector<int64_t> ids;
  int64_t texts = 0;
  double tokens = 0.0;
  while (texts < lines && stream && stream->next(example)) {
    ++texts;
    encoder.encode(example.text, ids);
    for (const int64_t id : ids) {
      if (id < 0 || id >= vocab.size() || vocab.special[static_cast<size_t>(id)]) continue;
      counts[static_cast<size_t>(id)] += 1.0;
      tokens += 1.0;
    }
  }
  torch::Tensor& bias = params[name];
  counts.resize(static_cast<size_t>(bias.numel()), 0.0);  // ids the vocabulary lacks: unseen
  const double total = tokens + static_cast<double>(counts.size());
  std::vector<float> values(counts.size());
  for (size_t id = 0; id < counts.size(); ++id) {
    values[id] = static_cast<float>(std::log((counts[id] + 1.0) / total));
  }
  torch::NoGradGuard no_grad;
  bias.copy_(torch::tensor(values).to(bias.device()));
  return fmt::format(
      "pretrain.unigram_lines: the masked-token head's bias starts at the log unigram shares of "
      "{} ids in the first {} texts",
      static_cast<int64_t>(tokens), texts);
}

uint64_t masking_seed(uint64_t seed, int64_t step, int64_t micro, int64_t rank) {
  const uint64_t place = (static_cast<uint64_t>(step) << 20) ^ (static_cast<uint64_t>(micro) << 8) ^
                         static_cast<uint64_t>(rank);
  return splitmix64_nth(seed ^ kTrainingSalt, place + 1);
}

torch::Tensor masked_lm_loss(ClassifierImpl& model, const MaskedBatch& b, torch::Tensor* logits) {
  torch::Tensor scores = model.masked_token_logits(b.input, b.positions);
  if (!scores.defined()) {
    throw Error("model.type: the model has no masked-token head (pretrain.files needs an encoder)");
  }
  scores = scores.to(torch::kFloat32);
  if (logits) *logits = scores;
  return torch::nn::functional::cross_entropy(scores, b.targets);
}

Evaluation evaluate_masked(ClassifierImpl& model, ShardedStream& stream, const MaskedLmPlan& plan,
                           const MaskingVocab& vocab, uint64_t seed, torch::Device device,
                           const Lockstep* lockstep) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  Evaluation e;
  e.masked_lm = true;
  double loss_sum = 0.0;
  RawBatch batch;
  stream.start_epoch(1);
  LockstepBatches turns(stream, lockstep);
  for (uint64_t index = 1; turns.next(batch); ++index) {
    const MaskedBatch b =
        masked_batch(batch, plan, vocab, splitmix64_nth(seed ^ kValidSalt, index), device);
    if (b.targets.numel() == 0) {
      turns.idle();
      continue;
    }
    torch::Tensor logits;
    const double loss = masked_lm_loss(model, b, &logits).item<double>();
    const auto n = b.targets.numel();
    loss_sum += loss * static_cast<double>(n);
    e.masked_tokens += n;
    const torch::Tensor right = logits.argmax(1).eq(b.targets);
    e.masked_correct += right.sum().item<int64_t>();
    // The chosen positions the model saw as [MASK] (an original token is never [MASK]).
    const torch::Tensor shown = b.input.ids.reshape({-1}).index_select(0, b.positions);
    const torch::Tensor at_mask = shown.eq(vocab.mask_id);
    e.mask_tokens += at_mask.sum().item<int64_t>();
    e.mask_correct += right.logical_and(at_mask).sum().item<int64_t>();
  }
  if (e.masked_tokens > 0) e.loss = loss_sum / static_cast<double>(e.masked_tokens);
  if (was_training) model.train();
  return e;
}

}  // namespace sift
