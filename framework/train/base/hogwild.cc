#include "framework/train/base/hogwild.h"

#include <fmt/format.h>
#include <malloc.h>

#include <atomic>
#include <cmath>
#include <exception>
#include <thread>
#include <vector>

#include "core/error.h"
#include "framework/runtime/base/task.h"
#include "framework/train/base/divergence.h"
#include "framework/train/base/lr_schedule.h"

namespace sift {

namespace {

// One Hogwild thread's share of an epoch's counters, added to the run's after the join.
struct Tally {
  int64_t examples = 0;
  double loss_sum = 0.0;
  int64_t skipped = 0;
};

// What the threads of one epoch share: the step counter (the schedule's clock), and a
// flag that stops them all (a step limit, an error).
struct Shared {
  std::atomic<int64_t> step{0};
  std::atomic<int64_t> examples{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> limit_hit{false};
};

// Thread k's loop: batches from its own stream, each a fused step on the shared weights
// without locks. Thread 0 draws the progress.
void hogwild_thread(const RunCore& run, FusedSgd& fused, ShardedStream& stream,
                    const HogwildPlan& plan, Shared& shared, Tally& tally, Progress* progress) {
  const TrainConfig& t = run.plan.train;
  const bool sum = t.loss_reduction == LossReduction::sum;
  RawBatch batch;
  int64_t nonfinite_in_a_row = 0;
  while (!shared.stop.load(std::memory_order_relaxed) && stream.next(batch)) {
    const int64_t step = shared.step.fetch_add(1);
    if (step >= plan.step_limit) {
      shared.limit_hit = true;
      shared.stop = true;
      break;
    }
    const double lr = scheduled_lr(t, step, plan.total_steps);
    const double n = static_cast<double>(batch.size());
    const double loss = fused.gradient(batch, sum ? 1.0 : 1.0 / n);
    if (step_applies(std::isfinite(loss), t.on_nonfinite, "loss", step + 1, run.state.epoch,
                     run.dir, tally.skipped, nonfinite_in_a_row)) {
      fused.apply(batch, lr);
    }
    tally.examples += batch.size();
    tally.loss_sum += std::isfinite(loss) ? loss : 0.0;
    const int64_t seen = shared.examples.fetch_add(batch.size()) + batch.size();
    if (progress != nullptr) {
      progress->update(step + 1, run.state.epoch, seen, {loss / n, step + 1, step + 1}, lr);
    }
  }
}

}  // namespace

bool hogwild_epoch(RunCore& run, const HogwildPlan& plan, Progress& progress) {
  const int64_t threads = run.plan.train.fast_path_threads;
  DataPlan one_reader = run.plan.data;
  one_reader.train_stream.workers = 1;  // each training thread has its own reader
  // data.shuffle_buffer bounds the records held in all: each thread shuffles its own part
  // in its share (20NG, two threads, a whole buffer each: peak RSS 754 MB, 1.3x fastText's).
  int64_t& buffer = one_reader.train_stream.shuffle_buffer;
  if (buffer > 1) buffer = std::max<int64_t>(2, (buffer + threads - 1) / threads);
  std::vector<std::unique_ptr<ShardedStream>> streams;
  std::vector<std::unique_ptr<FusedSgd>> steps;
  const uint64_t salt = one_reader.train_stream.order_salt;
  for (int64_t k = 0; k < threads; ++k) {
    // Every thread reads all of the data and keeps an interleaved share of its records
    // (StreamOptions::thread_share), each in an order of its own.
    one_reader.train_stream.thread_share = {threads, k};
    one_reader.train_stream.order_salt = salt + static_cast<uint64_t>(k);
    streams.push_back(
        open_stream(one_reader, Split::train, *plan.encoder, run.task.labels, true, 0, 1));
    streams.back()->start_epoch(static_cast<uint64_t>(run.state.epoch));
    steps.push_back(plan.make_step());
  }
  Shared shared;
  shared.step = run.state.step;
  shared.examples = run.state.examples_seen;
  std::vector<Tally> tallies(static_cast<size_t>(threads));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int64_t k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      try {
        hogwild_thread(run, *steps[k], *streams[k], plan, shared, tallies[k],
                       k == 0 ? &progress : nullptr);
      } catch (...) {
        errors[k] = std::current_exception();
        shared.stop = true;
      }
    });
  }
  for (auto& thread : pool) thread.join();
  streams.clear();
  // The threads' malloc arenas keep what their streams freed (keep_freed_memory's trim
  // threshold), and the next epoch's threads may take other arenas: 20NG on two threads
  // grew from 609 to 725 MB over three epochs; trimmed here, to 653 MB.
  malloc_trim(0);
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  TrainingState& s = run.state;
  s.step = std::min(shared.step.load(), plan.step_limit);
  for (const auto& tally : tallies) {
    s.examples_seen += tally.examples;
    s.epoch_loss_sum += tally.loss_sum;
    s.epoch_loss_examples += tally.examples;
    s.skipped_batches += tally.skipped;
  }
  return shared.limit_hit;
}

}  // namespace sift
