#include "datasets/wordpiece.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace wordpiece_test {

using sift::testing::error_of;
using sift::testing::make_temp_dir;
using sift::testing::slurp;
using sift::testing::write_file;
using Strings = std::vector<std::string>;

const Strings kVocab{"[PAD]",  "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",   "un", "##aff",
                     "##able", "hello", "world", "!",     ",",      "'",     ".",  "cafe",
                     "naive",  "a",     "##a",   "##s",   "don",    "t",     "中", "国",
                     "ο",      "##δ",   "##ο",   "##ς",   "##σ",    "ecole", "i",  "##stanbul",
                     "e",      "Café",  "##é",   "x"};

WordPieceTokenizer tokenizer(bool lowercase = true) {
  WordPieceOptions options;
  options.lowercase = lowercase;
  return WordPieceTokenizer(WordPieceVocab(kVocab), options);
}

TEST(WordPiece, SplitsAWordLongestMatchFirstWithContinuations) {
  EXPECT_EQ(tokenizer().tokenize("unaffable"), (Strings{"un", "##aff", "##able"}));
  EXPECT_EQ(tokenizer().tokenize("Hello, WORLD!"), (Strings{"hello", ",", "world", "!"}));
}

TEST(WordPiece, AWordWithAPieceOutsideTheVocabularyIsUnknownWhole) {
  EXPECT_EQ(tokenizer().tokenize("unaffablez the"), (Strings{"[UNK]", "the"}));
}

TEST(WordPiece, WordsOfMoreThanOneHundredCharactersAreUnknown) {
  EXPECT_EQ(tokenizer().tokenize(std::string(100, 'a')).size(), 100u);
  EXPECT_EQ(tokenizer().tokenize(std::string(101, 'a')), (Strings{"[UNK]"}));
}

TEST(WordPiece, EncodeFramesWithClsAndSepAndCutsToMaxTokens) {
  const WordPieceTokenizer t = tokenizer();
  EXPECT_EQ(t.encode("hello world", 0), (std::vector<int32_t>{2, 9, 10, 3}));
  EXPECT_EQ(t.encode("unaffable world", 4), (std::vector<int32_t>{2, 6, 7, 3}));
  EXPECT_EQ(t.encode("", 8), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(t.encode("hello", 2), (std::vector<int32_t>{2, 3}));
}

TEST(WordPiece, BytesThatAreNotUtf8AndControlCharactersAreDropped) {
  EXPECT_EQ(tokenizer().tokenize("hel\xff\xfelo\x01 wor\x7f"
                                 "ld"),
            (Strings{"hello", "world"}));
}

TEST(WordPiece, CasedModelsKeepCaseAndAccents) {
  EXPECT_EQ(tokenizer(false).tokenize("Café"), (Strings{"Café"}));
  EXPECT_EQ(tokenizer(true).tokenize("Café"), (Strings{"cafe"}));
}

TEST(WordPieceVocab, AMissingSpecialTokenOrATokenListedTwiceIsRefused) {
  EXPECT_EQ(error_of([] {
              WordPieceTokenizer t(WordPieceVocab({"[CLS]", "[SEP]", "a"}));
            }),
            "the WordPiece vocabulary has no [UNK] token");
  const std::string path = make_temp_dir("sift_wp") + "/vocab.txt";
  write_file(path, "[UNK]\n[CLS]\n[SEP]\nab\r\nab\n");
  EXPECT_EQ(error_of([&] { WordPieceVocab::load(path); }), path + ":5: token 'ab' is listed twice");
  EXPECT_CONTAINS(error_of([] { WordPieceVocab::load("/nonexistent/vocab.txt"); }),
                  "cannot open WordPiece vocabulary /nonexistent/vocab.txt");
}

// The texts the reference comparison runs over: accents, CJK, emoji, control and format
// characters, punctuation of every kind, final sigma, dotted capital I, Unicode spaces,
// decomposed accents, scripts with spacing marks, very long words and empty text.
const Strings kTexts{
    "",
    "   \t\r\n ",
    "Café Naïve ÉCOLE résumé",
    "e\u0301cole cafe\u0301",
    "我爱北京天安门 中国人",
    "日本語のテキスト 한국어 텍스트",
    "hi 👋🏽 there 🇫🇷 ❤️ ok",
    "a\x01"
    "b\u200bc\u00adtab\tdone\r\nnext\u2028line\u3000wide\u00a0nbsp",
    "don't! (yes)—no… «quote» ¿qué? [x] {y} <z> a@b #tag $5 %1 ^ & * _ ~ ` | \\ /",
    "ΟΔΟΣ ΟΔΟΣ. ΣΑΣ Σ ΌΣΟΣ'",
    "İstanbul ISTANBUL ǅemal",
    "हिन्दी भाषा தமிழ் ภาษาไทย العربية",
    "unaffable " + std::string(120, 'a') + " " + std::string(100, 'a'),
    "Straße ﬁne ＡＢＣ ①②",
};

nlohmann::json reference(const Strings& texts, bool lowercase) {
  const std::string dir = make_temp_dir("sift_wp_ref");
  write_file(dir + "/in.json",
             nlohmann::json{{"vocab", kVocab}, {"lowercase", lowercase}, {"texts", texts}}.dump());
  const std::string cmd = "/usr/bin/python3 " + std::string(SIFT_SOURCE_DIR) +
                          "/tests/datasets/bert_tokenizer_reference.py < " + dir + "/in.json > " +
                          dir + "/out.json 2>" + dir + "/err";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir + "/err");
  return nlohmann::json::parse(slurp(dir + "/out.json"));
}

void expect_reference(bool lowercase) {
  const WordPieceTokenizer t = tokenizer(lowercase);
  const nlohmann::json want = reference(kTexts, lowercase);
  ASSERT_EQ(want.size(), kTexts.size());
  for (size_t i = 0; i < kTexts.size(); ++i) {
    EXPECT_EQ(t.basic_tokens(kTexts[i]), want[i]["basic"].get<Strings>()) << kTexts[i];
    EXPECT_EQ(t.tokenize(kTexts[i]), want[i]["pieces"].get<Strings>()) << kTexts[i];
  }
}

TEST(WordPiece, UncasedTokensEqualTheReferenceAlgorithmOnPythonsUnicodeTables) {
  expect_reference(true);
}

TEST(WordPiece, CasedTokensEqualTheReferenceAlgorithmOnPythonsUnicodeTables) {
  expect_reference(false);
}

}  // namespace wordpiece_test
}  // namespace sift
