#include "framework/train/distributed_training.h"

#include <fmt/format.h>

#include <cstdlib>
#include <thread>

#include "core/error.h"
#include "framework/runtime/base/task_cache.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/device.h"
#include "framework/train/base/training_state.h"

namespace sift {
namespace {

constexpr char kFailed[] = "\x01sift-error\x01";

}  // namespace

std::shared_ptr<Distributed> join_for_training(const DistributedOptions& options, int64_t threads) {
  auto dist = join_from_environment(options);
  if (dist->is_group() && threads == 0) {
    const char* local = std::getenv("LOCAL_WORLD_SIZE");
    const int64_t ranks_here = local ? std::max<int64_t>(1, std::atoll(local)) : 1;
    const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    apply_threads(std::max<int64_t>(1, cores / ranks_here));
  }
  return dist;
}

std::string on_primary(Distributed& dist, const std::string& key,
                       const std::function<std::string()>& make) {
  if (!dist.is_primary()) {
    const std::string got = dist.share_from_primary(key, "");
    if (got.rfind(kFailed, 0) == 0) {
      throw Error(fmt::format("rank 0 failed: {}", got.substr(sizeof(kFailed) - 1)));
    }
    return got;
  }
  std::string value;
  try {
    value = make();
  } catch (const std::exception& e) {
    dist.share_from_primary(key, kFailed + std::string(e.what()));
    throw;
  }
  return dist.share_from_primary(key, value);
}

Task build_shared_task(const DataPlan& plan, Distributed& dist) {
  if (!dist.is_group()) return build_task(plan);
  Task built;
  const std::string bytes = on_primary(dist, "task", [&] {
    built = build_task(plan);
    return task_bytes(built);
  });
  return dist.is_primary() ? built : task_from_bytes(plan, bytes);
}

double rank_loss_scale(LossReduction loss_reduction, int64_t examples, int64_t total_examples,
                       int64_t world_size) {
  const auto world = static_cast<double>(world_size);
  if (loss_reduction == LossReduction::sum) return world;
  return world * static_cast<double>(examples) /
         static_cast<double>(std::max<int64_t>(total_examples, 1));
}

void reduce_evaluation(Distributed& dist, Evaluation& e) {
  if (!dist.is_group()) return;  // keeps a single process's loss bit for bit
  std::vector<double> loss{e.loss * static_cast<double>(e.examples())};
  dist.sum(loss);
  if (e.masked_lm) {
    std::vector<int64_t> counts{e.masked_tokens, e.masked_correct, e.mask_tokens, e.mask_correct};
    dist.sum(counts);
    e.masked_tokens = counts[0];
    e.masked_correct = counts[1];
    e.mask_tokens = counts[2];
    e.mask_correct = counts[3];
  } else if (e.multi_label) {
    std::vector<int64_t> counts = e.multi.counts();
    dist.sum(counts);
    e.multi = MultiLabelCounts::from_counts(e.multi.classes(), counts);
  } else {
    // The nonzero cells of every rank, added up: a dense sum would send labels^2 numbers.
    const std::vector<int64_t> mine = e.confusion.cells();
    e.confusion = ConfusionMatrix::from_cells(e.confusion.classes(),
                                              dist.all_gather_int64s(mine.data(), mine.size()));
  }
  e.loss = e.examples() > 0 ? loss[0] / static_cast<double>(e.examples()) : 0.0;
}

void check_world_size(const nlohmann::json& meta, const std::string& path, int64_t world_size) {
  const int64_t saved = meta.value("world_size", int64_t{1});
  // At an epoch's end no rank has a data position to continue from, and the optimizer
  // state is saved whole (run.shard gathers it), so any number of processes goes on.
  if (saved == world_size || epoch_complete_in(meta, path)) return;
  throw Error(
      fmt::format("{} was written by a run of {} process(es) inside an epoch and this one has {}: "
                  "each rank's data position is saved, so resume it with the same number of "
                  "processes (sift launch --nproc {}, or WORLD_SIZE={}), or start a new run with "
                  "train.init_from (a last.ckpt written at an epoch's end resumes with any number)",
                  path, saved, world_size, saved, saved));
}

}  // namespace sift
