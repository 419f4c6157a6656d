#include "datasets/sentencepiece.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace sentencepiece_test {

using sift::testing::error_of;

using Ids = std::vector<int64_t>;

// The SMS Spam Collection shipped in data/sms_spam (CC BY 4.0): real, noisy text.
const std::string kSms = std::string(SIFT_SOURCE_DIR) + "/data/sms_spam/SMSSpamCollection";

// The text of SMS Spam Collection lines [first, first + count) ("label<TAB>text").
std::vector<std::string> sms_text(size_t first, size_t count) {
  std::ifstream in(kSms);
  std::vector<std::string> lines;
  std::string line;
  for (size_t i = 0; lines.size() < count && std::getline(in, line); ++i) {
    size_t tab = line.find('\t');
    if (i >= first && tab != std::string::npos) lines.push_back(line.substr(tab + 1));
  }
  return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const std::string& line : lines) out << line << '\n';
}

#ifdef SIFT_SPM_ENCODE
// Ids of each line of input_file from the spm_encode CLI, the reference.
std::vector<Ids> cli_encode(const std::string& model, const std::string& input_file) {
  std::string command = fmt::format("'{}' --model='{}' --output_format=id < '{}'",
                                    SIFT_SPM_ENCODE, model, input_file);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return {};
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(pipe), 0) << command;
  std::vector<Ids> result;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    Ids ids;
    std::istringstream words(line);
    for (int64_t id; words >> id;) ids.push_back(id);
    result.push_back(ids);
  }
  return result;
}
#endif

// Models are trained on first use and kept for the suite: ctest runs each test in its
// own process, so a test trains only what it needs (BPE: ~0.2 s, unigram: ~0.5 s).
class SentencePieceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!SIFT_HAVE_SPM_PLUGIN || !sentencepiece_supported()) return;
    dir_ = new std::string(sift::testing::make_temp_dir("sift_sentencepiece"));
    write_lines(*dir_ + "/train.txt", sms_text(0, 2000));
    std::vector<std::string> lines = sms_text(2000, 195);
    // Beyond the training text: non-ASCII, unseen characters, odd spacing, empty.
    lines.insert(lines.end(), {"caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac",
                               "  two  spaces   and\ttab ", "ALL CAPS!!! 12345", "x", ""});
    lines_ = new std::vector<std::string>(lines);
    write_lines(*dir_ + "/lines.txt", lines);
  }

  static void TearDownTestSuite() {
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    delete lines_;
    dir_ = nullptr;
    lines_ = nullptr;
  }

  void SetUp() override {
    if (!SIFT_HAVE_SPM_PLUGIN) GTEST_SKIP() << "built without SentencePiece";
    if (!sentencepiece_supported()) GTEST_SKIP() << "sanitizer build: no RTLD_DEEPBIND";
  }

  // Path of a kVocab-piece model of this type ("unigram" or "bpe") on train.txt.
  static std::string model_path(const std::string& type) {
    std::string prefix = *dir_ + "/" + type;
    if (!std::filesystem::exists(prefix + ".model")) {
      // A faster pruning schedule than the default: still a real unigram model.
      std::vector<std::pair<std::string, std::string>> extra;
      if (type == "unigram") extra = {{"shrinking_factor", "0.5"}};
      train_sentencepiece(*dir_ + "/train.txt", prefix, kVocab, type, extra);
    }
    return prefix + ".model";
  }

  static void expect_same_as_cli(const std::string& path) {
#ifdef SIFT_SPM_ENCODE
    auto model = SentencePieceModel::open(path);
    std::vector<Ids> expected = cli_encode(path, *dir_ + "/lines.txt");
    ASSERT_EQ(expected.size(), lines_->size());
    Ids ids{7, 7, 7};  // replaced, not appended to
    for (size_t i = 0; i < lines_->size(); ++i) {
      model->encode((*lines_)[i], ids);
      ASSERT_EQ(ids, expected[i]) << "line " << i << ": " << (*lines_)[i];
    }
#else
    (void)path;
    GTEST_SKIP() << "no spm_encode program";
#endif
  }

  static constexpr int64_t kVocab = 600;
  static std::string* dir_;
  static std::vector<std::string>* lines_;
};

std::string* SentencePieceTest::dir_ = nullptr;
std::vector<std::string>* SentencePieceTest::lines_ = nullptr;

