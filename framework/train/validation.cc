#include "framework/train/validation.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "core/append_line.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "framework/runtime/evaluation.h"
#include "framework/runtime/run_folder.h"
#include "framework/runtime/task.h"
#include "framework/train/distributed_training.h"
#include "framework/train/saving.h"
#include "framework/train/validation_record.h"

namespace sift {
namespace {

// Adds the validation split's metrics to `record`; keeps the weights when they improve.
void score_validation(Run& run, ShardedStream& valid, nlohmann::json& record, std::string& line) {
  Evaluation e = evaluate(run.model, valid, run.task.encoder.kind, run.task.labels.size(),
                          run.device, run.plan.labels);
  reduce_evaluation(*run.dist, e);
  if (run.step_log.tensorboard() && !e.multi_label) {
    run.step_log.tensorboard_text("valid_confusion", run.state.step,
                                  e.confusion.to_markdown(run.task.labels.names()));
  }
  const double value = add_valid_metrics(e, run.plan.train, run.task.labels, record, line);
  // While pruning is on its way the weights are not those the run ends with.
  if (run.pruner && !run.pruner->at_final_sparsity(run.state.step)) {
    line += " (before the final sparsity: not a best candidate)";
    return;
  }
  if (take_if_best(run.plan.train, value, run.state)) run.best.take(run.state, record);
}

// The validation split's most confused pairs with a few of their texts, each rank's
// texts gathered in rank order on rank 0 (the counts are already summed over ranks).
nlohmann::json most_confused(Run& run, const ConfusedExamples& mine, const Evaluation& e) {
  const auto blobs = gather_rank_blobs(*run.dist, {{"confused", mine.held().dump()}});
  ConfusedExamples all;
  for (int64_t r = 0; r < run.dist->world_size(); ++r) {
    const auto it = blobs.find(rank_blob("confused", r));
    if (it != blobs.end()) all.merge(nlohmann::json::parse(it->second), e.confusion);
  }
  return all.most_confused(e.confusion, run.task.labels.names());
}

}  // namespace

void validate(Run& run, ShardedStream* valid, Progress& progress, bool end_of_epoch) {
  PhaseTimer timer(run.phases, Phase::validation);
  const TrainingState& s = run.state;
  std::vector<double> loss{s.epoch_loss_sum, static_cast<double>(s.epoch_loss_examples)};
  run.dist->sum(loss);
  std::string line;
  nlohmann::json record = validation_record(s, loss[1] > 0 ? loss[0] / loss[1] : 0.0,
                                            progress.elapsed_seconds(), end_of_epoch, line);
  // Before scoring: the record a best validation keeps is then the one last.ckpt keeps
  // as its last metrics, which a resume gives back to best.ckpt (repair_best).
  if (run.scaler.enabled()) {
    record["loss_scale"] = run.scaler.scale();
    record["skipped_steps"] = run.scaler.skipped_steps();
  }
  if (valid != nullptr) score_validation(run, *valid, record, line);
  if (run.dist->is_primary()) append_line(run_file(run.dir, kMetricsFile), record.dump());
  ++run.state.metrics_rows;
  if (valid != nullptr) run.step_log.valid_row(s.step, s.epoch, record);
  progress.log(line);
  run.state.last_metrics = record;
}

bool stop_early(const Run& run) { return stops_early(run.plan.train, run.state); }

int64_t cut_metrics_back(const std::string& run_dir, int64_t rows) {
  const std::string path = run_file(run_dir, kMetricsFile);
  struct stat st {};
  // Not through a symlink or into a device: such a file is the user's, left as it is.
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::max<int64_t>(rows, 0);
  std::ifstream in(path, std::ios::binary);
  std::string kept, line;
  int64_t lines = 0;
  while ((rows < 0 || lines < rows) && std::getline(in, line)) {
    kept += line + "\n";
    ++lines;
  }
  if (in.bad()) throw Error(fmt::format("cannot read {}", path));
  if (rows >= 0 && in.peek() != std::char_traits<char>::eof()) {
    write_file_atomically(path, kept);  // the rows after last.ckpt's step: logged again
  }
  return lines;
}

nlohmann::json final_evaluation(Run& run, const TextEncoder& encoder, std::string& text_report) {
  nlohmann::json splits = nlohmann::json::object();
  restore_best(run);
  for (const std::string name : {"valid", "test"}) {
    // The report shows a few misclassified validation texts: only that stream carries texts.
    const bool texts = name == "valid" && !run.plan.data.multi_label;
    auto stream =
        open_stream(run.plan.data, from_string<Split>(name, "split"), encoder, run.task.labels,
                    false, run.dist->rank(), run.dist->world_size(), nullptr, texts);
    if (!stream) continue;
    ConfusedExamples confused;
    Evaluation e = evaluate(run.model, *stream, run.task.encoder.kind, run.task.labels.size(),
                            run.device, run.plan.labels, texts ? &confused : nullptr);
    reduce_evaluation(*run.dist, e);
    std::vector<int64_t> skipped{static_cast<int64_t>(stream->skipped())};
    run.dist->sum(skipped);
    splits[name] =
        final_split(e, name, run.task.labels, *stream, skipped[0],
                    texts ? most_confused(run, confused, e) : nlohmann::json(), text_report);
  }
  return splits;
}

}  // namespace sift
