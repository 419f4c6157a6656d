#include "datasets/sharded_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "datasets/partition.h"
#include "datasets/record_reader.h"
#include "datasets/vocab.h"
#include "tests/test_files.h"

namespace sift {
namespace sharded_stream_test {

namespace fs = std::filesystem;

class ShardFixture : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = sift::testing::make_temp_dir("sift_shards"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Line i of the corpus: a label and words that make every line distinct.
  static std::string line(int i) {
    std::string text = "__label__c" + std::to_string(i % 3) + " w" + std::to_string(i);
    for (int k = 0; k < i % 7; ++k) text += " filler" + std::to_string(k);
    return text;
  }

  // Uneven shards: plain, gzip and zstd, holding lines [first, first + count).
  std::string write_shard(const std::string& name, int first, int count, char kind) {
    std::string text;
    for (int i = first; i < first + count; ++i) text += line(i) + "\n";
    const std::string path = dir_ + "/" + name;
    if (kind == 'g') {
      gzFile f = gzopen(path.c_str(), "wb");
      gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
      gzclose(f);
    } else if (kind == 'z') {
      std::string out(ZSTD_compressBound(text.size()), '\0');
      out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
      std::ofstream(path, std::ios::binary) << out;
    } else {
      std::ofstream(path, std::ios::binary) << text;
    }
    return path;
  }

  std::vector<std::string> uneven_shards() {
    return {write_shard("a.txt", 0, 211, 'p'),      write_shard("b.txt", 211, 37, 'p'),
            write_shard("c.txt.gz", 248, 90, 'g'),  write_shard("d.txt", 338, 5, 'p'),
            write_shard("e.txt.zst", 343, 64, 'z'), write_shard("empty.txt", 0, 0, 'p')};
  }
  static constexpr int kLines = 407;

  std::string dir_;
};

TEST_F(ShardFixture, PartitionReadsEveryRecordExactlyOnce) {
  const auto shards = describe_shards(uneven_shards());
  TextFormat format;
  for (int ranks : {1, 2, 3}) {
    for (int workers : {1, 2, 4}) {
      for (uint64_t epoch : {1, 2}) {
        const auto plan = partition_shards(shards, ranks * workers, true, 7, epoch, true);
        std::multiset<std::string> seen;
        for (const auto& pieces : plan) {
          RecordReader reader(pieces, format);
          Example ex;
          while (reader.next(ex)) seen.insert("__label__" + ex.labels[0] + " " + ex.text);
        }
        std::multiset<std::string> expected;
        for (int i = 0; i < kLines; ++i) expected.insert(line(i));
        EXPECT_EQ(seen, expected) << ranks << " ranks x " << workers << " workers";
      }
    }
  }
}

TEST_F(ShardFixture, PartitionBalancesPlainBytesWithinOneLine) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += line(i) + "\n";
  std::ofstream(dir_ + "/big.txt") << text;
  const auto shards = describe_shards({dir_ + "/big.txt"});
  const auto plan = partition_shards(shards, 6, true, 1, 1, false);
  for (const auto& pieces : plan) {
    ASSERT_EQ(pieces.size(), 1u);
    const uint64_t end = pieces[0].end == FilePiece::kToEnd ? text.size() : pieces[0].end;
    EXPECT_NEAR(static_cast<double>(end - pieces[0].begin), text.size() / 6.0, 2.0);
  }
}

class StreamFixture : public ShardFixture {
 protected:
  void SetUp() override {
    ShardFixture::SetUp();
    files_ = uneven_shards();
    auto vocab = std::make_shared<Vocab>();
    for (int i = 0; i < kLines; ++i) vocab->add("w" + std::to_string(i), 1);
    for (int k = 0; k < 7; ++k) vocab->add("filler" + std::to_string(k), 1);
    TextEncoderOptions e;
    e.kind = InputKind::sequence;
    encoder_ = std::make_unique<TextEncoder>(vocab, e);
    labels_ = LabelSet({"c0", "c1", "c2"}, "test");
  }

  StreamOptions options(int64_t workers) const {
    StreamOptions o;
    o.workers = workers;
    o.shuffle_buffer = 50;
    o.shuffle_shards = true;
    o.batch_size = 8;
    o.seed = 3;
    o.prefetch = 4;
    return o;
  }

