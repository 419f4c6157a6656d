// Micro and pipeline benchmarks of the Torch-free data path (Google Benchmark):
// reading lines (plain, zstd), parsing records (fastText, TSV, CSV), word tokenizing,
// vocabulary counting, bag encoding with hashed bigrams, SentencePiece encoding, and the
// whole read + parse + tokenize + batch pipeline (ShardedStream) with 1 and 2 workers.
//
// Data (real text unless told otherwise):
//   $SIFT_BENCH_SHARED   folder of the public data sets (default: data/ of the source
//                        tree: tools/get_data.sh 20ng ag_news); 20ng/20ng_train.tsv and
//                        ag_news/test.csv are used.
//                        20 Newsgroups is also converted to fastText lines in a temporary
//                        folder (removed at exit), plus a .zst copy of that file.
//   $SIFT_BENCH_SHARDS   files for the pipeline benchmarks (BM_ShardedStream, BM_Driver):
//                        paths, globs, folders or @list, ':'-separated, fastText format.
//                        Default: the 20NG fastText file cut into 4 shards.
//   $SIFT_BENCH_SPM_MODEL a SentencePiece .model; default: one trained (unigram, 8000
//                        pieces) on the first 20,000 20NG texts in the temporary folder.
//   $SIFT_BENCH_TEXT_MB  MB of parsed text for the in-memory benchmarks (default 8).
//
// Every benchmark reports bytes/s (text bytes) and items/s (lines, records or texts);
// tokenizing ones add a tokens/s counter. The pipeline benchmarks process the whole
// shard set once per iteration and use real time. --benchmark_min_time defaults to 0.1.
//
//   build/sift-data-bench                                   # everything, 20NG text
//   SIFT_BENCH_SHARDS=/tmp/corpus build/sift-data-bench --benchmark_format=json
//       --benchmark_filter='ShardedStream|Driver'     (one command line)
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/keep_freed_memory.h"
#include "datasets/batch.h"
#include "datasets/example.h"
#include "datasets/labels.h"
#include "datasets/line_reader.h"
#include "datasets/partition.h"
#include "datasets/paths.h"
#include "datasets/record_parser.h"
#include "datasets/record_reader.h"
#include "datasets/sentencepiece.h"
#include "datasets/sharded_stream.h"
#include "datasets/text_encoder.h"
#include "datasets/tokenizer.h"
#include "datasets/vocab.h"

namespace fs = std::filesystem;

