#include "datasets/sharded_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/printable.h"

namespace sift {
namespace {

constexpr int kStateVersion = 1;
constexpr size_t kChunkRecords = 64;

// A shard's path as the saved data position holds it: absolute, so that a run resumed from
// another working folder (its config.yaml's paths are relative to the run folder) finds
// the same shards.
std::string absolute_path(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

std::string shard_change(const ShardInfo& then, const std::vector<ShardInfo>& now_list) {
  for (const auto& now : now_list) {
    if (absolute_path(now.path) != absolute_path(then.path)) continue;
    if (now.bytes != then.bytes) {
      return fmt::format("shard {} changed size ({} -> {} bytes)", then.path, then.bytes,
                         now.bytes);
    }
    if (now.mtime_ns != then.mtime_ns) return fmt::format("shard {} was modified", then.path);
    return "";
  }
  return fmt::format("shard {} is missing", then.path);
}

// The shards as they are on disk now, compared with what the stream was built on.
void check_unchanged(const std::vector<ShardInfo>& then, const std::string& when) {
  std::vector<ShardInfo> now;
  for (const auto& s : then) {
    try {
      now.push_back(describe_shards({s.path})[0]);
    } catch (const Error&) {
    }
  }
  for (const auto& s : then) {
    const std::string change = shard_change(s, now);
    if (!change.empty())
      throw Error(fmt::format("{} {}; the data must not change during a run", change, when));
  }
}

nlohmann::json records_json(const std::vector<EncodedRecord>& records) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : records) {
    nlohmann::json item = nlohmann::json::array({r.label});
    for (auto id : r.ids) item.push_back(id);
    if (r.more_labels.empty() && r.teacher_ids.empty()) {
      out.push_back(std::move(item));
    } else {  // an object, so that single-label states keep their compact form
      nlohmann::json object = {{"record", std::move(item)}};
      if (!r.more_labels.empty()) object["more_labels"] = r.more_labels;
      if (!r.teacher_ids.empty()) object["teacher"] = r.teacher_ids;
      out.push_back(std::move(object));
    }
  }
  return out;
}

template <class Container>
void records_from_json(const nlohmann::json& in, Container& out) {
  out.clear();
  for (const auto& entry : in) {
    EncodedRecord r;
    const nlohmann::json& item = entry.is_object() ? entry["record"] : entry;
    if (entry.is_object() && entry.contains("more_labels")) {
      r.more_labels = entry["more_labels"].get<std::vector<int64_t>>();
    }
    if (entry.is_object() && entry.contains("teacher")) {
      r.teacher_ids = entry["teacher"].get<std::vector<int64_t>>();
    }
    r.label = item[0].get<int64_t>();
    for (size_t i = 1; i < item.size(); ++i) r.ids.push_back(item[i].get<int64_t>());
    out.push_back(std::move(r));
  }
}

}  // namespace

struct ShardedStream::Worker {
  std::thread thread;
  std::mutex mutex;
  std::condition_variable changed;
  // Records travel in chunks: one lock and wake-up per record cost more than reading
  // and tokenizing a short line (measured: 2.5x slower than the bare readers).
  std::deque<std::vector<EncodedRecord>> queue;
  size_t queued = 0;                 // records in `queue`
  std::vector<EncodedRecord> ready;  // the consumer's current chunk (consumer only)
  size_t ready_pos = 0;
  bool finished = false;  // the reader passed its last piece
  bool stop = false;
  std::exception_ptr error;
  ReadPosition consumed;  // just past the last record the consumer took
  bool done = false;      // the consumer saw it finished and empty
  uint64_t skipped = 0;
};

ShardedStream::ShardedStream(std::vector<std::string> files, StreamOptions options,
                             const TextEncoder& encoder, const LabelSet& labels,
                             const TextEncoder* teacher)
    : shards_(describe_shards(files)),
      options_(std::move(options)),
      encoder_(encoder),
      teacher_(teacher),
      labels_(labels),
      buffer_(static_cast<size_t>(std::max<int64_t>(options_.shuffle_buffer, 1))) {
  if (options_.workers < 1) throw Error("data.workers: The number of workers must be >= 1.");
  if (options_.world_size < 1 || options_.rank < 0 || options_.rank >= options_.world_size) {
    throw Error(fmt::format("rank {} is outside a world of {} processes", options_.rank,
                            options_.world_size));
  }
}

