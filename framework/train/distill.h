// train.distill: knowledge distillation. A trained teacher (a run folder or an export, of
// any model type and tokenizer) is loaded once per process; the data workers encode each
// text a second time with the teacher's own encoder (RawBatch::teacher_ids), and each
// batch's loss becomes alpha * hard + (1 - alpha) * soft (runtime/loss.h distill_loss).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "datasets/batch.h"
#include "datasets/text_encoder.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/model_bundle.h"

namespace sift {

struct Teacher {
  explicit Teacher(ModelBundle loaded);
  ModelBundle bundle;   // in eval mode, never trained
  TextEncoder encoder;  // the teacher's reading of text; the stream's workers copy it
  // The teacher's logit column of each of the run's labels, when its label order differs
  // (undefined: the same order).
  torch::Tensor columns;
};

// Loads the teacher at `path` (train.distill.teacher) onto `device` and checks it
// against the run: the same label set (in any order), the same data.multi_label
// (`multi_label`). Errors name the key and the file or both label sets.
std::shared_ptr<Teacher> load_teacher(const std::string& path, bool multi_label, const Task& task,
                                      torch::Device device);

// The teacher's logits (fp32, the run's label order) for a batch carrying teacher ids:
// no gradients, eval mode, under the run's autocast precision.
torch::Tensor teacher_logits(Teacher& teacher, const RawBatch& batch, Precision precision,
                             torch::Device device);

// The progress line's note: the teacher's share of the wall time so far.
std::string teacher_note(double teacher_seconds, double elapsed_seconds);

}  // namespace sift
