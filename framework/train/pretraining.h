// Masked-token pretraining's objective for the LibTorch learner (torch_learner.cc): a
// batch of unlabelled texts packed and masked (datasets/masked_lm.h), its loss over the
// masked positions through the encoder's tied head, and a validation pass that counts the
// masked tokens predicted right. Every mask is drawn from a seed of the run's seed and the
// batch's place (the optimizer step and micro-batch; a validation batch's index), so a
// resumed run masks as the uninterrupted one did.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "datasets/masked_lm.h"
#include "datasets/sharded_stream.h"
#include "framework/runtime/base/data_plan.h"
#include "framework/runtime/base/evaluation_result.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/evaluation.h"
#include "models/model.h"

namespace sift {

// A masked batch on the device: the packed sequences, the flat indices of the chosen
// positions and their original ids.
struct MaskedBatch {
  ModelInput input;
  torch::Tensor positions;
  torch::Tensor targets;
};
MaskedBatch masked_batch(const RawBatch& batch, const MaskedLmPlan& plan, const MaskingVocab& vocab,
                         uint64_t seed, torch::Device device);

// The masking flags (special, continuation, [MASK]) of a pretraining task's vocabulary.
MaskingVocab task_masking_vocab(const Task& task);

// pretrain.unigram_lines: a new encoder's masked-token head starts its bias at the log of
// each id's share of the chosen-able tokens of the first unigram_lines texts of
// pretrain.files (add-one smoothed; special ids as an unseen id). Zero bias makes the head
// learn the unigram distribution first, and through the tied table: every id the batch
// does not hold is pushed along one shared direction at AdamW's full step, which then
// swamps those ids' inputs (#43, docs/pretraining.md). Returns the line train.log gets
// ("" when pretrain.unigram_lines is 0).
std::string start_bias_at_unigram(ClassifierImpl& model, const DataPlan& plan, const Task& task);

// The seed of training batch `micro` of optimizer step `step` (from 0) of a run seeded `seed`.
uint64_t masking_seed(uint64_t seed, int64_t step, int64_t micro, int64_t rank);

// The mean cross-entropy over the masked positions (in fp32, whatever autocast computed);
// `logits` gets the scores. Throws sift::Error when the model has no masked-token head.
torch::Tensor masked_lm_loss(ClassifierImpl& model, const MaskedBatch& b, torch::Tensor* logits);

// One pass over `stream` (from its first epoch): the masked tokens' mean loss and accuracy,
// each batch masked by the seed of its index; in step with the other ranks when
// `lockstep` is given (evaluation.h).
Evaluation evaluate_masked(ClassifierImpl& model, ShardedStream& stream, const MaskedLmPlan& plan,
                           const MaskingVocab& vocab, uint64_t seed, torch::Device device,
                           const Lockstep* lockstep = nullptr);

}  // namespace sift
