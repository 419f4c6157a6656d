#include "datasets/masked_lm.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/splitmix.h"

namespace sift {
namespace masked_lm_test {

// [PAD] [UNK] [CLS] [SEP] [MASK], then words and "##" continuations.
const std::vector<std::string> kTokens{"[PAD]", "[UNK]", "[CLS]",  "[SEP]", "[MASK]", "the",
                                       "un",    "##aff", "##able", "cat",   "sat",    "##s",
                                       "on",    "mat",   "a",      "dog",   "ran",    "far"};

MaskingVocab vocab() { return masking_vocab(WordPieceVocab(kTokens), "tokenizer.model"); }

// `texts` random texts of 1 to 40 ids between [CLS] and [SEP], drawn from `seed`.
RawBatch random_batch(int texts, uint64_t seed) {
  RawBatch batch;
  uint64_t state = seed;
  for (int t = 0; t < texts; ++t) {
    std::vector<int64_t> ids{2};
    const int64_t n = 1 + static_cast<int64_t>(splitmix64(state) % 40);
    for (int64_t i = 0; i < n; ++i) ids.push_back(5 + static_cast<int64_t>(splitmix64(state) % 13));
    ids.push_back(3);
    batch.add(ids, -1);
  }
  return batch;
}

TEST(MaskedLm, PackingKeepsEveryIdOnceInOrderAndPadsOnlyTheLastRow) {
  for (const int64_t length : {1, 7, 64, 1000}) {
    const RawBatch batch = random_batch(50, 11);
    const PackedSequences p = pack_sequences(batch, length);
    std::vector<int64_t> back;
    for (int64_t r = 0; r < p.rows(); ++r) {
      if (r + 1 < p.rows()) {
        EXPECT_EQ(p.lengths[r], length);
      }
      for (int64_t i = 0; i < length; ++i) {
        const int64_t id = p.ids[r * length + i];
        if (i < p.lengths[r]) {
          back.push_back(id);
        } else {
          EXPECT_EQ(id, 0) << "padding after the last row's ids";
        }
      }
    }
    EXPECT_EQ(back, batch.ids) << "length " << length;
  }
}

TEST(MaskedLm, PackingAnEmptyBatchGivesNoRowAndAZeroLengthIsRefused) {
  EXPECT_EQ(pack_sequences(RawBatch{}, 8).rows(), 0);
  EXPECT_THROW(pack_sequences(random_batch(2, 1), 0), Error);
}

TEST(MaskedLm, SharesOverManyBatchesAreFifteenPercentSplitEightyTenTen) {
  const MaskingVocab v = vocab();
  int64_t tokens = 0, chosen = 0, masked = 0, randomised = 0, kept = 0;
  for (uint64_t b = 0; b < 200; ++b) {
    const PackedSequences p = pack_sequences(random_batch(32, b + 1), 128);
    const MaskedSequences m = mask_tokens(p, v, MaskingOptions{}, b);
    for (size_t i = 0; i < p.ids.size(); ++i) {
      const int64_t id = p.ids[i];
      if (id >= 5) ++tokens;
      if (m.targets[i] < 0) {
        EXPECT_EQ(m.inputs[i], id) << "a position without a target is unchanged";
        continue;
      }
      EXPECT_EQ(m.targets[i], id);
      ++chosen;
      if (m.inputs[i] == v.mask_id) {
        ++masked;
      } else if (m.inputs[i] == id) {
        ++kept;
      } else {
        ++randomised;
        EXPECT_GE(m.inputs[i], 5) << "a random token is never special";
      }
    }
  }
  ASSERT_GT(tokens, 100000);
  const double rate = static_cast<double>(chosen) / tokens;
  EXPECT_NEAR(rate, 0.15, 0.005);
  EXPECT_NEAR(static_cast<double>(masked) / chosen, 0.8, 0.01);
  // A random draw of the token itself counts as kept: 1/13 of the random tenth.
  EXPECT_NEAR(static_cast<double>(randomised) / chosen, 0.1 * 12 / 13, 0.01);
  EXPECT_NEAR(static_cast<double>(kept) / chosen, 0.1 + 0.1 / 13, 0.01);
}

TEST(MaskedLm, SpecialTokensAndPaddingAreNeverChosen) {
  const MaskingVocab v = vocab();
  MaskingOptions all;
  all.rate = 1.0;  // every token that may be chosen is
  const PackedSequences p = pack_sequences(random_batch(20, 3), 50);
  const MaskedSequences m = mask_tokens(p, v, all, 9);
  for (size_t i = 0; i < p.ids.size(); ++i) {
    EXPECT_EQ(m.targets[i] >= 0, p.ids[i] >= 5) << "position " << i << " id " << p.ids[i];
  }
}

TEST(MaskedLm, WholeWordMaskingChoosesAWordWithItsContinuations) {
  const MaskingVocab v = vocab();
  MaskingOptions whole;
  whole.whole_word = true;
  RawBatch batch;
  // [CLS] un ##aff ##able cat sat ##s [SEP], many times.
  for (int t = 0; t < 400; ++t) batch.add({2, 6, 7, 8, 9, 10, 11, 3}, -1);
  const MaskedSequences m = mask_tokens(pack_sequences(batch, 64), v, whole, 5);
  int64_t words = 0;
  for (size_t start = 0; start < batch.ids.size(); start += 8) {
    const auto t = [&](size_t i) { return m.targets[start + i] >= 0; };
    EXPECT_TRUE(t(1) == t(2) && t(2) == t(3)) << "un ##aff ##able together";
    EXPECT_EQ(t(5), t(6)) << "sat ##s together";
    words += t(1) + t(4) + t(5);
  }
  EXPECT_NEAR(static_cast<double>(words) / (3 * 400), 0.15, 0.04);
}

// A vocabulary as each tokenizer spells it: the special tokens, then for each of 6 words
// its start and two continuations (ids 5 + 3w, 6 + 3w, 7 + 3w in both).
std::vector<std::string> pieces(PieceMarking marking) {
  const bool wp = marking == PieceMarking::wordpiece;
  std::vector<std::string> out =
      wp ? std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
         : std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "[MASK]"};
  for (const std::string w : {"the", "cat", "sat", "on", "mat", "far"}) {
    out.push_back(wp ? w : "\xe2\x96\x81" + w);
    out.push_back(wp ? "##" + w.substr(0, 2) : w.substr(0, 2));
    out.push_back(wp ? "##x" + w : "x" + w);
  }
  return out;
}

// `texts` texts of 1 to 30 words of 1 to 3 pieces, each text framed by ids 2 and 3; `starts`
// gets the flat index of each word's first piece and `ends` one past its last.
RawBatch word_batch(int texts, uint64_t seed, std::vector<size_t>& starts,
                    std::vector<size_t>& ends) {
  RawBatch batch;
  uint64_t state = seed;
  for (int t = 0; t < texts; ++t) {
    std::vector<int64_t> ids{2};
    const uint64_t words = 1 + splitmix64(state) % 30;
    for (uint64_t w = 0; w < words; ++w) {
      const int64_t first = 5 + 3 * static_cast<int64_t>(splitmix64(state) % 6);
      const uint64_t n = 1 + splitmix64(state) % 3;
      starts.push_back(batch.ids.size() + ids.size());
      for (uint64_t k = 0; k < n; ++k) ids.push_back(first + static_cast<int64_t>(k));
      ends.push_back(batch.ids.size() + ids.size());
    }
    ids.push_back(3);
    batch.add(ids, -1);
  }
  return batch;
}

class WholeWordMasking : public ::testing::TestWithParam<PieceMarking> {};

// Rows of 7 tokens cut many words between two sequences; each word must still be chosen
// whole, a share of 15% of the words, its pieces split 80/10/10.
TEST_P(WholeWordMasking, ChoosesFifteenPercentOfTheWordsEachWholeAcrossPackedRows) {
  MaskingVocab v;
  v.mask_id = 4;
  mark_pieces(v, pieces(GetParam()), GetParam());
  MaskingOptions whole;
  whole.whole_word = true;
  int64_t words = 0, chosen_words = 0, cut_words = 0, chosen_pieces = 0, masked = 0;
  for (uint64_t b = 0; b < 200; ++b) {
    std::vector<size_t> starts, ends;
    const RawBatch batch = word_batch(32, b + 7, starts, ends);
    const PackedSequences p = pack_sequences(batch, 7);
    const MaskedSequences m = mask_tokens(p, v, whole, b);
    for (size_t i = 0; i < batch.ids.size(); ++i) {
      if (batch.ids[i] < 5) {
        EXPECT_EQ(m.targets[i], -1) << "special token " << batch.ids[i] << " chosen";
      }
    }
    for (size_t w = 0; w < starts.size(); ++w) {
      const bool chosen = m.targets[starts[w]] >= 0;
      for (size_t i = starts[w]; i < ends[w]; ++i) {
        ASSERT_EQ(m.targets[i] >= 0, chosen) << "batch " << b << ": a word split at " << i;
        if (!chosen) continue;
        ++chosen_pieces;
        masked += m.inputs[i] == v.mask_id;
      }
      ++words;
      chosen_words += chosen;
      cut_words += starts[w] / 7 != (ends[w] - 1) / 7;
    }
  }
  ASSERT_GT(cut_words, 10000) << "packing cuts words between rows";
  EXPECT_NEAR(static_cast<double>(chosen_words) / words, 0.15, 0.005);
  EXPECT_NEAR(static_cast<double>(masked) / chosen_pieces, 0.8, 0.01);
}

INSTANTIATE_TEST_SUITE_P(MaskedLm, WholeWordMasking,
                         ::testing::Values(PieceMarking::wordpiece, PieceMarking::sentencepiece),
                         [](const auto& param_info) {
                           return std::string(param_info.param == PieceMarking::wordpiece
                                                  ? "WordPieceContinuations"
                                                  : "SentencePieceWordStarts");
                         });

TEST(MaskedLm, SentencePieceMarksWordStartsAndAngleBracketPiecesButNotBytes) {
  MaskingVocab v;
  mark_pieces(v,
              {"<unk>", "<s>",
               "\xe2\x96\x81"
               "cat",
               "s", "<0x41>", "[MASK]"},
              PieceMarking::sentencepiece);
  EXPECT_EQ(v.special, (std::vector<bool>{true, true, false, false, false, true}));
  EXPECT_EQ(v.continuation, (std::vector<bool>{false, false, false, true, true, false}));
}

TEST(MaskedLm, TheSameSeedMasksAlikeAndAnotherSeedOtherwise) {
  const PackedSequences p = pack_sequences(random_batch(32, 4), 128);
  const MaskedSequences a = mask_tokens(p, vocab(), MaskingOptions{}, 42);
  EXPECT_EQ(a.inputs, mask_tokens(p, vocab(), MaskingOptions{}, 42).inputs);
  EXPECT_EQ(a.targets, mask_tokens(p, vocab(), MaskingOptions{}, 42).targets);
  EXPECT_NE(a.targets, mask_tokens(p, vocab(), MaskingOptions{}, 43).targets);
}

TEST(MaskedLm, ABatchAlwaysHasATargetWhenAnyTokenMayBeChosen) {
  MaskingOptions rare;
  rare.rate = 1e-9;
  RawBatch batch;
  batch.add({2, 9, 3}, -1);
  const MaskedSequences m = mask_tokens(pack_sequences(batch, 8), vocab(), rare, 1);
  EXPECT_EQ(m.chosen, 1);
  EXPECT_EQ(m.targets[1], 9);
}

TEST(MaskedLm, AVocabularyWithoutMaskIsRefusedNamingTheKey) {
  try {
    masking_vocab(WordPieceVocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"}), "tokenizer.model");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.model: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[MASK]"), std::string::npos) << e.what();
  }
}

}  // namespace masked_lm_test
}  // namespace sift
