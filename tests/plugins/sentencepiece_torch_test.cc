// The SentencePiece plug-in in a process that links LibTorch. NOTES.md: linking
// SentencePiece and LibTorch together crashes (two protobuf copies); loaded with
// dlopen(RTLD_DEEPBIND) it must train, encode and hand ids to torch without trouble.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "datasets/sentencepiece.h"

namespace sift {
namespace {

TEST(SentencePieceWithTorch, TrainEncodeAndMakeTensor) {
  if (!SIFT_HAVE_SPM_PLUGIN) GTEST_SKIP() << "built without SentencePiece";
  if (!sentencepiece_supported()) GTEST_SKIP() << "sanitizer build: no RTLD_DEEPBIND";
  at::Tensor before = at::ones({4, 4}).matmul(at::ones({4, 4}));  // LibTorch in use
  ASSERT_EQ(before.sum().item<float>(), 64.0f);

  std::string pattern = ::testing::TempDir() + "sift_spm_torch_XXXXXX";
  std::string dir = mkdtemp(pattern.data());
  {
    // The SMS Spam Collection shipped in data/ (CC BY 4.0): "label<TAB>text" lines.
    std::ifstream in(std::string(SIFT_SOURCE_DIR) + "/data/sms_spam/SMSSpamCollection");
    std::ofstream out(dir + "/train.txt");
    std::string line;
    for (int i = 0; i < 1000 && std::getline(in, line); ++i) {
      out << line.substr(line.find('\t') + 1) << '\n';
    }
  }
  train_sentencepiece(dir + "/train.txt", dir + "/m", 300, "unigram");
  auto model = SentencePieceModel::open(dir + "/m.model");
  EXPECT_EQ(model->size(), 300);

  const std::string text = "a stirring , funny and finally transporting re-imagining";
  std::vector<int64_t> ids;
  model->encode(text, ids);
  ASSERT_FALSE(ids.empty());
#ifdef SIFT_SPM_ENCODE
  std::string command = std::string("echo '") + text + "' | '" + SIFT_SPM_ENCODE +
                        "' --output_format=id --model='" + dir + "/m.model'";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<int64_t> expected;
  for (long id; std::fscanf(pipe, "%ld", &id) == 1;) expected.push_back(id);
  EXPECT_EQ(::pclose(pipe), 0);
  EXPECT_EQ(ids, expected);
#endif

  at::Tensor tensor = at::tensor(ids, at::kLong);
  EXPECT_EQ(tensor.numel(), static_cast<int64_t>(ids.size()));
  EXPECT_LT(tensor.max().item<int64_t>(), model->size());
  at::Tensor embedded = at::embedding(at::randn({model->size(), 8}), tensor);
  EXPECT_EQ(embedded.size(0), static_cast<int64_t>(ids.size()));

  // Both protobuf copies really are in this process: LibTorch's libprotobuf and the
  // one inside libsentencepiece. Without RTLD_DEEPBIND, open() above fails with
  // protobuf's "compiled against version 3.14.0 ... installed version (3.21.12)".
  std::ifstream maps("/proc/self/maps");
  std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_NE(all.find("libprotobuf.so"), std::string::npos);
  EXPECT_NE(all.find("libsentencepiece.so"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sift