namespace {

using sift::Example;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::vector<std::string> split_colon(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

uint64_t file_bytes(const std::vector<std::string>& files) {
  uint64_t total = 0;
  for (const auto& f : files) total += fs::file_size(f);
  return total;
}

sift::TextFormat fasttext_format() {
  sift::TextFormat f;
  f.format = sift::FileFormat::fasttext;
  return f;
}

sift::TextFormat tsv_20ng_format() {
  sift::TextFormat f;
  f.format = sift::FileFormat::tsv;
  f.text_columns = {"1"};
  f.label_column = "0";
  f.unescape = true;
  return f;
}

sift::TextFormat csv_ag_format() {
  sift::TextFormat f;
  f.format = sift::FileFormat::csv;
  f.text_columns = {"1", "2"};
  f.label_column = "0";
  return f;
}

// Everything the benchmarks read, prepared once on first use.
class Data {
 public:
  static Data& get() {
    static Data data;
    return data;
  }

  ~Data() {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
  }

  std::string error;  // why the data could not be prepared ("" if it could)

  std::string tsv_path, csv_path, fasttext_path, zst_path;
  uint64_t fasttext_bytes = 0;
  std::vector<std::string> texts;                 // parsed 20NG texts, TEXT_MB worth
  uint64_t text_bytes = 0;
  std::vector<std::vector<std::string>> tokens;   // texts, word-tokenized
  uint64_t token_count = 0;

  // The SentencePiece model (lazily; spm_error says why not).
  std::shared_ptr<const sift::SentencePieceModel> spm() {
    std::call_once(spm_once_, [this] { load_spm(); });
    return spm_;
  }
  std::string spm_error;

  // The pipeline's shard files, their vocabulary and labels (lazily: one counting pass).
  struct Shards {
    std::vector<std::string> files;
    uint64_t bytes = 0;
    uint64_t records = 0;
    std::shared_ptr<const sift::Vocab> vocab;
    sift::LabelSet labels;
    std::string error;
  };
  const Shards& shards() {
    std::call_once(shards_once_, [this] { load_shards(); });
    return shards_;
  }

 private:
  Data() {
    try {
      prepare();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }

  void prepare() {
    const std::string shared = env_or("SIFT_BENCH_SHARED", SIFT_DATA_DIR);
    tsv_path = shared + "/20ng/20ng_train.tsv";
    csv_path = shared + "/ag_news/test.csv";
    for (const auto& p : {tsv_path, csv_path}) {
      if (!fs::exists(p)) throw std::runtime_error("missing data file " + p +
                                                   "; fetch it with tools/get_data.sh 20ng ag_news");
    }
    char tmpl[] = "/tmp/sift-data-bench-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    tmp_ = tmpl;

    // 20NG as fastText lines: "__label__GROUP text" (escapes undone, one line each).
    fasttext_path = tmp_ + "/20ng.txt";
    std::string all;
    {
      sift::RecordReader reader({tsv_path}, tsv_20ng_format());
      Example ex;
      const uint64_t text_limit =
          static_cast<uint64_t>(std::stod(env_or("SIFT_BENCH_TEXT_MB", "8")) * 1e6);
      while (reader.next(ex)) {
        for (char& c : ex.text) {
          if (c == '\n' || c == '\r' || c == '\t') c = ' ';
        }
        all += "__label__";
        all += ex.labels.at(0);
        all += ' ';
        all += ex.text;
        all += '\n';
        if (text_bytes < text_limit) {
          text_bytes += ex.text.size();
          texts.push_back(std::move(ex.text));
        }
      }
    }
    std::ofstream(fasttext_path, std::ios::binary).write(all.data(), all.size());
    fasttext_bytes = all.size();

    // The same file, zstd level 3 (sift-gen-corpus's level).
    zst_path = fasttext_path + ".zst";
    std::string packed(ZSTD_compressBound(all.size()), '\0');
    size_t n = ZSTD_compress(packed.data(), packed.size(), all.data(), all.size(), 3);
    if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
    std::ofstream(zst_path, std::ios::binary).write(packed.data(), static_cast<std::streamsize>(n));

    sift::WordTokenizer tokenizer;
    tokens.resize(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      tokenizer.tokenize(texts[i], tokens[i]);
      token_count += tokens[i].size();
    }
  }

  void load_spm() {
    try {
      if (!sift::sentencepiece_supported()) {
        spm_error = "SentencePiece is not supported in this build (sanitizer)";
        return;
      }
      std::string model = env_or("SIFT_BENCH_SPM_MODEL", "");
      if (model.empty()) {
        if (!error.empty()) throw std::runtime_error(error);
        const std::string input = tmp_ + "/spm_input.txt";
        {
          std::ofstream out(input, std::ios::binary);
          for (size_t i = 0; i < texts.size() && i < 20000; ++i) out << texts[i] << '\n';
        }
        sift::train_sentencepiece(input, tmp_ + "/spm", 8000, "unigram",
                                  {{"num_threads", "2"}, {"input_sentence_size", "20000"}});
        model = tmp_ + "/spm.model";
      }
      spm_ = sift::SentencePieceModel::open(model);
    } catch (const std::exception& e) {
      spm_error = e.what();
    }
  }

  void load_shards() {
    try {
      std::string spec = env_or("SIFT_BENCH_SHARDS", "");
      if (spec.empty()) {
        if (!error.empty()) throw std::runtime_error(error);
        // The 20NG fastText file cut into 4 shards at line boundaries.
        std::ifstream in(fasttext_path, std::ios::binary);
        std::string line;
        const uint64_t per = fasttext_bytes / 4 + 1;
        for (int s = 0; s < 4; ++s) {
          std::string path = fmt::format("{}/shard-{}.txt", tmp_, s);
          std::ofstream out(path, std::ios::binary);
          uint64_t written = 0;
          while (written < per && std::getline(in, line)) {
            out << line << '\n';
            written += line.size() + 1;
          }
          shards_.files.push_back(path);
        }
      } else {
        shards_.files = sift::expand_paths(split_colon(spec), "SIFT_BENCH_SHARDS");
      }
      shards_.bytes = file_bytes(shards_.files);
      // The vocabulary pass `sift train` makes (not timed here).
      sift::RecordReader reader(shards_.files, fasttext_format());
      sift::WordTokenizer tokenizer;
      sift::VocabBuilder builder;
      std::vector<std::string> words;
      Example ex;
      while (reader.next(ex)) {
        ++shards_.records;
        tokenizer.tokenize(ex.text, words);
        builder.add(words);
        for (const auto& l : ex.labels) shards_.labels.add(l);
      }
      shards_.labels.sort();
      shards_.vocab = std::make_shared<sift::Vocab>(builder.build(1, 0));
    } catch (const std::exception& e) {
      shards_.error = e.what();
    }
  }

  std::string tmp_;
  std::once_flag spm_once_, shards_once_;
  std::shared_ptr<const sift::SentencePieceModel> spm_;
  Shards shards_;
};

bool data_ok(benchmark::State& state) {
  const Data& d = Data::get();
  if (!d.error.empty()) {
    state.SkipWithError(d.error.c_str());
    return false;
  }
  return true;
}

// Physical lines (or CSV records, which may span lines) of a file, in memory.
std::vector<std::string> read_records(const std::string& path, bool csv) {
  std::vector<std::string> out;
  sift::LineReader reader(path);
  std::string line;
  bool open_quote = false;
  while (reader.next(line)) {
    if (csv && open_quote) {
      out.back() += '\n';
      out.back() += line;
    } else {
      out.push_back(line);
    }
    if (csv) open_quote = sift::RecordParser::csv_needs_more(out.back());
  }
  return out;
}

// ---- reading ------------------------------------------------------------------------

void BM_ReadLines(benchmark::State& state) {
  if (!data_ok(state)) return;
  const Data& d = Data::get();
  const std::string& path = state.range(0) == 0 ? d.fasttext_path : d.zst_path;
  state.SetLabel(state.range(0) == 0 ? "plain" : "zst");
  uint64_t lines = 0;
  std::string line;
  for (auto _ : state) {
    sift::LineReader reader(path);
    while (reader.next(line)) ++lines;
    benchmark::DoNotOptimize(line.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * d.fasttext_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(lines));
}
BENCHMARK(BM_ReadLines)->ArgName("zst")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// ---- parsing ------------------------------------------------------------------------

void BM_Parse(benchmark::State& state) {
  if (!data_ok(state)) return;
  const Data& d = Data::get();
  std::string path;
  sift::TextFormat format;
  switch (state.range(0)) {
    case 0: path = d.fasttext_path; format = fasttext_format(); state.SetLabel("fasttext 20ng"); break;
    case 1: path = d.tsv_path; format = tsv_20ng_format(); state.SetLabel("tsv 20ng unescape"); break;
    default: path = d.csv_path; format = csv_ag_format(); state.SetLabel("csv ag_news test"); break;
  }
  const std::vector<std::string> records = read_records(path, format.format == sift::FileFormat::csv);
  uint64_t bytes = 0;
  for (const auto& r : records) bytes += r.size() + 1;
  sift::RecordParser parser(format);
  Example ex;
  uint64_t bad = 0;
  for (auto _ : state) {
    for (const auto& r : records) bad += !parser.parse(r, ex).empty();
    benchmark::DoNotOptimize(ex.text.data());
  }
  if (bad != 0) state.SkipWithError("malformed records");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records.size()));
}
BENCHMARK(BM_Parse)->ArgName("format")->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

// ---- tokenizing, counting, encoding -------------------------------------------------

void set_text_counters(benchmark::State& state, uint64_t tokens_per_pass) {
  const Data& d = Data::get();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * d.text_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * d.texts.size()));
  state.counters["tokens/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * tokens_per_pass), benchmark::Counter::kIsRate);
}

void BM_WordTokenize(benchmark::State& state) {
  if (!data_ok(state)) return;
  const Data& d = Data::get();
  sift::WordTokenizerOptions o;
  o.lowercase = o.split_punctuation = state.range(0) != 0;
  o.nfkc = state.range(0) == 2;  // tokenizer.normalize: nfkc
  sift::WordTokenizer tokenizer(o);
  std::vector<std::string> out;
  uint64_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const auto& t : d.texts) {
      tokenizer.tokenize(t, out);
      tokens += out.size();
    }
    benchmark::DoNotOptimize(out.data());
  }
  set_text_counters(state, tokens);
}
BENCHMARK(BM_WordTokenize)->ArgName("lower_punct")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// Non-ASCII text (Romanian, Vietnamese, Greek, Armenian, Arabic, German, Russian, emoji):
// the utf8proc path of the word tokenizer; arg 1 adds NFKC.
void BM_WordTokenizeMultilingual(benchmark::State& state) {
  const std::vector<std::string> samples = {
      "ȘTIRI din România: „Țara” are 5€ și încă o știre importantă pentru București.",
      "VIỆT NAM — Đà Nẵng là thành phố lớn; người dân nói tiếng Việt rất nhanh.",
      "ΟΔΟΣ οδός: η Αθήνα είναι η πρωτεύουσα της Ελλάδας, καλημέρα σας!",
      "ՀԱՅԱՍՏԱՆ, Երևան։ «Բարև» ասաց մարդը և գնաց տուն։",
      "مرحبا، كيف حالك؟ السلام عليكم ورحمة الله وبركاته.",
      "Straße, GRÜẞE und “Anführungszeichen” über Maß 👍🏽 ❤️ sehr gut!",
      "Привет, как дела? Это тестовая строка на русском языке.",
  };
  std::vector<std::string> texts;
  size_t bytes = 0;
  for (int i = 0; i < 2000; ++i) {
    texts.push_back(samples[static_cast<size_t>(i) % samples.size()]);
    bytes += texts.back().size();
  }
  sift::WordTokenizerOptions o;
  o.nfkc = state.range(0) != 0;
  sift::WordTokenizer tokenizer(o);
  std::vector<std::string> out;
  uint64_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const auto& t : texts) {
      tokenizer.tokenize(t, out);
      tokens += out.size();
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["tokens/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WordTokenizeMultilingual)->ArgName("nfkc")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_VocabCount(benchmark::State& state) {
  if (!data_ok(state)) return;
  const Data& d = Data::get();
  size_t distinct = 0;
  uint64_t prunings = 0;
  for (auto _ : state) {
    sift::VocabBuilder builder(static_cast<size_t>(state.range(0)));
    for (const auto& t : d.tokens) builder.add(t);
    distinct = builder.distinct();
    prunings = builder.prunings();
  }
  set_text_counters(state, d.token_count);
  state.counters["distinct"] = static_cast<double>(distinct);
  state.counters["prunings"] = static_cast<double>(prunings);
}
BENCHMARK(BM_VocabCount)->ArgName("count_limit")->Arg(5000000)->Arg(20000)->Unit(benchmark::kMillisecond);

void BM_BagEncode(benchmark::State& state) {
  if (!data_ok(state)) return;
  const Data& d = Data::get();
  sift::VocabBuilder builder;
  for (const auto& t : d.tokens) builder.add(t);
  const sift::Vocab vocab = builder.build(1, 0);
  const int ngrams = static_cast<int>(state.range(0));
  sift::BagEncoder encoder(vocab, ngrams, ngrams > 1 ? 2000000 : 0);
  std::vector<int64_t> ids;
  uint64_t total_ids = 0;
  for (auto _ : state) {
    for (const auto& t : d.tokens) {
      encoder.encode(t, ids);
      total_ids += ids.size();
    }
    benchmark::DoNotOptimize(ids.data());
  }
  set_text_counters(state, d.token_count);
  state.counters["ids/s"] = benchmark::Counter(static_cast<double>(total_ids), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BagEncode)->ArgName("ngrams")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// Tokenize + bag-encode from raw text, as the pipeline's workers do (TextEncoder).
void BM_TextEncoder(benchmark::State& state) {
  if (!data_ok(state)) return;
  const Data& d = Data::get();
  sift::VocabBuilder builder;
  for (const auto& t : d.tokens) builder.add(t);
  auto vocab = std::make_shared<sift::Vocab>(builder.build(1, 0));
  sift::TextEncoderOptions o;
  o.ngrams = static_cast<int>(state.range(0));
  o.buckets = o.ngrams > 1 ? 2000000 : 0;
  sift::TextEncoder encoder(vocab, o);
  std::vector<int64_t> ids;
  for (auto _ : state) {
    for (const auto& t : d.texts) encoder.encode(t, ids);
    benchmark::DoNotOptimize(ids.data());
  }
  set_text_counters(state, d.token_count);
}
BENCHMARK(BM_TextEncoder)->ArgName("ngrams")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_SentencePieceEncode(benchmark::State& state) {
  if (!data_ok(state)) return;
  Data& d = Data::get();
  auto spm = d.spm();
  if (!spm) {
    state.SkipWithError(("SentencePiece unavailable: " + d.spm_error).c_str());
    return;
  }
  std::vector<int64_t> ids;
  uint64_t pieces = 0;
  for (auto _ : state) {
    pieces = 0;
    for (const auto& t : d.texts) {
      spm->encode(t, ids);
      pieces += ids.size();
    }
    benchmark::DoNotOptimize(ids.data());
  }
  set_text_counters(state, d.token_count);
  state.counters["pieces/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * pieces), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SentencePieceEncode)->Unit(benchmark::kMillisecond);

// ---- the pipeline -------------------------------------------------------------------

enum Tokenizer : int64_t { kWord = 0, kWordBigrams = 1, kSentencePiece = 2 };

const char* tokenizer_name(int64_t t) {
  return t == kWord ? "word" : t == kWordBigrams ? "word+bigrams" : "sentencepiece";
}

// A TextEncoder for the tokenizer, or nullptr with a reason in `why`.
std::unique_ptr<sift::TextEncoder> make_encoder(int64_t tokenizer, std::string& why) {
  Data& d = Data::get();
  const auto& shards = d.shards();
  sift::TextEncoderOptions o;
  o.ngrams = tokenizer == kWordBigrams ? 2 : 1;
  o.buckets = tokenizer == kWordBigrams ? 2000000 : 0;
  if (tokenizer != kSentencePiece) return std::make_unique<sift::TextEncoder>(shards.vocab, o);
  // SentencePiece inside TextEncoder is newer than this benchmark: use it when the
  // constructor exists.
  using SpmPtr = std::shared_ptr<const sift::SentencePieceModel>;
  if constexpr (std::is_constructible_v<sift::TextEncoder, std::shared_ptr<const sift::Vocab>,
                                        sift::TextEncoderOptions, SpmPtr>) {
    SpmPtr spm = d.spm();
    if (!spm) {
      why = "SentencePiece unavailable: " + d.spm_error;
      return nullptr;
    }
    return std::make_unique<sift::TextEncoder>(shards.vocab, o, spm);
  } else {
    why = "this TextEncoder has no SentencePiece mode";
    return nullptr;
  }
}

// read + parse + tokenize + encode + shuffle (off) + batch through ShardedStream.
void BM_ShardedStream(benchmark::State& state) {
  Data& d = Data::get();
  const auto& shards = d.shards();
  if (!shards.error.empty()) {
    state.SkipWithError(shards.error.c_str());
    return;
  }
  std::string why;
  auto encoder = make_encoder(state.range(0), why);
  if (!encoder) {
    state.SkipWithError(why.c_str());
    return;
  }
  sift::StreamOptions o;
  o.format = fasttext_format();
  o.workers = state.range(1);
  o.prefetch = 1024;
  o.shuffle_buffer = state.range(2);
  o.batch_size = 32;
  state.SetLabel(fmt::format("{} shuffle {}", tokenizer_name(state.range(0)), state.range(2)));
  sift::ShardedStream stream(shards.files, o, *encoder, shards.labels);
  sift::RawBatch batch;
  uint64_t records = 0, ids = 0;
  uint64_t epoch = 0;
  for (auto _ : state) {
    stream.start_epoch(++epoch);
    while (stream.next(batch)) {
      records += static_cast<uint64_t>(batch.size());
      ids += batch.ids.size();
    }
  }
  if (records != state.iterations() * shards.records) {
    state.SkipWithError(fmt::format("read {} records, expected {}", records,
                                    state.iterations() * shards.records).c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * shards.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(records));
  state.counters["ids/s"] = benchmark::Counter(static_cast<double>(ids), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ShardedStream)
    ->ArgNames({"tok", "workers", "shuffle"})
    ->ArgsProduct({{kWord, kWordBigrams, kSentencePiece}, {1, 2}, {0}})
    ->Args({kWordBigrams, 2, 10000})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same work without ShardedStream's hand-off and batching: W threads, each reading
// its byte-range pieces with a RecordReader and encoding every record. A floor for
// the pipeline's overhead.
void BM_Driver(benchmark::State& state) {
  Data& d = Data::get();
  const auto& shards = d.shards();
  if (!shards.error.empty()) {
    state.SkipWithError(shards.error.c_str());
    return;
  }
  const int64_t tok = state.range(0);
  const size_t workers = static_cast<size_t>(state.range(1));
  std::shared_ptr<const sift::SentencePieceModel> spm;
  std::unique_ptr<sift::TextEncoder> encoder;
  if (tok == kSentencePiece) {
    spm = d.spm();  // the plug-in directly, whatever TextEncoder supports
    if (!spm) {
      state.SkipWithError(("SentencePiece unavailable: " + d.spm_error).c_str());
      return;
    }
  } else {
    std::string why;
    encoder = make_encoder(tok, why);
  }
  state.SetLabel(tokenizer_name(tok));
  const auto info = sift::describe_shards(shards.files);
  const auto plan = sift::partition_shards(info, workers, true, 0, 1, false);
  std::atomic<uint64_t> records{0};
  for (auto _ : state) {
    std::vector<std::thread> threads;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    for (size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        try {
          sift::RecordReader reader(plan[w], fasttext_format());
          std::unique_ptr<sift::TextEncoder> mine;
          if (encoder) mine = std::make_unique<sift::TextEncoder>(*encoder);
          std::vector<int64_t> ids;
          Example ex;
          uint64_t n = 0;
          while (reader.next(ex)) {
            if (mine) {
              mine->encode(ex.text, ids);
            } else {
              spm->encode(ex.text, ids);
            }
            benchmark::DoNotOptimize(ids.data());
            ++n;
          }
          records += n;
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          failure = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        state.SkipWithError(e.what());
        return;
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * shards.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(records.load()));
}
BENCHMARK(BM_Driver)
    ->ArgNames({"tok", "workers"})
    ->ArgsProduct({{kWord, kWordBigrams, kSentencePiece}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  sift::keep_freed_memory();  // the allocator settings `sift` runs with (main.cc)
  // Short by default: every benchmark here runs for 0.1 s or one iteration.
  std::vector<char*> args(argv, argv + argc);
  bool has_min_time = false;
  for (int i = 1; i < argc; ++i) {
    has_min_time |= std::strncmp(argv[i], "--benchmark_min_time", 20) == 0;
  }
  static char min_time[] = "--benchmark_min_time=0.1";
  if (!has_min_time) args.insert(args.begin() + 1, min_time);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
