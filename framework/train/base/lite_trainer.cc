#include "framework/train/base/lite_trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "config/options.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/task.h"
#include "framework/train/base/fast_path_rules.h"
#include "framework/train/base/fasttext_learner.h"
#include "framework/train/base/run_report.h"
#include "framework/train/base/thread_split.h"
#include "framework/train/base/train_loop.h"
#include "models/base/traits.h"

namespace sift {
namespace {

// The fastText learner over its own arrays, as the sift-lite program reports it:
// last.ckpt holds neither LibTorch's generator state, which the fast path draws nothing
// from without ns, nor optimizer state, which plain SGD keeps none of: a resume by
// sift-main starts both fresh, which changes nothing it computes.
class LiteLearner : public FastTextLearner {
 public:
  using FastTextLearner::FastTextLearner;
  std::string training_path() const override {
    const int64_t threads = run_.plan.train.fast_path_threads;
    return fmt::format("fast path: fused SGD, {} thread{}, without LibTorch (sift-lite){}", threads,
                       threads == 1 ? "" : "s",
                       run_.plan.thread_split.empty() ? "" : " (" + run_.plan.thread_split + ")");
  }
  nlohmann::json environment(const std::string& dir) const override {
    // Training threads; no LibTorch pool.
    return run_environment({"sift-lite", "not loaded", "cpu", run_.plan.train.fast_path_threads, 1,
                            run_.plan.data.train_stream.workers, run_file(dir, kConfigFile)});
  }
};

}  // namespace

const std::vector<std::string>& lite_honours() {
  // model.*: fastText's own that its table takes, one by one, so that a key added to the
  // fastText model later goes to sift-main until sift-lite takes it (model.pretrained did).
  static const std::vector<std::string> keys = [] {
    std::istringstream in(
        "run. data. tokenizer. model.type model.dim model.ngrams model.buckets model.minn "
        "model.maxn train.epochs train.batch_size train.max_steps train.loss "
        "train.loss_reduction train.log_every train.tensorboard train.checkpoint_minutes "
        "train.save_last train.on_nonfinite train.eval_every train.best_metric train.best_label "
        "train.threshold train.patience train.min_delta train.loss_scaling "
        "train.fast_path_threads train.optimizer.lr train.scheduler.");
    std::vector<std::string> out;
    for (std::string key; in >> key;) out.push_back(key);
    return out;
  }();
  return keys;
}

std::string lite_refusal(const SiftConfig& config) {
  const TrainConfig& t = config.train;
  if (config.model.type != "fasttext") return "model.type is not fasttext";
  const FastPathCase c = fast_path_case(config);
  if (std::string why = fast_path_refusal(t, c); !why.empty()) return why;
  // A restart resumes the run folder (train_command.cc), which only sift-main does.
  if (const char* r = std::getenv("SIFT_MAX_RESTARTS"); r != nullptr && std::string(r) != "0") {
    return "sift launch --max-restarts";
  }
  // ns seeds each batch's draws from LibTorch's generator (models/fasttext.h).
  if (t.loss == Loss::ns) return "train.loss ns";
  if (config.tokenizer.type == TokenizerType::sentencepiece) return "tokenizer.type sentencepiece";
  for (const std::string& key : keys_off_default(config)) {
    const auto& honours = lite_honours();
    if (std::none_of(honours.begin(), honours.end(), [&key](const std::string& h) {
          return key == h || (h.back() == '.' && key.rfind(h, 0) == 0);
        })) {
      return key;
    }
  }
  return "";
}

nlohmann::json lite_train(const SiftConfig& config, const TrainOptions& options) {
  RunCore run;
  run.plan = plan_training(config);  // every check between options, then each part once
  run.options = options;
  run.task = build_task(run.plan.data);
  check_best_label(run.plan.train, run.task.labels);
  run.dir = create_run_folder(run.plan.given, run.lock);
  write_run_text(run.dir, run.plan.given, run.task, run.plan.data);
  run.file_hashes = run_file_hashes(run.dir);
  const TextEncoder encoder = make_encoder(run.task);
  const ModelConfig& model = run.plan.model;
  const Allocating weights = allocating_weights(model);
  LiteLearner learner(run, std::make_unique<FastTextTables>(
                               encoder.num_ids(), run.task.labels.size(), model.dim, run.plan.seed,
                               run.plan.train.loss, run.task.label_counts));
  return train_and_report(run, learner, encoder, "");
}

}  // namespace sift