ShardedStream::~ShardedStream() { stop_workers(); }

void ShardedStream::stop_workers() {
  for (auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lock(w->mutex);
      w->stop = true;
    }
    w->changed.notify_all();
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  workers_.clear();
}

// `from` and `done` hold each reader's saved position, or are empty at an epoch's start.
void ShardedStream::start_workers(const std::vector<ReadPosition>& from,
                                  const std::vector<bool>& done) {
  stop_workers();
  const bool splittable = options_.format.format != FileFormat::csv;
  const auto all = partition_shards(
      shards_, static_cast<size_t>(options_.world_size * options_.workers), splittable,
      options_.seed ^ options_.order_salt, epoch_, options_.shuffle_shards);
  plan_.assign(all.begin() + options_.rank * options_.workers,
               all.begin() + (options_.rank + 1) * options_.workers);
  for (size_t k = 0; k < plan_.size(); ++k) {
    auto w = std::make_unique<Worker>();
    // No saved positions: each reader starts at its first piece.
    w->consumed =
        from.empty() ? ReadPosition{0, plan_[k].empty() ? 0 : plan_[k][0].begin} : from[k];
    w->done = !done.empty() && done[k];
    Worker* worker = w.get();
    if (!worker->done) {
      w->thread = std::thread([this, worker, k, epoch = epoch_] {
        std::vector<EncodedRecord> chunk;
        try {
          RecordReader reader(plan_[k], options_.format, options_.label_names);
          reader.seek(worker->consumed);
          reader.keep_share(options_.thread_share.count, options_.thread_share.index);
          TextEncoder encoder = encoder_;  // each thread its own token buffers
          std::optional<TextEncoder> teacher;
          if (teacher_ != nullptr) teacher.emplace(*teacher_);
          const uint64_t threshold = valid_threshold(options_.valid_split);
          Example example;
          // Encoded here, then copied to the record at its exact size: grown in place, a
          // bag's ids kept up to 3x their size in capacity, and the shuffle buffer holds
          // data.shuffle_buffer records (20NG, 11k long posts: about 100 MB of slack).
          std::vector<int64_t> ids;
          // Hands the chunk to the consumer; false when the stream is stopping.
          auto hand_over = [&] {
            std::unique_lock<std::mutex> lock(worker->mutex);
            worker->changed.wait(lock, [&] {
              return worker->stop ||
                     static_cast<int64_t>(worker->queued) < std::max<int64_t>(options_.prefetch, 1);
            });
            if (worker->stop) return false;
            worker->queued += chunk.size();
            worker->queue.push_back(std::move(chunk));
            worker->skipped = reader.skipped();
            worker->changed.notify_all();
            chunk.clear();
            return true;
          };
          while (reader.next(example)) {
            if (!in_part(example.text, options_.part, threshold, options_.seed, options_.folds)) {
              continue;
            }
            EncodedRecord record;
            if (options_.unlabeled) {
              record.label = -1;
            } else {
              check_label_count(example.labels, options_.multi_label,
                                [&] { return reader.location(example); });
            }
            for (size_t i = 0; !options_.unlabeled && i < example.labels.size(); ++i) {
              const int64_t id = labels_.id(example.labels[i]);
              if (id < 0) {
                throw Error(
                    fmt::format("{}: label '{}' is not one of the model's labels ({})",
                                reader.location(example), printable(example.labels[i]),
                                printable(fmt::format("{}", fmt::join(labels_.names(), ", ")))));
              }
              if (i == 0) {
                record.label = id;
              } else {
                record.more_labels.push_back(id);
              }
            }
            record.after = reader.position();
            if (options_.augment.enabled()) {
              const uint64_t seed = augment_seed(options_.seed ^ options_.order_salt, epoch,
                                                 record_hash(example.text, options_.seed),
                                                 record.after.piece, record.after.offset);
              example.text = augment_text(example.text, options_.augment, seed);
            }
            encoder.encode(example.text, ids);
            record.ids.assign(ids.begin(), ids.end());
            if (teacher) teacher->encode(example.text, record.teacher_ids);
            if (options_.keep_text) record.text = std::move(example.text);
            chunk.push_back(std::move(record));
            if (chunk.size() >= kChunkRecords && !hand_over()) return;
          }
          if (!chunk.empty() && !hand_over()) return;
          std::lock_guard<std::mutex> lock(worker->mutex);
          worker->skipped = reader.skipped();
        } catch (...) {
          // Records read before the error still come first, as without chunks.
          std::lock_guard<std::mutex> lock(worker->mutex);
          if (!chunk.empty()) {
            worker->queued += chunk.size();
            worker->queue.push_back(std::move(chunk));
          }
          worker->error = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(worker->mutex);
        worker->finished = true;
        worker->changed.notify_all();
      });
    }
    workers_.push_back(std::move(w));
  }
}

void ShardedStream::start_epoch(uint64_t epoch) {
  if (epoch_ != 0) check_unchanged(shards_, fmt::format("before epoch {}", epoch));
  epoch_ = epoch;
  end_checked_ = false;
  turn_ = 0;
  window_.clear();
  input_done_ = false;
  buffer_.reset((options_.seed ^ options_.order_salt) * 1000003ULL + epoch);
  start_workers({}, {});
}

bool ShardedStream::take_round_robin(EncodedRecord& record) {
  for (size_t tried = 0; tried < workers_.size();) {
    Worker& w = *workers_[turn_];
    if (w.done) {
      turn_ = (turn_ + 1) % workers_.size();
      ++tried;
      continue;
    }
    if (w.ready_pos == w.ready.size()) {
      std::unique_lock<std::mutex> lock(w.mutex);
      w.changed.wait(lock, [&] { return !w.queue.empty() || w.finished; });
      if (!w.queue.empty()) {
        w.ready = std::move(w.queue.front());
        w.ready_pos = 0;
        w.queue.pop_front();
        w.queued -= w.ready.size();
        w.changed.notify_all();
      }
    }
    if (w.ready_pos < w.ready.size()) {
      record = std::move(w.ready[w.ready_pos++]);
      w.consumed = record.after;  // read only by this thread (save_state) from here on
      turn_ = (turn_ + 1) % workers_.size();
      return true;
    }
    std::unique_lock<std::mutex> lock(w.mutex);
    if (w.error) {
      auto error = w.error;
      w.error = nullptr;
      std::rethrow_exception(error);
    }
    w.done = true;
    tried = 0;
  }
  if (!end_checked_) {
    end_checked_ = true;
    check_unchanged(shards_, fmt::format("during epoch {}", epoch_));
  }
  return false;
}

bool ShardedStream::next_record(EncodedRecord& record) {
  if (options_.shuffle_buffer <= 1) return take_round_robin(record);
  while (!input_done_ && !buffer_.full()) {
    EncodedRecord fresh;
    if (!take_round_robin(fresh)) {
      input_done_ = true;
      break;
    }
    buffer_.push(std::move(fresh));
  }
  if (buffer_.empty()) return false;
  buffer_.pop(record);
  return true;
}

// Tops the window up to one batch (or, with bucketing, refills it when empty with
// bucket_window batches' worth sorted by length, in batch-sized runs in random order).
bool ShardedStream::fill_window() {
  const bool bucketing = options_.bucket_window > 1;
  if (bucketing && !window_.empty()) return true;
  const auto target =
      static_cast<size_t>(options_.batch_size * (bucketing ? options_.bucket_window : 1));
  EncodedRecord record;
  while (window_.size() < target && next_record(record)) window_.push_back(std::move(record));
  if (bucketing && !window_.empty()) {
    std::vector<EncodedRecord> sorted(std::make_move_iterator(window_.begin()),
                                      std::make_move_iterator(window_.end()));
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.ids.size() < b.ids.size(); });
    std::vector<size_t> runs;
    for (size_t i = 0; i < sorted.size(); i += static_cast<size_t>(options_.batch_size))
      runs.push_back(i);
    std::shuffle(runs.begin(), runs.end(), buffer_.rng());
    window_.clear();
    for (size_t start : runs) {
      const size_t end = std::min(sorted.size(), start + static_cast<size_t>(options_.batch_size));
      for (size_t i = start; i < end; ++i) window_.push_back(std::move(sorted[i]));
    }
  }
  return !window_.empty();
}