TEST_F(SentencePieceTest, UnigramIdsEqualSpmEncode) { expect_same_as_cli(model_path("unigram")); }

TEST_F(SentencePieceTest, BpeIdsEqualSpmEncode) { expect_same_as_cli(model_path("bpe")); }

TEST_F(SentencePieceTest, SizeAndPieces) {
  auto model = SentencePieceModel::open(model_path("bpe"));
  EXPECT_EQ(model->size(), kVocab);
  EXPECT_EQ(model->unk_id(), 0);
  EXPECT_EQ(model->id_to_piece(0), "<unk>");
  for (int64_t id = 3; id < model->size(); id += 97) {
    EXPECT_EQ(model->piece_to_id(model->id_to_piece(id)), id);
  }
  EXPECT_EQ(model->piece_to_id("no such piece"), model->unk_id());
  EXPECT_NE(error_of([&] { model->id_to_piece(kVocab); }).find("out of range"),
            std::string::npos);
  EXPECT_EQ(model->path(), model_path("bpe"));
}

TEST_F(SentencePieceTest, EncodeFromSeveralThreads) {
  auto model = SentencePieceModel::open(model_path("bpe"));
  std::vector<Ids> expected(lines_->size());
  for (size_t i = 0; i < lines_->size(); ++i) model->encode((*lines_)[i], expected[i]);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Ids ids;
      for (int round = 0; round < 5; ++round) {
        for (size_t i = 0; i < lines_->size(); ++i) {
          model->encode((*lines_)[i], ids);
          if (ids != expected[i]) ++mismatches[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST_F(SentencePieceTest, MissingModelFileIsNamed) {
  std::string path = *dir_ + "/no_such.model";
  std::string message = error_of([&] { SentencePieceModel::open(path); });
  EXPECT_NE(message.find("cannot open " + path), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST_F(SentencePieceTest, TextFileIsNotAModel) {
  write_lines(*dir_ + "/fake.model", {"<unk>\t0", "\xe2\x96\x81the\t-1.5"});  // a .vocab
  for (const std::string& path : {*dir_ + "/fake.model", *dir_ + "/train.txt"}) {
    std::string message = error_of([&] { SentencePieceModel::open(path); });
    EXPECT_EQ(message.rfind(path + " is not a SentencePiece model", 0), 0u) << message;
  }
  std::string message = error_of([&] { SentencePieceModel::open(*dir_); });
  EXPECT_NE(message.find("cannot open " + *dir_), std::string::npos) << message;
}

TEST_F(SentencePieceTest, TrainingErrorsNameTheProblem) {
  std::string missing = *dir_ + "/missing.txt";
  std::string message = error_of([&] { train_sentencepiece(missing, *dir_ + "/m", 100); });
  EXPECT_NE(message.find(missing), std::string::npos) << message;
  message = error_of([&] { train_sentencepiece(*dir_ + "/train.txt", *dir_ + "/m", 100, "x"); });
  EXPECT_NE(message.find("model_type 'x'"), std::string::npos) << message;
  message = error_of(
      [&] { train_sentencepiece(*dir_ + "/train.txt", *dir_ + "/no/such/dir/m", 100); });
  EXPECT_NE(message.find(*dir_ + "/no/such/dir/"), std::string::npos) << message;
  // More pieces than the text can give: SentencePiece's own message, passed on.
  write_lines(*dir_ + "/tiny.txt", {"a b c", "a b"});
  message = error_of([&] { train_sentencepiece(*dir_ + "/tiny.txt", *dir_ + "/m", 5000); });
  EXPECT_NE(message.find("vocab"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(*dir_ + "/m.model"));
}

TEST_F(SentencePieceTest, CoreProcessHasNoLibTorch) {
  // sift_core must stay torch-free; with the plug-in loaded, neither LibTorch nor its
  // protobuf is mapped into this process.
  EXPECT_FALSE(sentencepiece_plugin_path().empty());
  std::ifstream maps("/proc/self/maps");
  std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all.find("libtorch"), std::string::npos);
  EXPECT_EQ(all.find("libprotobuf.so"), std::string::npos);
  EXPECT_NE(all.find("libsentencepiece"), std::string::npos);
}

}  // namespace sentencepiece_test
}  // namespace sift