  static std::string key(const RawBatch& b) {
    std::string k;
    for (auto v : b.ids) k += std::to_string(v) + ",";
    k += "|";
    for (auto v : b.labels) k += std::to_string(v) + ",";
    return k;
  }

  // Epoch 1's records as "label:id id ...", each once for each time it was read.
  std::multiset<std::string> records_of(const StreamOptions& o) const {
    std::multiset<std::string> records;
    ShardedStream s(files_, o, *encoder_, labels_);
    s.start_epoch(1);
    RawBatch b;
    while (s.next(b)) {
      for (int64_t i = 0; i < b.size(); ++i) {
        const auto end = i + 1 < b.size() ? b.offsets[i + 1] : static_cast<int64_t>(b.ids.size());
        std::string k = std::to_string(b.labels[i]) + ":";
        for (auto j = b.offsets[i]; j < end; ++j) k += std::to_string(b.ids[j]) + " ";
        records.insert(k);
      }
    }
    return records;
  }

  // Every batch of epochs 1..2, as text keys.
  std::vector<std::string> run_epochs(ShardedStream& s, uint64_t first_epoch, bool start) {
    std::vector<std::string> keys;
    RawBatch b;
    for (uint64_t epoch = first_epoch; epoch <= 2; ++epoch) {
      if (start || epoch > first_epoch) s.start_epoch(epoch);
      while (s.next(b)) keys.push_back(key(b));
    }
    return keys;
  }

