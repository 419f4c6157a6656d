#include "datasets/encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"

namespace sift {
namespace encoder_test {

using Tokens = std::vector<std::string>;
using Ids = std::vector<int64_t>;

Vocab small_vocab() {
  Vocab vocab;
  vocab.add("the", 10);  // 2
  vocab.add("cat", 5);   // 3
  vocab.add("sat", 3);   // 4
  return vocab;
}

TEST(BagEncoder, HashWordIsFnv1a) {
  EXPECT_EQ(hash_word(""), 2166136261u);
  EXPECT_EQ(hash_word("a"), 0xE40C292Cu);
  EXPECT_EQ(hash_word("foobar"), 0xBF9CF968u);
}

// Character n-grams as fastText's computeSubwords makes them: runs of "<word>" by
// character, a lone "<" or ">" left out, after the word's own id.
TEST(BagEncoder, CharacterNgramsFollowEachWordAsFastTextCutsThem) {
  Vocab vocab = small_vocab();
  const int64_t buckets = 1000, base = vocab.size();
  BagEncoder encoder(vocab, 1, buckets, false, {1, 2});
  EXPECT_EQ(encoder.num_ids(), base + buckets);
  Ids ids;
  encoder.encode({"cat", "</s>"}, ids);
  Ids want = {3};
  for (const char* gram : {"<c", "c", "ca", "a", "at", "t", "t>"}) {
    want.push_back(base + static_cast<int64_t>(hash_word(gram) % buckets));
  }
  EXPECT_EQ(ids, want);  // "</s>" is unknown here, and has no character n-grams
}

TEST(BagEncoder, UnknownWordsKeepTheirCharacterNgramsAndCharactersAreUtf8) {
  Vocab vocab = small_vocab();
  const int64_t buckets = 1 << 20, base = vocab.size();
  BagEncoder plain(vocab, 1, buckets, false, {3, 3});
  Ids ids;
  plain.encode({"\xC8\x99"
                "a"},
               ids);  // "șa": two bytes, then one
  Ids want;
  for (const char* gram : {"<\xC8\x99"
                           "a",
                           "\xC8\x99"
                           "a>"}) {
    want.push_back(base + static_cast<int64_t>(hash_word(gram) % buckets));
  }
  EXPECT_EQ(ids, want);
  // fastText's own hashing (imported models): bytes as signed chars.
  BagEncoder imported(vocab, 1, buckets, true, {3, 3});
  imported.encode({"\xC8\x99"
                   "a"},
                  ids);
  EXPECT_EQ(ids[0], base + static_cast<int64_t>(fasttext_hash_word("<\xC8\x99"
                                                                   "a") %
                                                buckets));
  EXPECT_NE(ids[0], want[0]);
  EXPECT_THROW(BagEncoder(vocab, 1, 0, false, {2, 4}), Error);
  EXPECT_THROW(BagEncoder(vocab, 1, 10, false, {5, 4}), Error);
}

TEST(BagEncoder, UnigramsKeepKnownWordsAndDropUnknown) {
  Vocab vocab = small_vocab();
  BagEncoder encoder(vocab, 1, 0);
  Ids ids{99, 98};
  encoder.encode({"the", "dog", "sat", "the"}, ids);
  EXPECT_EQ(ids, (Ids{2, 4, 2}));
  EXPECT_EQ(encoder.num_ids(), 5);
}

TEST(BagEncoder, BigramsHashIntoBucketsAfterTheVocabulary) {
  Vocab vocab = small_vocab();
  const int64_t buckets = 1000;
  BagEncoder encoder(vocab, 2, buckets);
  EXPECT_EQ(encoder.num_ids(), vocab.size() + buckets);
  Ids ids;
  encoder.encode({"the", "cat", "dog", "sat"}, ids);
  ASSERT_EQ(ids.size(), 3u + 3u);  // 3 known words ("dog" dropped), 3 bigrams
  EXPECT_EQ(Ids(ids.begin(), ids.begin() + 3), (Ids{2, 3, 4}));
  for (size_t i = 3; i < ids.size(); ++i) {
    EXPECT_GE(ids[i], vocab.size());
    EXPECT_LT(ids[i], vocab.size() + buckets);
  }
  // The bigram "the cat" is hashed as fastText does.
  uint64_t h = uint64_t{hash_word("the")} * 116049371u + hash_word("cat");
  EXPECT_EQ(ids[3], vocab.size() + static_cast<int64_t>(h % buckets));
}

TEST(BagEncoder, SameBigramSameIdAndOrderMatters) {
  Vocab vocab = small_vocab();
  BagEncoder encoder(vocab, 2, 2'000'000);
  Ids a, b, c;
  encoder.encode({"the", "cat"}, a);
  encoder.encode({"dog", "the", "cat"}, b);  // "the cat" again, at another position
  encoder.encode({"cat", "the"}, c);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_NE(std::find(b.begin(), b.end(), a[2]), b.end());
  ASSERT_EQ(c.size(), 3u);
  EXPECT_NE(a[2], c[2]);
}

TEST(BagEncoder, UnknownWordsTakePartInNgrams) {
  Vocab vocab = small_vocab();
  BagEncoder encoder(vocab, 3, 1 << 20);
  Ids ids;
  encoder.encode({"foo", "bar", "baz"}, ids);
  EXPECT_EQ(ids.size(), 3u);  // 2 bigrams and 1 trigram, no word ids
  for (int64_t id : ids) EXPECT_GE(id, vocab.size());
}

TEST(BagEncoder, UnigramsOnlyGiveNoHashedIds) {
  Vocab vocab = small_vocab();
  BagEncoder encoder(vocab, 1, 1000);
  EXPECT_EQ(encoder.num_ids(), vocab.size());
  Ids ids;
  encoder.encode({"the", "cat", "sat"}, ids);
  EXPECT_EQ(ids, (Ids{2, 3, 4}));
}

TEST(BagEncoder, RejectsBadArguments) {
  Vocab vocab;
  EXPECT_THROW(BagEncoder(vocab, 0, 10), Error);
  EXPECT_THROW(BagEncoder(vocab, 2, 0), Error);
  EXPECT_NO_THROW(BagEncoder(vocab, 1, 0));
}

TEST(SequenceEncoder, MapsUnknownToUnk) {
  Vocab vocab = small_vocab();
  SequenceEncoder encoder(vocab, 0);
  Ids ids{7, 7, 7, 7, 7, 7};
  encoder.encode({"the", "dog", "sat"}, ids);
  EXPECT_EQ(ids, (Ids{2, Vocab::kUnk, 4}));
}

TEST(SequenceEncoder, TruncatesToMaxLength) {
  Vocab vocab = small_vocab();
  SequenceEncoder encoder(vocab, 2);
  Ids ids;
  encoder.encode({"cat", "sat", "the"}, ids);
  EXPECT_EQ(ids, (Ids{3, 4}));
  encoder.encode({"cat"}, ids);
  EXPECT_EQ(ids, (Ids{3}));
  EXPECT_THROW(SequenceEncoder(vocab, -1), Error);
}

}  // namespace encoder_test
}  // namespace sift
