// sift-gen-corpus: writes a large synthetic, learnable, labelled corpus in fastText
// format ("__label__cK word word ..."), split into shards, deterministic for a seed.
//
// The model of a document: a class c (uniform), a length (discretised log-normal), a
// per-document "topicality" p ~ U(0, 2 * mix); each token is, with probability p, a
// word from class c's Zipf distribution over its own subset of the vocabulary, else a
// word from the shared Zipf background. Class subsets overlap (each class word also
// belongs to a neighbouring class, with a low rank there), short or low-topicality
// documents carry little signal, and an optional label noise flips labels: a
// bag-of-words model learns it well above chance but not perfectly.
//
// Speed: xoshiro256** random numbers, Walker/Vose alias tables (O(1) per draw), words
// pre-rendered into 16-byte slots copied with one fixed-size memcpy. Memory does not
// depend on the number of lines: each shard streams through a 1 MiB buffer.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/splitmix.h"
#include "datasets/shard_writer.h"

namespace sift {
namespace {

// ---------------------------------------------------------------------------------
// Random numbers: fixed algorithms (not std:: distributions, whose output differs
// between standard libraries) so a seed means the same corpus everywhere.

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (auto& word : s_) word = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  // Uniform in [0, n) for n < 2^32 (Lemire's multiply-shift, bias < n / 2^32).
  uint32_t below(uint32_t n) {
    return static_cast<uint32_t>(((next() >> 32) * static_cast<uint64_t>(n)) >> 32);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// ---------------------------------------------------------------------------------
// Walker/Vose alias table: one 64-bit random number per draw, whatever the size.

class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weights) : cells_(weights.size()) {
    const size_t n = weights.size();
    double total = 0;
    for (double w : weights) total += w;
    std::vector<double> scaled(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      set(s, scaled[s], l);
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // Leftovers are 1 up to rounding: they always keep their own index.
    for (uint32_t i : large) set(i, 1.0, i);
    for (uint32_t i : small) set(i, 1.0, i);
  }

  uint32_t sample(uint64_t r) const {
    const uint32_t i = static_cast<uint32_t>(((r >> 32) * cells_.size()) >> 32);
    const Cell& c = cells_[i];
    return static_cast<uint32_t>(r) < c.threshold ? i : c.alias;
  }

