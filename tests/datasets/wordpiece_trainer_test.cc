#include "datasets/wordpiece_trainer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace sift {
namespace wordpiece_trainer_test {

const std::vector<std::string> kTexts{"The cat sat on the mat.", "the dog sat", "A café, the cat!",
                                      "zebra"};

TEST(WordPieceTrainer, SpecialsComeFirstWithPadAtZeroAndNoSampleWordIsUnknown) {
  const auto tokens = train_wordpiece_vocab(kTexts, 200, {});
  ASSERT_GE(tokens.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(tokens.begin(), tokens.begin() + 5),
            (std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}));
  const WordPieceTokenizer t{WordPieceVocab(tokens)};
  for (const auto& text : kTexts) {
    for (const auto& piece : t.tokenize(text)) EXPECT_NE(piece, "[UNK]") << text;
  }
  // Seen at least twice: one token; "zebra" once: its characters.
  EXPECT_EQ(t.tokenize("the cat sat"), (std::vector<std::string>{"the", "cat", "sat"}));
  EXPECT_EQ(t.tokenize("zebra").size(), 5u);
  // Uncased: accents stripped, as BERT's basic tokenizer does.
  EXPECT_EQ(t.tokenize("café"), (std::vector<std::string>{"c", "##a", "##f", "##e"}));
}

TEST(WordPieceTrainer, TheSizeBoundsTheWordsAndOneBelowTheAlphabetIsRefused) {
  const auto all = train_wordpiece_vocab(kTexts, 1000, {});
  const auto fewer = train_wordpiece_vocab(kTexts, all.size() - 1, {});
  EXPECT_EQ(fewer.size(), all.size() - 1);
  EXPECT_EQ(fewer, std::vector<std::string>(all.begin(), all.end() - 1)) << "most frequent first";
  try {
    train_wordpiece_vocab(kTexts, 10, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tokenizer.vocab_size: ", 0), 0u) << e.what();
  }
}

}  // namespace wordpiece_trainer_test
}  // namespace sift