void ShardedStream::cut_batch(std::deque<EncodedRecord>& source, RawBatch& batch) {
  size_t longest = 0;
  while (!source.empty() && batch.size() < options_.batch_size) {
    EncodedRecord& r = source.front();
    const size_t longer = std::max(longest, r.ids.size());
    if (options_.max_tokens > 0 && batch.size() > 0 &&
        static_cast<int64_t>(longer) * (batch.size() + 1) > options_.max_tokens) {
      break;
    }
    longest = longer;
    batch.add(r.ids, r.label);
    if (options_.multi_label) batch.add_label_list(r.label, r.more_labels);
    if (teacher_ != nullptr) batch.add_teacher_ids(r.teacher_ids);
    if (options_.keep_text) batch.texts.push_back(std::move(r.text));
    source.pop_front();
  }
}

bool ShardedStream::next(RawBatch& batch) {
  batch.clear();
  if (!fill_window()) return false;
  cut_batch(window_, batch);
  return batch.size() > 0;
}

uint64_t ShardedStream::skipped() const {
  uint64_t total = 0;
  for (const auto& w : workers_) {
    std::lock_guard<std::mutex> lock(w->mutex);
    total += w->skipped;
  }
  return total;
}

std::string ShardedStream::save_state() const {
  nlohmann::json state = {{"version", kStateVersion},
                          {"epoch", epoch_},
                          {"turn", turn_},
                          {"input_done", input_done_},
                          {"workers_per_rank", options_.workers},
                          {"world_size", options_.world_size}};
  std::ostringstream rng;
  rng << buffer_.rng();
  state["rng"] = rng.str();
  for (const auto& s : shards_) {
    state["shards"].push_back(
        {{"path", absolute_path(s.path)}, {"bytes", s.bytes}, {"mtime_ns", s.mtime_ns}});
  }
  for (const auto& w : workers_) {
    std::lock_guard<std::mutex> lock(w->mutex);
    state["readers"].push_back(
        {{"piece", w->consumed.piece}, {"offset", w->consumed.offset}, {"done", w->done}});
  }
  state["buffer"] = records_json(buffer_.items());
  state["window"] = records_json(std::vector<EncodedRecord>(window_.begin(), window_.end()));
  const auto bytes = nlohmann::json::to_cbor(state);
  return std::string(bytes.begin(), bytes.end());
}

