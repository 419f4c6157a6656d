// Dynamic batching for one served model: a bounded queue of texts and the worker threads
// that run them in batches. A batch closes when it holds `max_batch` texts or
// `max_batch_tokens` tokens, or when its oldest text has waited `max_delay_us`, whichever
// comes first (Triton's max_queue_delay_microseconds, TEI's --max-batch-tokens), or as
// soon as no request is on its way in (being read and tokenized): waiting then only adds
// latency (one client alone: 309 requests/s for the Transformer with a 2 ms delay, 1,268
// without; bench/serve_bench.sh). For a padded model the batch is the oldest text and the
// queued texts nearest its length (length buckets across the queue; the oldest text
// anchors each batch, so none waits behind others for long); the batch is then sorted by
// length and cut into runs where the padding saved passes a forward's own cost, or where a
// run would pass the token budget (batch_runs.h). A request whose texts do
// not all fit is refused whole (429), never queued without bound; a text still queued at
// its request's deadline is skipped. A model whose forward runs one text at a time
// (fastText) gains nothing from a batch: its texts run on the request's own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tools/serve/model_backend.h"

namespace sift::serve {

using Clock = std::chrono::steady_clock;

struct BatchLimits {
  int64_t max_batch = 32;
  int64_t max_batch_tokens = 8192;
  int64_t max_delay_us = 500;
  int64_t queue_texts = 1024;  // texts queued at most, all requests together
  // 2 workers x 1 LibTorch thread on 2 cores: the Transformer export at concurrency 32
  // answered 3,763 requests/s against 1,967 with 1 worker x 2 threads and 1,193 with
  // batches of one (bench/serve_split.sh).
  int64_t workers = 2;
  // Wait the whole max_delay_us for company even when no request is on its way in
  // (Triton's rule): fuller batches under light load, at the cost of its latency.
  bool wait_full_delay = false;
  // A padded model's batch takes the queued texts nearest the oldest one's length (false:
  // in arrival order; for comparison, bench/serve_bench.sh).
  bool length_buckets = true;
  // A forward's own cost in padded tokens: a padded model's batch is cut into runs of
  // similar length where that saves more (batch_runs.h).
  int64_t run_cost_tokens = 32;
};

// What the model ran at once: texts, their tokens, and the tokens with padding (a padded
// model runs every text at the longest one's length).
struct BatchRun {
  size_t texts = 0;
  int64_t tokens = 0, padded_tokens = 0;
};
using BatchObserver = std::function<void(const BatchRun&)>;

// One request's texts and their results; the request's thread waits on it.
class Job {
 public:
  Job(std::vector<std::vector<int64_t>> ids, int64_t k, double threshold,
      Clock::time_point deadline);
  // Waits until every text has run (true), or until `until` (false).
  bool wait_until(Clock::time_point until);
  // After a complete wait: "" or why the texts could not run (the model's error, or the
  // deadline that passed while they were queued).
  const std::string& error() const { return error_; }
  bool expired() const { return expired_; }
  const std::vector<cli::Predictions>& results() const { return results_; }
  size_t size() const { return ids_.size(); }

 private:
  friend class BatchQueue;
  void finish(size_t i, cli::Predictions p);
  void fail(const std::string& why, bool expired);
  void done_one();

  std::vector<std::vector<int64_t>> ids_;
  int64_t k_;
  double threshold_;
  Clock::time_point deadline_;
  std::vector<cli::Predictions> results_;
  std::mutex mutex_;
  std::condition_variable done_;
  size_t remaining_;
  std::string error_;
  bool expired_ = false;
};

class BatchQueue {
 public:
  enum class Admit { accepted, full, stopped };
  // `on_batch` is told of every batch run (the metrics).
  BatchQueue(std::shared_ptr<const ModelBackend> backend, BatchLimits limits,
             BatchObserver on_batch);
  // Runs every text still queued (those past their deadline are skipped), then joins.
  ~BatchQueue();
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // A request for this model is on its way in: until it is submitted (or refused), a batch
  // waits for it (up to max_delay_us). Each arriving() is matched by one submit() or left().
  void arriving() { arriving_.fetch_add(1); }
  void left();
  Admit submit(const std::shared_ptr<Job>& job);
  int64_t depth() const { return depth_.load(); }
  const BatchLimits& limits() const { return limits_; }

 private:
  struct Item {
    std::shared_ptr<Job> job;
    size_t index;
    int64_t tokens;
    Clock::time_point queued;
  };
  void work();
  // Waits for a batch to close and takes it; empty when stopping with nothing queued.
  std::vector<Item> next_batch();
  // The closed batch, under the lock: in arrival order, or the oldest text and those nearest
  // its length (length_buckets, padded models).
  std::vector<Item> take_in_order();
  std::vector<Item> take_nearest_lengths();
  void run(std::vector<Item>& batch) const;
  void run_chunk(const std::vector<Item>& chunk) const;

  std::shared_ptr<const ModelBackend> backend_;
  BatchLimits limits_;
  BatchObserver on_batch_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;
  int64_t queued_tokens_ = 0;
  std::atomic<int64_t> depth_{0};
  std::atomic<int64_t> arriving_{0};
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace sift::serve
