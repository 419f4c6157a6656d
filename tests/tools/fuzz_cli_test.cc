// The input readers under seeded mutations (issue #19): damaged fastText, TSV, CSV, JSONL,
// .gz and .zst files through `sift eval` on a small run trained here. Whatever the bytes,
// sift must end by itself (no signal, no hang) and either succeed or print one
// `sift: error: ...` line: no stack trace, no "terminate called".
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "run_sift.h"

namespace sift {
namespace fuzz_cli_test {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::quote;
using testing::write_file;

const std::string kSource = SIFT_SOURCE_DIR;

std::string gzip(const std::string& text, const std::string& scratch) {
  const std::string path = scratch + "/packed.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return testing::slurp(path);
}

std::string zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

// One format: its file name and the eval flags that read it.
struct Format {
  std::string file, flags, bytes;
};

// The first SMS lines in every format the readers take.
std::vector<Format> formats(const std::string& scratch) {
  const auto lines = lines_of(testing::slurp(kSource + "/data/sms_spam/SMSSpamCollection"));
  std::string tsv, fasttext, csv, jsonl;
  for (size_t i = 0; i < 40; ++i) {
    const auto tab = lines[i].find('\t');
    const std::string label = lines[i].substr(0, tab);
    std::string text = lines[i].substr(tab + 1);
    tsv += lines[i] + "\n";
    fasttext += "__label__" + label + " " + text + "\n";
    std::string quoted, escaped;
    for (char c : text) {
      quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      escaped += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    }
    csv += label + ",\"" + quoted + "\"\n";
    jsonl += "{\"label\": \"" + label + "\", \"text\": \"" + escaped + "\"}\n";
  }
  return {{"f.txt", "--format fasttext", fasttext},
          {"f.tsv", "", tsv},
          {"f.csv", "--format csv --text 1 --label 0", csv},
          {"f.jsonl", "--format jsonl --text text --label label", jsonl},
          {"f.tsv.gz", "", gzip(tsv, scratch)},
          {"f.tsv.zst", "", zstd(tsv)}};
}

// One seeded mutation: a flipped byte, a cut, an inserted quote/tab/newline/NUL/0xFF/comma,
// or a deleted range.
std::string mutate(std::string bytes, std::mt19937_64& rng) {
  if (bytes.empty()) return bytes;
  auto at = [&] { return static_cast<size_t>(rng() % bytes.size()); };
  static const std::string kInserted("\"\t\n\0\xff,\\{", 9);
  switch (rng() % 5) {
    case 0:
      bytes[at()] = static_cast<char>(bytes[at()] ^ (1u << (rng() % 8)));
      break;
    case 1:
      bytes.resize(at());
      break;
    case 2:
      bytes.insert(at(), 1, kInserted[rng() % kInserted.size()]);
      break;
    case 3: {
      const size_t from = at();
      bytes.erase(from, static_cast<size_t>(rng() % 64));
      break;
    }
    default:
      for (int k = 0; k < 8; ++k) bytes[at()] = static_cast<char>(rng() % 256);
  }
  return bytes;
}

// Exit status and stderr of an eval: ended by itself, and silent or one clean error line.
::testing::AssertionResult EndedCleanly(const testing::SiftResult& r) {
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << "\n" << r;
  };
  if (r.status == 124) return fail("hung: killed by the per-call timeout");
  if (r.status >= 128 || r.status < 0) return fail("killed by a signal");
  for (const char* trace : {"terminate called", "Aborted", "Exception raised from", "frame #"}) {
    if (r.err.find(trace) != std::string::npos) return fail(std::string("stderr holds ") + trace);
  }
  if (r.err.empty()) return ::testing::AssertionSuccess();
  if (r.err.rfind("sift: error: ", 0) != 0) return fail("stderr is not one 'sift: error:' line");
  if (r.err.find('\n') != r.err.size() - 1) return fail("stderr has more than one line");
  return ::testing::AssertionSuccess();
}

TEST(FuzzCli, MutatedFilesOfEveryFormatEndInAResultOrOneCleanError) {
  const std::string dir = testing::make_temp_dir("sift_fuzz");
  const std::string sift = "timeout -k 5 30 " + quote(SIFT_BINARY);
  const auto train = testing::run_command(
      sift + " train configs/sms_spam.yaml --quiet --set train.epochs=1 --set model.buckets=1000" +
          " --set run.dir=" + quote(dir) + " --set run.name=r",
      dir, "", kSource);
  ASSERT_EQ(train.status, 0) << train;
  const std::vector<Format> all = formats(dir);
  std::mt19937_64 rng(19);
  constexpr int kPerFormat = 10;  // 60 evals of about 0.55 s each: about 35 s on 2 cores
  int failed_cleanly = 0;
  for (const Format& f : all) {
    for (int i = 0; i < kPerFormat; ++i) {
      const std::string path = dir + "/" + f.file;
      write_file(path, mutate(f.bytes, rng));
      const auto r = testing::run_command(
          sift + " eval --model " + quote(dir + "/r") + " --data " + quote(path) + " " + f.flags,
          dir, "", kSource);
      ASSERT_TRUE(EndedCleanly(r)) << f.file << " mutation " << i;
      failed_cleanly += r.status != 0;
    }
  }
  // The mutations must reach the error paths, not only harmless bytes of text.
  EXPECT_GT(failed_cleanly, 5);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Issue #42: the other inputs under the same mutations. A run folder's text files
// (config.yaml, labels.txt, vocab.txt) and checkpoint (best.ckpt) through `sift predict`, an
// export through `sift predict`, a config file through `sift config`, and --set values.
TEST(FuzzCli, MutatedRunFilesCheckpointsExportsConfigsAndSetsEndInAResultOrOneCleanError) {
  const std::string dir = testing::make_temp_dir("sift_fuzz_run");
  const std::string sift = "timeout -k 5 30 " + quote(SIFT_BINARY);
  const auto train = testing::run_command(
      sift + " train configs/sms_spam.yaml --quiet --set train.epochs=1 --set model.buckets=1000" +
          " --set run.dir=" + quote(dir) + " --set run.name=r",
      dir, "", kSource);
  ASSERT_EQ(train.status, 0) << train;
  const auto exported = testing::run_command(
      sift + " export " + quote(dir + "/r") + " --out " + quote(dir + "/model.pt"), dir, "",
      kSource);
  ASSERT_EQ(exported.status, 0) << exported;
  const std::string model_pt = testing::slurp(dir + "/model.pt");
  std::mt19937_64 rng(42);
  int failed_cleanly = 0;
  auto check = [&](const std::string& command, const std::string& what, int i) {
    const auto r = testing::run_command(sift + " " + command, dir, "free entry now\n", kSource);
    EXPECT_TRUE(EndedCleanly(r)) << what << " mutation " << i;
    failed_cleanly += r.status != 0;
  };
  constexpr int kPerInput = 6;  // 36 commands of 0.3-0.6 s each
  for (const std::string file : {"config.yaml", "labels.txt", "vocab.txt", "best.ckpt"}) {
    const std::string original = testing::slurp(dir + "/r/" + file);
    for (int i = 0; i < kPerInput; ++i) {
      write_file(dir + "/r/" + file, mutate(original, rng));
      check("predict --model " + quote(dir + "/r"), file, i);
    }
    write_file(dir + "/r/" + file, original);
  }
  for (int i = 0; i < kPerInput; ++i) {
    write_file(dir + "/m.pt", mutate(model_pt, rng));
    check("predict --model " + quote(dir + "/m.pt"), "model.pt", i);
  }
  const std::string config = testing::slurp(kSource + "/configs/sms_spam.yaml");
  for (int i = 0; i < kPerInput; ++i) {
    write_file(dir + "/c.yaml", mutate(config, rng));
    check("config " + quote(dir + "/c.yaml"), "config", i);
    std::string set = mutate("data.train.path=[a.tsv, 'b c.tsv']", rng);
    std::replace(set.begin(), set.end(), '\0', 'x');  // a command line holds no NUL
    check("config configs/sms_spam.yaml --set " + quote(set), "--set", i);
  }
  EXPECT_GT(failed_cleanly, 10);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Issue #42: fastText .bin import under mutations (a model trained here by the fasttext
// CLI, 0.9.2): `sift import fasttext` and, when it imports, `sift predict` of the run end
// with a result or one clean error line.
TEST(FuzzCli, MutatedFastTextBinFilesImportOrEndInOneCleanError) {
  if (std::system("command -v fasttext >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "the fasttext CLI is not installed (tools/setup.sh)";
  }
  const std::string dir = testing::make_temp_dir("sift_fuzz_bin");
  const auto lines = lines_of(testing::slurp(kSource + "/data/sms_spam/SMSSpamCollection"));
  std::string train;
  for (size_t i = 0; i < 300; ++i) {
    const auto tab = lines[i].find('\t');
    train += "__label__" + lines[i].substr(0, tab) + " " + lines[i].substr(tab + 1) + "\n";
  }
  write_file(dir + "/train.txt", train);
  const auto made = testing::run_command(
      "fasttext supervised -input train.txt -output m -dim 4 -epoch 1 -bucket 2000 -minn 2 "
      "-maxn 3 -wordNgrams 2 -thread 1 -verbose 0",
      dir, "", dir);
  ASSERT_EQ(made.status, 0) << made;
  const std::string bin = testing::slurp(dir + "/m.bin");
  const std::string sift = "timeout -k 5 30 " + quote(SIFT_BINARY);
  std::mt19937_64 rng(7);
  int failed_cleanly = 0, imported = 0;
  for (int i = 0; i < 24; ++i) {  // 24 imports of about 0.2 s each
    write_file(dir + "/x.bin", mutate(bin, rng));
    const auto r = testing::run_command(
        sift + " import fasttext x.bin --out " + quote(dir + "/r") + " --force", dir, "", dir);
    ASSERT_TRUE(EndedCleanly(r)) << "x.bin mutation " << i;
    failed_cleanly += r.status != 0;
    if (r.status != 0) continue;
    ++imported;
    const auto p = testing::run_command(sift + " predict --model " + quote(dir + "/r"), dir,
                                        "free entry now\n", dir);
    ASSERT_TRUE(EndedCleanly(p)) << "predict after x.bin mutation " << i;
  }
  EXPECT_GT(failed_cleanly, 5);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace fuzz_cli_test
}  // namespace sift