void ShardedStream::restore_state(const std::string& bytes) {
  const auto state = nlohmann::json::from_cbor(bytes, true, false);
  if (state.is_discarded() || state.value("version", 0) != kStateVersion) {
    throw Error("the saved data position is unreadable or from another version");
  }
  if (state["workers_per_rank"].get<int64_t>() != options_.workers ||
      state["world_size"].get<int64_t>() != options_.world_size) {
    throw Error(fmt::format(
        "the checkpoint was saved with {} worker(s) x {} process(es); resuming needs the same "
        "(data.workers is {}, world size {})",
        state["workers_per_rank"].get<int64_t>(), state["world_size"].get<int64_t>(),
        options_.workers, options_.world_size));
  }
  std::vector<ShardInfo> then;
  for (const auto& s : state["shards"]) {
    then.push_back({s["path"].get<std::string>(), s["bytes"].get<uint64_t>(), false,
                    s["mtime_ns"].get<int64_t>()});
  }
  for (const auto& s : then) {
    const std::string change = shard_change(s, shards_);
    if (!change.empty())
      throw Error(change + " since the checkpoint; cannot resume on changed data");
  }
  check_unchanged(then, "since the checkpoint; cannot resume");
  epoch_ = state["epoch"].get<uint64_t>();
  turn_ = state["turn"].get<size_t>();
  input_done_ = state["input_done"].get<bool>();
  std::istringstream rng(state["rng"].get<std::string>());
  std::vector<EncodedRecord> buffered;
  records_from_json(state["buffer"], buffered);
  buffer_.clear();
  for (auto& r : buffered) buffer_.push(std::move(r));
  rng >> buffer_.rng();
  records_from_json(state["window"], window_);
  std::vector<ReadPosition> from;
  std::vector<bool> done;
  for (const auto& r : state["readers"]) {
    from.push_back({r["piece"].get<uint64_t>(), r["offset"].get<uint64_t>()});
    done.push_back(r["done"].get<bool>());
  }
  start_workers(from, done);
}

}  // namespace sift
