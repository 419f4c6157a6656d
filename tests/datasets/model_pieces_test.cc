// A pretrained model's own SentencePiece ids (datasets/model_pieces.h) against its Hugging
// Face tokenizer written independently in Python (tests/models/bert_reference.py:
// AlbertTokenizer, XLMRobertaTokenizer on python3-sentencepiece), over the tiny ALBERT and
// XLM-R folders of tests/hf_folder.h: accents, capitals, runs of spaces, quotes, a digit
// before a comma, characters the model has no piece for, and empty text.
#include "datasets/model_pieces.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/hf_folder.h"
#include "tests/test_files.h"

namespace sift {
namespace model_pieces_test {

using nlohmann::json;
using sift::testing::slurp;
using sift::testing::write_file;

const std::vector<std::string> kTexts{
    "The film was GREAT!",
    "in 1999, the café\u00a0 was  naïve",
    "``quoted'' and 2,000, ACTORS 1999,x",
    "  Ünïcödé\tMÚSIC 字 \u2003 end ",
    "",
    "1999,",
};

std::vector<std::vector<int64_t>> python_ids(const std::string& folder) {
  write_file(folder + "/texts.json", json{{"texts", kTexts}, {"only_ids", true}}.dump());
  const std::string out = folder + "/ids.json", err = folder + "/err";
  const std::string cmd = "/usr/bin/python3 " + std::string(SIFT_SOURCE_DIR) +
                          "/tests/models/bert_reference.py " + folder + " " + folder +
                          "/texts.json > " + out + " 2> " + err;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(err);
  return json::parse(slurp(out)).get<std::vector<std::vector<int64_t>>>();
}

void expect_python_ids(const std::string& folder, const std::string& model, PieceIds scheme) {
  const ModelPieces pieces(SentencePieceModel::open(folder + "/" + model), scheme, true);
  const auto want = python_ids(folder);
  ASSERT_EQ(want.size(), kTexts.size());
  std::vector<int64_t> got;
  for (size_t i = 0; i < kTexts.size(); ++i) {
    pieces.encode(kTexts[i], 0, got);
    EXPECT_EQ(got, want[i]) << "'" << kTexts[i] << "'";
  }
  // At most max_length ids with the two around the pieces.
  pieces.encode(kTexts[1], 4, got);
  EXPECT_EQ(got, (std::vector<int64_t>{want[1][0], want[1][1], want[1][2], want[1].back()}));
}

TEST(ModelPieces, AlbertIdsAreAlbertTokenizers) {
  const std::string skip = sift::testing::no_sentencepiece();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const std::string folder = sift::testing::albert_folder();
  expect_python_ids(folder, "spiece.model", PieceIds::albert);
  // The normalisation alone: spaces collapsed and trimmed, quotes, accents, case.
  EXPECT_EQ(albert_normalized("  ``Naïve''\u00a0\u00a0CAFÉ\t", true), "\"naive\" cafe");
  EXPECT_EQ(albert_normalized("Naïve", false), "Naive");
}

TEST(ModelPieces, XlmRobertaIdsAreFairseqsOffsetByOne) {
  const std::string skip = sift::testing::no_sentencepiece();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const std::string folder = sift::testing::xlmr_folder();
  expect_python_ids(folder, "sentencepiece.bpe.model", PieceIds::fairseq);
  const auto spm = SentencePieceModel::open(folder + "/sentencepiece.bpe.model");
  EXPECT_EQ(ModelPieces(spm, PieceIds::fairseq, false).num_ids(), spm->size() + 2);
}

TEST(ModelPieces, AnAlbertSchemeNeedsTheModelsClsPiece) {
  const std::string skip = sift::testing::no_sentencepiece();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const std::string folder = sift::testing::xlmr_folder();  // no [CLS] in its pieces
  EXPECT_CONTAINS(sift::testing::error_of([&] {
                    ModelPieces(SentencePieceModel::open(folder + "/sentencepiece.bpe.model"),
                                PieceIds::albert, true);
                  }),
                  "sentencepiece.bpe.model: no [CLS] piece");
}

}  // namespace model_pieces_test
}  // namespace sift
