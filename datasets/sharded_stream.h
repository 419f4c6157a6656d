// The training data pipeline: the shards of a split partitioned among this rank's
// worker threads, which read, parse, filter and encode in parallel; a consumer that
// takes their records round-robin (so the order depends on the seed and the worker
// count, never on thread timing), shuffles them in a bounded buffer, optionally sorts
// windows of them by length, and cuts batches. Its state can be saved between any two
// batches and restored to continue exactly, by seeking, not by replaying the epoch.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "datasets/augment.h"
#include "datasets/batch.h"
#include "datasets/example_stream.h"
#include "datasets/labels.h"
#include "datasets/partition.h"
#include "datasets/shuffle_buffer.h"
#include "datasets/text_encoder.h"
#include "datasets/text_format.h"

namespace sift {

struct StreamOptions {
  TextFormat format;
  std::vector<std::string> label_names;  // for label_mapping index0/index1
  HashPart part = HashPart::all;
  double valid_split = 0.0;
  Folds folds;  // cross-validation
  // The fast path's Hogwild threads (train.fast_path_threads): each thread's stream reads
  // every file and keeps share `index` of `count` of the records, by hash
  // (RecordReader::keep_share), so that each thread sees every part of the files.
  // Contiguous parts of a label-sorted file (MR) gave each thread one label: two threads
  // trained MR to 0.51-0.77 accuracy.
  Folds thread_share;
  uint64_t seed = 0;
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t workers = 1;
  int64_t prefetch = 256;       // records each worker may read ahead
  int64_t shuffle_buffer = 0;   // <= 1: file order
  bool shuffle_shards = false;  // reshuffle shard order each epoch
  int64_t batch_size = 32;
  int64_t max_tokens = 0;     // > 0: cut batches at this many padded tokens
  int64_t bucket_window = 0;  // > 1: sort this many batches' worth by length
  bool multi_label = false;   // records may carry several labels (RawBatch::label_lists)
  bool keep_text = false;     // batches carry their texts too (RawBatch::texts)
  // Distillation's transfer set: records carry the label -1 and no label is looked up
  // (their files may hold none: TextFormat::text_only); the teacher alone scores them.
  bool unlabeled = false;
  // Applied to each text before it is encoded (both encoders see the same augmented
  // text), seeded by the run's seed, the epoch and the record's position, so an epoch
  // reads the same augmented texts however it is cut by saves and resumes.
  AugmentOptions augment;
  // Mixed into the seed of the shard order and the shuffle (not of the hashed split):
  // a second stream over the same files takes an order of its own.
  uint64_t order_salt = 0;
};

// One encoded record and where its reader stands after it.
struct EncodedRecord {
  std::vector<int64_t> ids;
  int64_t label = 0;
  std::vector<int64_t> more_labels;  // multi-label: the ids after the first
  std::vector<int64_t> teacher_ids;  // distillation: the text in the teacher's encoding
  std::string text;                  // StreamOptions::keep_text: the text itself
  ReadPosition after;
};

class ShardedStream {
 public:
  // `teacher` (distillation): a second encoder whose ids each batch also carries
  // (RawBatch::teacher_ids), computed by the workers; it must outlive the stream.
  ShardedStream(std::vector<std::string> files, StreamOptions options, const TextEncoder& encoder,
                const LabelSet& labels, const TextEncoder* teacher = nullptr);
  ~ShardedStream();
  ShardedStream(const ShardedStream&) = delete;
  ShardedStream& operator=(const ShardedStream&) = delete;

  // Starts epoch `epoch` (from 1) at its beginning.
  void start_epoch(uint64_t epoch);
  // Fills the next batch; false at the end of the epoch.
  bool next(RawBatch& batch);
  // The position between two batches, as bytes to store in a checkpoint.
  std::string save_state() const;
  // Continues from save_state()'s bytes; refuses (sift::Error naming the shard) when a
  // shard is missing or changed since.
  void restore_state(const std::string& state);

  uint64_t epoch() const { return epoch_; }
  uint64_t skipped() const;
  const std::vector<ShardInfo>& shards() const { return shards_; }

 private:
  struct Worker;
  void start_workers(const std::vector<ReadPosition>& from, const std::vector<bool>& done);
  void stop_workers();
  bool next_record(EncodedRecord& record);
  bool take_round_robin(EncodedRecord& record);
  bool fill_window();
  void cut_batch(std::deque<EncodedRecord>& source, RawBatch& batch);

  std::vector<ShardInfo> shards_;
  StreamOptions options_;
  const TextEncoder& encoder_;
  const TextEncoder* teacher_;  // null: no teacher encoding
  const LabelSet& labels_;
  uint64_t epoch_ = 0;
  std::vector<std::vector<FilePiece>> plan_;  // this rank's workers' pieces this epoch
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t turn_ = 0;  // the worker whose record the consumer takes next
  // The shuffle buffer; its generator also orders length buckets and is saved with the state.
  ShuffleBuffer<EncodedRecord> buffer_;
  bool input_done_ = false;
  // Whether this epoch's end checked the shards' sizes and times (issue #42: a file cut
  // short in the last epoch ended the run with exit 0 and a smaller validation).
  bool end_checked_ = false;
  std::deque<EncodedRecord> window_;  // records sorted by length, not yet batched
};

}  // namespace sift
