// fastText's reading of text (tokenizer.fasttext_compat): its word split, "</s>", and its
// n-gram hashing (signed-char FNV-1a, int32 word hashes sign-extended to 64 bits).
#include <gtest/gtest.h>

#include "datasets/encoder.h"
#include "datasets/text_encoder.h"

namespace sift {
namespace fasttext_compat_test {

// fastText's Dictionary::hash and addWordNgrams, written out for the test.
uint32_t reference_hash(const std::string& s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h = h ^ static_cast<uint32_t>(static_cast<int8_t>(c));
    h = h * 16777619u;
  }
  return h;
}

TEST(FastTextHash, EqualsSiftHashOnAsciiAndDiffersOnHighBytes) {
  EXPECT_EQ(fasttext_hash_word("hello"), hash_word("hello"));
  EXPECT_EQ(fasttext_hash_word("</s>"), hash_word("</s>"));
  EXPECT_EQ(fasttext_hash_word("știri"), reference_hash("știri"));
  EXPECT_NE(fasttext_hash_word("știri"), hash_word("știri"));
  EXPECT_EQ(fasttext_hash_word("😊"), reference_hash("😊"));
}

TEST(FastTextHash, BucketsAsFastTextAddWordNgrams) {
  Vocab vocab;
  vocab.add("a", 3);
  const int64_t buckets = 1000003;
  BagEncoder encoder(vocab, 3, buckets, /*fasttext_hashing=*/true);
  const std::vector<std::string> words = {"a", "știri", "Ελλάδα", "zz"};
  std::vector<int64_t> ids;
  encoder.encode(words, ids);
  std::vector<int32_t> hashes;
  for (const auto& w : words) hashes.push_back(static_cast<int32_t>(reference_hash(w)));
  std::vector<int64_t> expected = {vocab.id("a")};
  for (size_t i = 0; i < hashes.size(); ++i) {
    uint64_t h = hashes[i];  // int32_t -> uint64_t: sign-extended, as in fastText
    for (size_t j = i + 1; j < hashes.size() && j < i + 3; ++j) {
      h = h * 116049371 + hashes[j];
      expected.push_back(vocab.size() + static_cast<int64_t>(h % buckets));
    }
  }
  EXPECT_EQ(ids, expected);
  // At least one of these words has its top hash bit set: Sift's own hashing differs there.
  BagEncoder own(vocab, 3, buckets);
  std::vector<int64_t> own_ids;
  own.encode(words, own_ids);
  EXPECT_NE(own_ids, expected);
}

TEST(FastTextCompat, SplitsOnAsciiWhitespaceOnlyAndAppendsEos) {
  std::vector<std::string> words;
  split_fasttext("  Hello,\tWORLD\u00a0x \v\f\r\n", words);
  EXPECT_EQ(words, (std::vector<std::string>{"Hello,", "WORLD\u00a0x"}));

  auto vocab = std::make_shared<Vocab>();
  vocab->add("</s>", 10);
  vocab->add("Hello,", 2);
  TextEncoderOptions options;
  options.fasttext_compat = true;
  TextEncoder encoder(vocab, options);
  std::vector<int64_t> ids;
  encoder.encode("Hello, hello", ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{vocab->id("Hello,"), vocab->id("</s>")}));
}

}  // namespace fasttext_compat_test
}  // namespace sift
