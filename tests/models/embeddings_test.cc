#include "models/embeddings.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "models/init.h"
#include "tests/test_files.h"

namespace sift {
namespace embeddings_test {

using sift::testing::make_temp_dir;

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// ids: 2 the, 3 cat, 4 sat, 5 dog.
std::shared_ptr<Vocab> vocab() {
  auto v = std::make_shared<Vocab>();
  v->add("the", 10);
  v->add("cat", 5);
  v->add("sat", 3);
  v->add("dog", 1);
  return v;
}

std::vector<float> row(const torch::Tensor& table, int64_t id) {
  auto r = table[id].contiguous();
  return std::vector<float>(r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
}

std::string error_of(const std::string& path, int64_t dim) {
  try {
    load_word_vectors(path, *vocab(), dim, nullptr);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WordVectors, KeepsTheVocabularysWordsAndRandomisesTheRest) {
  const std::string path = write_file(make_temp_dir("sift_embeddings") + "/v.vec",
                                      "5 3\n"
                                      "the 0.5 -1 2e-1 \n"  // fastText writes a trailing space
                                      "cat 1 2 3\n"
                                      "elephant 9 9 9\n"
                                      "sat\t4 5 6\n");
  int64_t found = -1;
  const auto table = load_word_vectors(path, *vocab(), 3, &found);
  EXPECT_EQ(table.sizes(), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(found, 3);
  EXPECT_EQ(row(table, 2), (std::vector<float>{0.5f, -1.0f, 0.2f}));
  EXPECT_EQ(row(table, 3), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(row(table, 4), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(row(table, 0), (std::vector<float>{0, 0, 0}));  // padding
  for (int64_t id : {1, 5}) {                               // <unk> and dog: random, Kim's range
    const auto r = table[id];
    EXPECT_LE(r.abs().max().item<float>(), 0.25f);
    EXPECT_GT(r.abs().max().item<float>(), 0.0f);
  }
}

TEST(WordVectors, WorksWithoutAHeader) {
  const std::string path =
      write_file(make_temp_dir("sift_embeddings") + "/v.vec", "dog 1 2\nthe 3 4\n");
  int64_t found = 0;
  const auto table = load_word_vectors(path, *vocab(), 2, &found);
  EXPECT_EQ(found, 2);
  EXPECT_EQ(row(table, 5), (std::vector<float>{1, 2}));
  EXPECT_EQ(row(table, 2), (std::vector<float>{3, 4}));
}

TEST(WordVectors, ExactSpellingBeatsACaseFoldedMatchInEitherOrder) {
  const std::string path = write_file(make_temp_dir("sift_embeddings") + "/v.vec",
                                      "Cat 7 7\ncat 1 1\nthe 2 2\nThe 8 8\nDOG 3 3\n");
  int64_t found = 0;
  const auto table = load_word_vectors(path, *vocab(), 2, &found);
  EXPECT_EQ(found, 3);
  EXPECT_EQ(row(table, 3), (std::vector<float>{1, 1}));
  EXPECT_EQ(row(table, 2), (std::vector<float>{2, 2}));
  EXPECT_EQ(row(table, 5), (std::vector<float>{3, 3}));  // only a folded match exists
}

TEST(WordVectors, ReadsGzip) {
  const std::string path = make_temp_dir("sift_embeddings") + "/v.vec.gz";
  const std::string text = "2 2\nsat 0.25 0.75\ncat 1 0\n";
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  int64_t found = 0;
  const auto table = load_word_vectors(path, *vocab(), 2, &found);
  EXPECT_EQ(found, 2);
  EXPECT_EQ(row(table, 4), (std::vector<float>{0.25f, 0.75f}));
}

TEST(WordVectors, HeaderWithAnotherDimensionIsAnError) {
  const std::string path =
      write_file(make_temp_dir("sift_embeddings") + "/v.vec", "2 300\nthe 1 2 3\n");
  EXPECT_EQ(error_of(path, 100), path + ":1: the vectors have 300 dimensions, model.dim is 100");
}

TEST(WordVectors, LineWithTooFewValuesIsAnErrorEvenForAnUnknownWord) {
  const std::string path =
      write_file(make_temp_dir("sift_embeddings") + "/v.vec", "the 1 2 3\nzebra 1 2\n");
  EXPECT_EQ(error_of(path, 3), path + ":2: expected 3 values after the word, found 2");
}

TEST(WordVectors, ValueThatIsNotANumberIsAnError) {
  const std::string path =
      write_file(make_temp_dir("sift_embeddings") + "/v.vec", "1 3\ncat 1 x 3\n");
  EXPECT_EQ(error_of(path, 3), path + ":2: value 2 of 'cat' is not a number: 'x'");
  const std::string nan = write_file(make_temp_dir("sift_embeddings") + "/n.vec", "cat 1 2 nan\n");
  EXPECT_EQ(error_of(nan, 3), nan + ":1: value 3 of 'cat' is not a number: 'nan'");
}

TEST(WordVectors, MissingFileIsAnError) {
  const std::string path = make_temp_dir("sift_embeddings") + "/absent.vec";
  const std::string m = error_of(path, 3);
  EXPECT_NE(m.find("model.pretrained"), std::string::npos) << m;
  EXPECT_NE(m.find(path), std::string::npos) << m;
}

ModelShape shape_of(std::shared_ptr<Vocab> v) {
  ModelShape s;
  s.num_ids = v->size();
  s.num_classes = 2;
  s.vocab = v;
  return s;
}

TEST(WordEmbedding, StartsFromPretrainedVectorsAndCanBeFrozen) {
  ModelConfig c;
  c.dim = 2;
  c.pretrained = write_file(make_temp_dir("sift_embeddings") + "/v.vec", "cat 1 2\n");
  c.freeze_embeddings = true;
  auto embedding = make_word_embedding(c, shape_of(vocab()));
  EXPECT_EQ(row(embedding->weight.detach(), 3), (std::vector<float>{1, 2}));
  EXPECT_FALSE(embedding->weight.requires_grad());
  c.freeze_embeddings = false;
  EXPECT_TRUE(make_word_embedding(c, shape_of(vocab()))->weight.requires_grad());
}

TEST(WordEmbedding, RandomStartHasAZeroPaddingRow) {
  ModelConfig c;
  c.dim = 4;
  auto embedding = make_word_embedding(c, shape_of(vocab()));
  EXPECT_EQ(embedding->weight[0].abs().sum().item<float>(), 0.0f);
  EXPECT_LE(embedding->weight.abs().max().item<float>(), 0.25f);
}

TEST(WordEmbedding, PretrainedNeedsWordIdsAndAtLeastOneMatch) {
  ModelConfig c;
  c.dim = 2;
  c.pretrained = write_file(make_temp_dir("sift_embeddings") + "/v.vec", "zebra 1 2\n");
  try {
    make_word_embedding(c, shape_of(vocab()));
    FAIL() << "expected a sift::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none of the 4 vocabulary words"), std::string::npos)
        << e.what();
  }
  ModelShape pieces = shape_of(vocab());
  pieces.num_ids = 100;  // SentencePiece ids: not the vocabulary's words
  EXPECT_THROW(make_word_embedding(c, pieces), Error);
  pieces.vocab = nullptr;
  EXPECT_THROW(make_word_embedding(c, pieces), Error);
}

// fastText's -pretrainedVectors: the bag table's word rows found in the file take their
// vectors; the other words and the n-gram buckets (ids past the vocabulary) keep the
// uniform fill in +-1/dim, which stays the fill the checkpoint compares rows with.
TEST(BagTable, PretrainedWordsStartFromTheirVectorsAndTheBucketsFromTheFill) {
  ModelConfig c;
  c.dim = 2;
  c.pretrained = write_file(make_temp_dir("sift_embeddings") + "/v.vec", "2 2\ncat 1 2\nDog 3 4\n");
  ModelShape s = shape_of(vocab());
  s.num_ids = vocab()->size() + 100;  // 100 n-gram buckets after the words
  UniformFill fill;
  auto table = make_bag_table(c, s, fill);
  const torch::Tensor w = table->weight.detach();
  EXPECT_EQ(row(w, 3), (std::vector<float>{1, 2}));  // cat
  EXPECT_EQ(row(w, 5), (std::vector<float>{3, 4}));  // dog, from Dog
  EXPECT_LE(w[2].abs().max().item<float>(), 0.5f);   // the: not in the file
  EXPECT_LE(w.narrow(0, vocab()->size(), 100).abs().max().item<float>(), 0.5f);
  torch::Tensor refilled = torch::empty_like(w);
  refill_(refilled, fill);
  EXPECT_TRUE(torch::equal(refilled[2], w[2]));
  EXPECT_FALSE(torch::equal(refilled[3], w[3]));
  c.pretrained = write_file(make_temp_dir("sift_embeddings") + "/z.vec", "zebra 1 2\n");
  EXPECT_THROW(make_bag_table(c, s, fill), Error);
}

}  // namespace embeddings_test
}  // namespace sift
