#include "tools/serve/batch_queue.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <utility>

#include "tools/serve/batch_runs.h"

namespace sift::serve {

Job::Job(std::vector<std::vector<int64_t>> ids, int64_t k, double threshold,
         Clock::time_point deadline)
    : ids_(std::move(ids)),
      k_(k),
      threshold_(threshold),
      deadline_(deadline),
      results_(ids_.size()),
      remaining_(ids_.size()) {}

bool Job::wait_until(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_.wait_until(lock, until, [&] { return remaining_ == 0; });
}

void Job::finish(size_t i, cli::Predictions p) {
  results_[i] = std::move(p);  // each index is written by one worker only
  done_one();
}

void Job::fail(const std::string& why, bool expired) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) error_ = why;
    expired_ = expired_ || expired;
  }
  done_one();
}

void Job::done_one() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--remaining_ == 0) done_.notify_all();
}

BatchQueue::BatchQueue(std::shared_ptr<const ModelBackend> backend, BatchLimits limits,
                       BatchObserver on_batch)
    : backend_(std::move(backend)), limits_(limits), on_batch_(std::move(on_batch)) {
  const int64_t workers = backend_->one_worker() ? 1 : limits_.workers;
  for (int64_t w = 0; w < workers; ++w) workers_.emplace_back([this] { work(); });
}

BatchQueue::~BatchQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : workers_) t.join();
}

void BatchQueue::left() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    arriving_.fetch_sub(1);
  }
  changed_.notify_all();
}

BatchQueue::Admit BatchQueue::submit(const std::shared_ptr<Job>& job) {
  const Clock::time_point now = Clock::now();
  std::vector<Item> items;
  for (size_t i = 0; i < job->size(); ++i) {
    items.push_back(
        Item{job, i, std::max<int64_t>(1, static_cast<int64_t>(job->ids_[i].size())), now});
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    arriving_.fetch_sub(1);
    if (stopping_) return Admit::stopped;
    if (backend_->one_at_a_time()) {
      // Run here: a worker would only add two thread hand-offs per request.
    } else if (static_cast<int64_t>(queue_.size() + items.size()) > limits_.queue_texts) {
      return Admit::full;
    } else {
      for (auto& item : items) {
        queued_tokens_ += item.tokens;
        queue_.push_back(std::move(item));
      }
      depth_.store(static_cast<int64_t>(queue_.size()));
    }
  }
  if (backend_->one_at_a_time()) {
    run(items);
  } else {
    changed_.notify_all();
  }
  return Admit::accepted;
}

void BatchQueue::work() {
  for (;;) {
    std::vector<Item> batch = next_batch();
    if (batch.empty()) return;
    run(batch);
  }
}

std::vector<BatchQueue::Item> BatchQueue::next_batch() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return {};  // stopping, and everything ran
    const Clock::time_point close_at =
        queue_.front().queued + std::chrono::microseconds(limits_.max_delay_us);
    changed_.wait_until(lock, close_at, [&] {
      return stopping_ || queue_.empty() || (!limits_.wait_full_delay && arriving_.load() <= 0) ||
             static_cast<int64_t>(queue_.size()) >= limits_.max_batch ||
             queued_tokens_ >= limits_.max_batch_tokens;
    });
    if (queue_.empty()) continue;  // another worker took them
    std::vector<Item> batch =
        limits_.length_buckets && backend_->padded() ? take_nearest_lengths() : take_in_order();
    for (const Item& item : batch) queued_tokens_ -= item.tokens;
    depth_.store(static_cast<int64_t>(queue_.size()));
    return batch;
  }
}

std::vector<BatchQueue::Item> BatchQueue::take_in_order() {
  std::vector<Item> batch;
  int64_t tokens = 0;
  while (!queue_.empty() && static_cast<int64_t>(batch.size()) < limits_.max_batch &&
         (batch.empty() || tokens + queue_.front().tokens <= limits_.max_batch_tokens)) {
    tokens += queue_.front().tokens;
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return batch;
}

std::vector<BatchQueue::Item> BatchQueue::take_nearest_lengths() {
  // The queue's positions by distance to the oldest text's length (ties: the older first).
  const int64_t anchor = queue_.front().tokens;
  std::vector<size_t> order(queue_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::abs(queue_[a].tokens - anchor) < std::abs(queue_[b].tokens - anchor);
  });
  // Taken while the padded batch (texts x the longest) stays within the token budget.
  std::vector<bool> taken(queue_.size(), false);
  size_t count = 0;
  int64_t longest = 0;
  for (size_t i : order) {
    if (static_cast<int64_t>(count) >= limits_.max_batch) break;
    const int64_t widest = std::max(longest, queue_[i].tokens);
    if (count > 0 && static_cast<int64_t>(count + 1) * widest > limits_.max_batch_tokens) continue;
    taken[i] = true;
    longest = widest;
    ++count;
  }
  std::vector<Item> batch;
  std::deque<Item> rest;
  for (size_t i = 0; i < queue_.size(); ++i) {
    if (taken[i]) {
      batch.push_back(std::move(queue_[i]));
    } else {
      rest.push_back(std::move(queue_[i]));
    }
  }
  queue_.swap(rest);
  return batch;
}

void BatchQueue::run(std::vector<Item>& batch) const {
  const Clock::time_point now = Clock::now();
  std::vector<Item> live;
  for (auto& item : batch) {
    if (now > item.job->deadline_) {
      item.job->fail("its deadline passed while it was queued", true);
    } else {
      live.push_back(std::move(item));
    }
  }
  if (live.empty()) return;
  if (!backend_->padded()) return run_chunk(live);
  // Shortest first, cut into runs of similar length (batch_runs.h).
  std::stable_sort(live.begin(), live.end(),
                   [](const Item& a, const Item& b) { return a.tokens < b.tokens; });
  std::vector<int64_t> lengths;
  for (const Item& item : live) lengths.push_back(item.tokens);
  size_t start = 0;
  for (size_t end : cut_runs(lengths, limits_.run_cost_tokens, limits_.max_batch_tokens)) {
    run_chunk(std::vector<Item>(std::make_move_iterator(live.begin() + start),
                                std::make_move_iterator(live.begin() + end)));
    start = end;
  }
}

void BatchQueue::run_chunk(const std::vector<Item>& chunk) const {
  std::vector<TextQuery> queries;
  queries.reserve(chunk.size());
  for (const auto& item : chunk) {
    queries.push_back(TextQuery{&item.job->ids_[item.index], item.job->k_, item.job->threshold_});
  }
  BatchRun figures{chunk.size(), 0, 0};
  int64_t longest = 0;
  for (const auto& item : chunk) {
    figures.tokens += item.tokens;
    longest = std::max(longest, item.tokens);
  }
  figures.padded_tokens =
      backend_->padded() ? static_cast<int64_t>(chunk.size()) * longest : figures.tokens;
  if (on_batch_) on_batch_(figures);
  std::vector<cli::Predictions> out;
  try {
    out = backend_->predict(queries);
  } catch (const std::exception& e) {
    for (const auto& item : chunk) item.job->fail(e.what(), false);
    return;
  }
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i].job->finish(chunk[i].index, std::move(out[i]));
}

}  // namespace sift::serve