  std::vector<std::string> files_;
  std::unique_ptr<TextEncoder> encoder_;
  LabelSet labels_;
};

TEST_F(StreamFixture, SameSeedAndWorkersGiveTheSameBatches) {
  ShardedStream a(files_, options(2), *encoder_, labels_);
  ShardedStream b(files_, options(2), *encoder_, labels_);
  const auto ka = run_epochs(a, 1, true);
  EXPECT_EQ(ka, run_epochs(b, 1, true));
  size_t records = 0;
  for (const auto& k : ka) records += std::count(k.begin() + k.find('|'), k.end(), ',');
  EXPECT_EQ(records, 2u * kLines);
}

TEST_F(StreamFixture, EpochsAreShuffledDifferently) {
  ShardedStream s(files_, options(2), *encoder_, labels_);
  const auto keys = run_epochs(s, 1, true);
  const size_t half = keys.size() / 2;
  EXPECT_NE(std::vector<std::string>(keys.begin(), keys.begin() + half),
            std::vector<std::string>(keys.begin() + half, keys.end()));
}

TEST_F(StreamFixture, ResumeFromAnyBatchGivesTheSameBatches) {
  ShardedStream reference(files_, options(2), *encoder_, labels_);
  const auto expected = run_epochs(reference, 1, true);
  const size_t per_epoch = expected.size() / 2;
  // Cut points: before the first batch, while the shuffle buffer is still full of the
  // first fill, mid-epoch, while it drains at the end of epoch 1, and in epoch 2.
  for (size_t cut :
       {size_t{0}, size_t{1}, size_t{3}, per_epoch / 2, per_epoch - 2, per_epoch, per_epoch + 5}) {
    ShardedStream first(files_, options(2), *encoder_, labels_);
    std::vector<std::string> got;
    RawBatch b;
    uint64_t epoch = 1;
    first.start_epoch(epoch);
    while (got.size() < cut) {
      if (!first.next(b)) {
        first.start_epoch(++epoch);
        continue;
      }
      got.push_back(key(b));
    }
    const std::string state = first.save_state();
    ShardedStream second(files_, options(2), *encoder_, labels_);
    second.restore_state(state);
    for (uint64_t e = second.epoch(); e <= 2; ++e) {
      if (e > second.epoch()) second.start_epoch(e);
      while (second.next(b)) got.push_back(key(b));
    }
    EXPECT_EQ(got, expected) << "resumed after batch " << cut;
  }
}

// Distillation: a second (teacher) encoder's ids ride with every record, also through
// the shuffle buffer and a saved and restored position.
TEST_F(StreamFixture, TeacherIdsRideWithEveryRecordAndSurviveAResume) {
  TextEncoderOptions bag;  // another encoding of the same texts: a bag with bigram buckets
  bag.ngrams = 2;
  bag.buckets = 1000;
  TextEncoder teacher(std::make_shared<Vocab>(encoder_->vocab()), bag);
  auto keys_with_teacher = [](const RawBatch& b) {
    std::string k = key(b) + "|";
    for (auto v : b.teacher_ids) k += std::to_string(v) + ",";
    k += "|";
    for (auto v : b.teacher_offsets) k += std::to_string(v) + ",";
    return k;
  };
  ShardedStream reference(files_, options(2), *encoder_, labels_, &teacher);
  reference.start_epoch(1);
  std::vector<std::string> expected;
  RawBatch b;
  while (reference.next(b)) {
    ASSERT_EQ(b.teacher_offsets.size(), b.offsets.size());
    for (int64_t i = 0; i < b.size(); ++i) {  // words first, then buckets: more ids
      const size_t end = i + 1 < b.size() ? b.teacher_offsets[i + 1] : b.teacher_ids.size();
      EXPECT_GE(static_cast<int64_t>(end) - b.teacher_offsets[i], b.ids_end(i) - b.offsets[i]);
    }
    expected.push_back(keys_with_teacher(b));
  }
  ShardedStream first(files_, options(2), *encoder_, labels_, &teacher);
  first.start_epoch(1);
  std::vector<std::string> got;
  for (int i = 0; i < 5 && first.next(b); ++i) got.push_back(keys_with_teacher(b));
  ShardedStream second(files_, options(2), *encoder_, labels_, &teacher);
  second.restore_state(first.save_state());
  while (second.next(b)) got.push_back(keys_with_teacher(b));
  EXPECT_EQ(got, expected);
  ShardedStream plain(files_, options(2), *encoder_, labels_);  // no teacher: none carried
  plain.start_epoch(1);
  ASSERT_TRUE(plain.next(b));
  EXPECT_TRUE(b.teacher_ids.empty() && b.teacher_offsets.empty());
}

TEST_F(StreamFixture, RanksTogetherSeeEveryRecordOnce) {
  const std::multiset<std::string> single = records_of(options(1));
  std::multiset<std::string> joint;
  for (int64_t rank = 0; rank < 3; ++rank) {
    auto o = options(2);
    o.rank = rank;
    o.world_size = 3;
    const auto part = records_of(o);
    joint.insert(part.begin(), part.end());
  }
  EXPECT_EQ(single.size(), static_cast<size_t>(kLines));
  EXPECT_EQ(joint, single);
}

// The fast path's Hogwild threads: each reads every file and keeps a share of the
// records by hash, so the shares hold every record once and each share holds records
// from the first file and the last (contiguous parts of a label-sorted file gave each
// thread one label).
TEST_F(StreamFixture, ThreadSharesTogetherSeeEveryRecordOnceFromEveryFile) {
  const std::multiset<std::string> single = records_of(options(1));
  // A record's first word is "w<line>": the first file holds lines 0-210, the last 343-406.
  auto line_of = [&](const std::string& k) {
    const int64_t first_id = std::stol(k.substr(k.find(':') + 1));
    return std::stol(encoder_->vocab().word(first_id).substr(1));
  };
  std::multiset<std::string> joint;
  for (int64_t k = 0; k < 3; ++k) {
    auto o = options(1);
    o.thread_share = {3, k};
    o.order_salt = static_cast<uint64_t>(k);
    const auto share = records_of(o);
    EXPECT_NEAR(static_cast<double>(share.size()), kLines / 3.0, kLines / 6.0) << "share " << k;
    bool early = false, late = false;
    for (const auto& text : share) {
      early |= line_of(text) < 211;
      late |= line_of(text) >= 343;
    }
    EXPECT_TRUE(early && late) << "share " << k << " misses the first or the last lines";
    joint.insert(share.begin(), share.end());
  }
  EXPECT_EQ(single.size(), static_cast<size_t>(kLines));
  EXPECT_EQ(joint, single);
}

TEST_F(StreamFixture, ShuffleBufferAndPrefetchStayBounded) {
  auto o = options(2);
  o.shuffle_buffer = 50;
  o.prefetch = 4;
  ShardedStream s(files_, o, *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  while (s.next(b)) {
    // The saved state holds exactly what the stream keeps in memory between batches.
    const auto state = nlohmann::json::from_cbor(s.save_state());
    EXPECT_LE(state["buffer"].size(), 50u);
    EXPECT_LE(state["window"].size(), 8u);
  }
}

TEST_F(StreamFixture, LongLinesAreTruncatedOrRefusedByOption) {
  const std::string path = dir_ + "/long.txt";
  std::ofstream(path) << "__label__c0 w1 " << std::string(5000, 'x') << "\n__label__c1 w2\n";
  auto o = options(1);
  o.format.max_line_bytes = 100;
  o.shuffle_buffer = 0;
  {
    ShardedStream s({path}, o, *encoder_, labels_);
    s.start_epoch(1);
    RawBatch b;
    EXPECT_THROW(s.next(b), Error);
  }
  o.format.truncate_long_lines = true;
  ShardedStream s({path}, o, *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  ASSERT_TRUE(s.next(b));
  EXPECT_EQ(b.size(), 2);
}

TEST_F(StreamFixture, TokenBudgetBoundsPaddedBatchSize) {
  auto o = options(2);
  o.max_tokens = 20;
  o.batch_size = 100;
  ShardedStream s(files_, o, *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  size_t records = 0;
  while (s.next(b)) {
    size_t longest = 0;
    for (int64_t i = 0; i < b.size(); ++i) {
      const auto end = i + 1 < b.size() ? b.offsets[i + 1] : static_cast<int64_t>(b.ids.size());
      longest = std::max<size_t>(longest, end - b.offsets[i]);
    }
    if (b.size() > 1) {
      EXPECT_LE(longest * b.size(), 20u);
    }
    records += b.size();
  }
  EXPECT_EQ(records, static_cast<size_t>(kLines));
}

TEST_F(StreamFixture, BucketingGroupsSimilarLengths) {
  auto o = options(1);
  o.bucket_window = 8;
  ShardedStream s(files_, o, *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  size_t records = 0, spread = 0, batches = 0;
  while (s.next(b)) {
    size_t lo = SIZE_MAX, hi = 0;
    for (int64_t i = 0; i < b.size(); ++i) {
      const auto end = i + 1 < b.size() ? b.offsets[i + 1] : static_cast<int64_t>(b.ids.size());
      lo = std::min<size_t>(lo, end - b.offsets[i]);
      hi = std::max<size_t>(hi, end - b.offsets[i]);
    }
    spread += hi - lo;
    ++batches;
    records += b.size();
  }
  EXPECT_EQ(records, static_cast<size_t>(kLines));
  EXPECT_LT(static_cast<double>(spread) / batches, 2.0);  // lengths 1..7 unsorted
}

TEST_F(StreamFixture, WorkerErrorReachesTheCallerWithFileAndLine) {
  std::ofstream(dir_ + "/bad.txt") << "__label__c0 fine\n__label__c9 unknown label\n";
  ShardedStream s({dir_ + "/bad.txt"}, options(2), *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  try {
    while (s.next(b)) {
    }
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2: label 'c9'"), std::string::npos) << e.what();
  }
}

TEST_F(StreamFixture, ResumeRefusesChangedShard) {
  ShardedStream s(files_, options(2), *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  s.next(b);
  const std::string state = s.save_state();
  std::ofstream(files_[1], std::ios::app) << "__label__c0 extra\n";
  try {
    ShardedStream t(files_, options(2), *encoder_, labels_);
    t.restore_state(state);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("b.txt changed"), std::string::npos) << e.what();
  }
}

TEST_F(StreamFixture, ShardRemovedBetweenEpochsIsNamed) {
  ShardedStream s(files_, options(2), *encoder_, labels_);
  s.start_epoch(1);
  RawBatch b;
  while (s.next(b)) {
  }
  fs::remove(files_[3]);
  try {
    s.start_epoch(2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("d.txt is missing"), std::string::npos) << e.what();
  }
}

}  // namespace sharded_stream_test
}  // namespace sift