 private:
  struct Cell {
    uint32_t threshold;  // keep i when the low 32 random bits are below this
    uint32_t alias;
  };
  void set(uint32_t i, double p, uint32_t alias) {
    const double t = std::min(p, 1.0) * 4294967296.0;
    cells_[i] = {t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t), alias};
  }
  std::vector<Cell> cells_;
};

std::vector<double> zipf_weights(size_t n, double exponent) {
  std::vector<double> w(n);
  for (size_t r = 0; r < n; ++r) w[r] = 1.0 / std::pow(static_cast<double>(r + 1), exponent);
  return w;
}

// ---------------------------------------------------------------------------------
// Vocabulary: word id -> a pronounceable string, unique by construction. Ids are
// grouped by syllable count (frequent, low ids are short, as in real text); within a
// group an id is scrambled by a multiplier coprime to the group size and written in
// mixed radix: k consonant-vowel syllables, then an optional final consonant.

constexpr char kConsonants[] = "bdfghjklmnprstvz";  // 16
constexpr char kVowels[] = "aeiou";                 // 5
constexpr char kFinals[] = "\0nsr";                 // none, n, s, r
constexpr uint64_t kSyllables = 16 * 5;
constexpr size_t kSlot = 16;  // " " + at most 4 syllables + final = 10 bytes, padded

std::string word_text(uint64_t id) {
  uint64_t group = 4 * kSyllables;  // k = 1
  int k = 1;
  while (id >= group) {
    id -= group;
    group *= kSyllables;
    ++k;
  }
  // 7919 is prime and coprime to 80 and 4, hence to every group size (2^a * 5^b).
  uint64_t x = static_cast<uint64_t>((static_cast<unsigned __int128>(id) * 7919) % group);
  std::string word;
  const uint64_t final_index = x % 4;
  x /= 4;
  for (int i = 0; i < k; ++i) {
    word += kConsonants[x % 16];
    x /= 16;
    word += kVowels[x % 5];
    x /= 5;
  }
  if (final_index != 0) word += kFinals[final_index];
  return word;
}

// ---------------------------------------------------------------------------------

struct GenOptions {
  std::string out;
  uint64_t lines = 1000000;
  int shards = 1;
  int classes = 4;
  uint32_t vocab = 50000;
  uint32_t class_words = 0;  // 0: derived from vocab and classes
  double mix = 0.2;
  double noise = 0.0;
  double zipf = 1.0;
  double label_zipf = 0.0;  // 0: classes uniform; > 0: class k drawn with weight 1/(k+1)^s
  double median_length = 20;
  double sigma = 0.75;
  int max_length = 400;
  uint64_t seed = 1;
  uint64_t task_seed = 1;
  bool uneven = false;
  std::string compress;
  int threads = 1;
};

// Everything derived from the options and the seed, shared read-only by all shards.
struct Model {
  std::vector<char> slots;  // word id -> kSlot bytes: ' ', the word, padding
  std::vector<uint8_t> slot_length;
  AliasTable background{std::vector<double>{1.0}};
  std::vector<AliasTable> class_tables;  // index into the class's word list
  std::vector<std::vector<uint32_t>> class_word_ids;
  AliasTable length{std::vector<double>{1.0}};  // index + 1 = tokens
  std::vector<std::string> labels;              // "__label__cK"
  AliasTable label{std::vector<double>{1.0}};   // --label-zipf: P(class)
};

Model build_model(const GenOptions& o) {
  Model m;
  m.slots.assign(static_cast<size_t>(o.vocab) * kSlot, ' ');
  m.slot_length.resize(o.vocab);
  for (uint32_t id = 0; id < o.vocab; ++id) {
    const std::string w = word_text(id);
    std::memcpy(&m.slots[id * kSlot + 1], w.data(), w.size());
    m.slot_length[id] = static_cast<uint8_t>(w.size() + 1);
  }
  m.background = AliasTable(zipf_weights(o.vocab, o.zipf));
  if (o.label_zipf > 0) m.label = AliasTable(zipf_weights(size_t(o.classes), o.label_zipf));

  // The task (which words belong to which class) depends on --task-seed only, so a
  // test set drawn with another --seed has the same classes as the training set.
  // Class words come from below the most frequent (stopword-like) ids, in a seeded
  // order; class c takes a window of class_words starting at c * step, so windows
  // overlap when class_words > step, and shared words rank high in one class and low
  // in the other.
  const uint32_t skip = std::min<uint32_t>(200, o.vocab / 10);
  std::vector<uint32_t> pool;
  for (uint32_t id = skip; id < o.vocab; ++id) pool.push_back(id);
  uint64_t state = o.task_seed ^ 0xC1A55E5ULL;
  for (size_t i = pool.size(); i > 1; --i)  // Fisher-Yates with splitmix
    std::swap(pool[i - 1], pool[splitmix64(state) % i]);
  const size_t step = pool.size() / static_cast<size_t>(o.classes);
  const size_t k = o.class_words != 0 ? std::min<size_t>(o.class_words, pool.size())
                                      : std::max<size_t>(1, step + step / 2);
  for (int c = 0; c < o.classes; ++c) {
    std::vector<uint32_t> ids(k);
    for (size_t j = 0; j < k; ++j) ids[j] = pool[(static_cast<size_t>(c) * step + j) % pool.size()];
    m.class_word_ids.push_back(std::move(ids));
    m.class_tables.emplace_back(zipf_weights(k, o.zipf));
    m.labels.push_back(fmt::format("__label__c{}", c));
  }

  // P(length = n) for a log-normal discretised at n +- 0.5, truncated to [1, max].
  std::vector<double> p(static_cast<size_t>(o.max_length));
  const double mu = std::log(o.median_length);
  auto cdf = [&](double x) {
    return 0.5 * std::erfc(-(std::log(x) - mu) / (o.sigma * std::sqrt(2.0)));
  };
  for (int n = 1; n <= o.max_length; ++n)
    p[static_cast<size_t>(n - 1)] = cdf(n + 0.5) - (n == 1 ? 0.0 : cdf(n - 0.5));
  m.length = AliasTable(p);
  return m;
}

// Lines per shard: equal (the first N % S shards one more), or with --uneven weights
// drawn uniformly from [0.25, 1.75] so shard sizes differ by up to 7x.
std::vector<uint64_t> shard_line_counts(const GenOptions& o) {
  const size_t s = static_cast<size_t>(o.shards);
  std::vector<uint64_t> counts(s, o.lines / s);
  if (!o.uneven) {
    for (size_t i = 0; i < o.lines % s; ++i) ++counts[i];
    return counts;
  }
  uint64_t state = o.seed ^ 0x5A4D5ULL;
  std::vector<double> w(s);
  double total = 0;
  for (auto& x : w)
    total += x = 0.25 + 1.5 * (static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53);
  uint64_t assigned = 0;
  for (size_t i = 0; i < s; ++i)
    assigned += counts[i] = static_cast<uint64_t>(o.lines * (w[i] / total));
  for (size_t i = 0; assigned < o.lines; i = (i + 1) % s, ++assigned) ++counts[i];
  return counts;
}

struct ShardResult {
  uint64_t text_bytes = 0;
  uint64_t file_bytes = 0;
};

ShardResult write_shard(const GenOptions& o, const Model& m, int shard, uint64_t lines,
                        Compression compression) {
  // Each shard has its own stream, so the output does not depend on --threads.
  Xoshiro256 rng(o.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(shard) + 1);
  TextFileWriter file(shard_path(o.out, shard, o.shards, compression), compression);
  constexpr size_t kFlush = 1 << 20;
  // Room for one more line past kFlush: label + max_length slots (copied whole).
  std::vector<char> buf(kFlush + 64 + static_cast<size_t>(o.max_length + 1) * kSlot);
  char* const begin = buf.data();
  char* out = begin;
  const char* const slots = m.slots.data();
  const uint8_t* const slot_length = m.slot_length.data();
  const uint32_t classes = static_cast<uint32_t>(o.classes);
  ShardResult result;
  for (uint64_t line = 0; line < lines; ++line) {
    // Uniform classes draw as before --label-zipf existed: the same corpus for a seed.
    const uint32_t c = o.label_zipf > 0 ? m.label.sample(rng.next()) : rng.below(classes);
    uint32_t shown = c;
    if (o.noise > 0 && rng.uniform() < o.noise) shown = rng.below(classes);
    const std::string& label = m.labels[shown];
    std::memcpy(out, label.data(), label.size());
    out += label.size();
    const uint32_t n = m.length.sample(rng.next()) + 1;
    // Topicality as a 32-bit threshold: a token is a class word when 32 random bits
    // fall below it.
    const uint64_t topical = static_cast<uint64_t>(rng.uniform() * 2.0 * o.mix * 4294967296.0);
    const AliasTable& class_table = m.class_tables[c];
    const uint32_t* class_ids = m.class_word_ids[c].data();
    for (uint32_t t = 0; t < n; ++t) {
      const bool from_class = (rng.next() >> 32) < topical;
      const uint64_t r = rng.next();
      const uint32_t id = from_class ? class_ids[class_table.sample(r)] : m.background.sample(r);
      std::memcpy(out, slots + static_cast<size_t>(id) * kSlot, kSlot);  // fixed size: fast
      out += slot_length[id];
    }
    *out++ = '\n';
    if (static_cast<size_t>(out - begin) >= kFlush) {
      file.write(std::string_view(begin, static_cast<size_t>(out - begin)));
      result.text_bytes += static_cast<uint64_t>(out - begin);
      out = begin;
    }
  }
  file.write(std::string_view(begin, static_cast<size_t>(out - begin)));
  result.text_bytes += static_cast<uint64_t>(out - begin);
  result.file_bytes = file.commit();
  return result;
}

// Throws "FLAG must be in RANGE, not VALUE" unless `ok`.
template <class T>
void need(bool ok, const char* flag, const std::string& range, T value) {
  if (!ok) throw Error(fmt::format("{} must be in {}, not {}", flag, range, value));
}

void check_options(const GenOptions& o) {
  if (o.out.empty()) throw Error("--out is empty");
  need(o.shards >= 1 && o.shards <= 99999, "--shards", "[1, 99999]", o.shards);
  need(o.classes >= 2 && o.classes <= 100000, "--classes", "[2, 100000]", o.classes);
  const uint32_t max_vocab = 10000000;  // words stay within 4 syllables (kSlot)
  need(o.vocab >= 100 && o.vocab <= max_vocab, "--vocab", fmt::format("[100, {}]", max_vocab),
       o.vocab);
  if (o.vocab - std::min<uint32_t>(200, o.vocab / 10) < static_cast<uint32_t>(o.classes))
    throw Error(fmt::format("--vocab {} is too small for {} classes", o.vocab, o.classes));
  need(o.mix >= 0 && o.mix <= 0.5, "--mix", "[0, 0.5]", o.mix);
  need(o.noise >= 0 && o.noise <= 1, "--noise", "[0, 1]", o.noise);
  need(o.zipf > 0 && o.zipf <= 4, "--zipf", "(0, 4]", o.zipf);
  need(o.label_zipf >= 0 && o.label_zipf <= 4, "--label-zipf", "[0, 4]", o.label_zipf);
  need(o.max_length >= 1 && o.max_length <= 100000, "--max-length", "[1, 100000]", o.max_length);
  need(o.median_length >= 1 && o.median_length <= o.max_length, "--median-length",
       "[1, --max-length]", o.median_length);
  need(o.sigma > 0 && o.sigma <= 3, "--sigma", "(0, 3]", o.sigma);
  if (o.threads < 1) throw Error(fmt::format("--threads must be at least 1, not {}", o.threads));
}

void generate(const GenOptions& o) {
  check_options(o);
  const Compression compression = parse_compression(o.compress);
  const auto start = std::chrono::steady_clock::now();
  const Model model = build_model(o);
  const std::vector<uint64_t> counts = shard_line_counts(o);

  std::vector<ShardResult> results(counts.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (size_t i; !failed && (i = next++) < counts.size();) {
      try {
        results[i] = write_shard(o, model, static_cast<int>(i), counts[i], compression);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  const size_t n_threads = std::min<size_t>(static_cast<size_t>(o.threads), counts.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n_threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t text = 0, file = 0;
  for (const auto& r : results) {
    text += r.text_bytes;
    file += r.file_bytes;
  }
  std::printf(
      "sift-gen-corpus: %llu lines, %d classes, vocab %u -> %d shard(s) %s "
      "(%.1f MB text, %.1f MB on disk) in %.2f s: %.2fM lines/s, %.1f MB/s\n",
      static_cast<unsigned long long>(o.lines), o.classes, o.vocab, o.shards,
      shard_path(o.out, 0, o.shards, compression).c_str(), text / 1e6, file / 1e6, seconds,
      seconds > 0 ? o.lines / seconds / 1e6 : 0.0, seconds > 0 ? text / 1e6 / seconds : 0.0);
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  sift::GenOptions o;
  CLI::App app{
      "Writes a synthetic labelled corpus in fastText format (__label__cK word ...), split\n"
      "into shards PREFIX-00000-of-0000S.txt[.gz|.zst]. Same arguments, same bytes.",
      "sift-gen-corpus"};
  app.add_option("--out", o.out, "Output prefix")->required();
  app.add_option("--lines", o.lines, "Number of lines (documents)")->capture_default_str();
  app.add_option("--shards", o.shards, "Number of shard files")->capture_default_str();
  app.add_option("--classes", o.classes, "Number of classes (labels c0..cC-1)")
      ->capture_default_str();
  app.add_option("--vocab", o.vocab, "Vocabulary size")->capture_default_str();
  app.add_option("--class-words", o.class_words,
                 "Words in each class's subset (0: 1.5 x vocab/classes, overlapping)")
      ->capture_default_str();
  app.add_option("--mix", o.mix,
                 "Mean fraction of class words per document (per-document U(0, 2*mix))")
      ->capture_default_str();
  app.add_option("--noise", o.noise, "Fraction of lines whose label is replaced by a random one")
      ->capture_default_str();
  app.add_option("--zipf", o.zipf, "Zipf exponent of the word distributions")
      ->capture_default_str();
  app.add_option("--label-zipf", o.label_zipf,
                 "Zipf exponent of the class frequencies (class cK has weight 1/(K+1)^s, as "
                 "many-label tasks are skewed); 0: uniform classes")
      ->capture_default_str();
  app.add_option("--median-length", o.median_length, "Median tokens per line (log-normal)")
      ->capture_default_str();
  app.add_option("--sigma", o.sigma, "Log-normal sigma of the line length")->capture_default_str();
  app.add_option("--max-length", o.max_length, "Longest line in tokens")->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the sampled lines (use another for a test set)")
      ->capture_default_str();
  app.add_option("--task-seed", o.task_seed,
                 "Seed of the task: which words belong to which class (keep it for a test set)")
      ->capture_default_str();
  app.add_flag("--uneven", o.uneven, "Shards of different sizes (up to 7x apart)");
  app.add_option("--compress", o.compress, "gz (level 6) or zst (level 3)")
      ->check(CLI::IsMember({"gz", "zst", "none"}));
  app.add_option("--threads", o.threads, "Shards written in parallel (output is the same)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
    sift::generate(o);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sift-gen-corpus: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
