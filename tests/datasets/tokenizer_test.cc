#include "datasets/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sift {
namespace tokenizer_test {

using Tokens = std::vector<std::string>;

WordTokenizerOptions options_with(bool lowercase, bool split_punctuation) {
  WordTokenizerOptions o;
  o.lowercase = lowercase;
  o.split_punctuation = split_punctuation;
  return o;
}

Tokens tokenize(std::string_view text, WordTokenizerOptions options = {}) {
  Tokens out;
  WordTokenizer(options).tokenize(text, out);
  return out;
}

TEST(WordTokenizer, SplitsPunctuationIntoSingleTokens) {
  EXPECT_EQ(tokenize("don't!"), (Tokens{"don", "'", "t", "!"}));
  EXPECT_EQ(tokenize("a,b...c (d)"), (Tokens{"a", ",", "b", ".", ".", ".", "c", "(", "d", ")"}));
}

TEST(WordTokenizer, KeepsPunctuationInWordsWhenNotSplitting) {
  EXPECT_EQ(tokenize("don't stop!", options_with(true, false)), (Tokens{"don't", "stop!"}));
}

TEST(WordTokenizer, DropsPunctuationAsASeparator) {
  WordTokenizerOptions o;
  o.drop_punctuation = true;
  EXPECT_EQ(tokenize("mathew@mantis.co.uk: don't (ok)", o),
            (Tokens{"mathew", "mantis", "co", "uk", "don", "t", "ok"}));
  o.split_punctuation = false;  // drop_punctuation wins
  EXPECT_EQ(tokenize("a-b", o), (Tokens{"a", "b"}));
}

TEST(WordTokenizer, LeavesOutStopWordsAfterLowercasing) {
  WordTokenizerOptions o;
  o.stopwords = {"The", "of", "'"};
  // The list is lowercased with the text; punctuation tokens can be stop words too.
  EXPECT_EQ(tokenize("The Book of THE year's end", o), (Tokens{"book", "year", "s", "end"}));
  o.lowercase = false;
  EXPECT_EQ(tokenize("The the of", o), (Tokens{"the"}));
}

TEST(WordTokenizer, ReusesStringsWhenStopWordsAreLeftOut) {
  WordTokenizerOptions o;
  o.stopwords = {"a"};
  WordTokenizer tokenizer(o);
  Tokens out;
  tokenizer.tokenize("x a y a", out);
  EXPECT_EQ(out, (Tokens{"x", "y"}));
  tokenizer.tokenize("a a a", out);
  EXPECT_TRUE(out.empty());
  tokenizer.tokenize("a b", out);
  EXPECT_EQ(out, (Tokens{"b"}));
}

TEST(WordTokenizer, LowercasesAscii) {
  EXPECT_EQ(tokenize("Hello WORLD"), (Tokens{"hello", "world"}));
  EXPECT_EQ(tokenize("Hello WORLD", options_with(false, true)), (Tokens{"Hello", "WORLD"}));
}

TEST(WordTokenizer, LowercasesLatinGreekAndCyrillic) {
  EXPECT_EQ(tokenize("ÉCOLE"), (Tokens{"école"}));
  EXPECT_EQ(tokenize("ПРИВЕТ Ёлка"), (Tokens{"привет", "ёлка"}));
  EXPECT_EQ(tokenize("ΑΘΉΝΑ ŁÓDŹ Ÿ"), (Tokens{"αθήνα", "łódź", "ÿ"}));
  EXPECT_EQ(tokenize("İ×"), (Tokens{"i", "×"}));  // İ folds to plain i; × is a math sign
}

TEST(WordTokenizer, MultiByteCharactersAreWordCharacters) {
  EXPECT_EQ(tokenize("日本語テキスト,ok"), (Tokens{"日本語テキスト", ",", "ok"}));
}

TEST(WordTokenizer, SplitsOnAllWhitespaceIncludingNoBreakSpace) {
  EXPECT_EQ(tokenize(" a\tb\nc\r\nd\v\fe\xC2\xA0" "f  "), (Tokens{"a", "b", "c", "d", "e", "f"}));
  // 0xC2 followed by anything but 0xA0 is no space (here U+00AA ª, a letter).
  EXPECT_EQ(tokenize("a\xC2\xAA" "b"), (Tokens{"a\xC2\xAA" "b"}));
}

TEST(WordTokenizer, EmptyAndBlankTextGiveNoTokens) {
  EXPECT_TRUE(tokenize("").empty());
  EXPECT_TRUE(tokenize(" \t\n\xC2\xA0").empty());
}

TEST(WordTokenizer, ReplacesPreviousContentsAndReusesStrings) {
  WordTokenizer tokenizer;
  Tokens out;
  tokenizer.tokenize("one two three four", out);
  ASSERT_EQ(out.size(), 4u);
  out[0].reserve(64);
  const char* buffer = out[0].data();
  tokenizer.tokenize("Five six", out);
  EXPECT_EQ(out, (Tokens{"five", "six"}));
  EXPECT_EQ(out[0].data(), buffer);  // assigned into, not reallocated
}

TEST(WordTokenizer, KeepsInvalidUtf8Bytes) {
  EXPECT_EQ(tokenize("A\xFF\xC3"), (Tokens{"a\xFF\xC3"}));
  // A lone continuation byte, a surrogate and a truncated sequence stay word bytes.
  EXPECT_EQ(tokenize("\x80\xED\xA0\x80 \xE2\x80"), (Tokens{"\x80\xED\xA0\x80", "\xE2\x80"}));
}

// ---- Unicode text: utf8proc's case folding and character categories -----------------

WordTokenizerOptions dropping_punctuation() {
  WordTokenizerOptions o;
  o.drop_punctuation = true;
  return o;
}

WordTokenizerOptions with_nfkc() {
  WordTokenizerOptions o;
  o.nfkc = true;
  return o;
}

TEST(WordTokenizer, LowercasesRomanianCommaBelowLetters) {
  EXPECT_EQ(tokenize("ȘTIRI ȚARĂ"), (Tokens{"știri", "țară"}));
}

TEST(WordTokenizer, LowercasesVietnameseLettersWithTwoDiacritics) {
  EXPECT_EQ(tokenize("VIỆT NAM, Đà Nẵng"), (Tokens{"việt", "nam", ",", "đà", "nẵng"}));
}

TEST(WordTokenizer, FoldsGreekFinalSigmaLikeAnyOtherSigma) {
  // ΟΔΟΣ and οδος meet: case folding maps Σ, σ and final ς to σ.
  EXPECT_EQ(tokenize("ΟΔΟΣ οδος Οδός"), (Tokens{"οδοσ", "οδοσ", "οδόσ"}));
}

TEST(WordTokenizer, LowercasesArmenianAndSplitsItsFullStop) {
  EXPECT_EQ(tokenize("ՀԱՅԱՍՏԱՆ Երևան։"), (Tokens{"հայաստան", "երեւան", "։"}));
}

TEST(WordTokenizer, KeepsArabicVowelMarksInWordsAndSplitsArabicPunctuation) {
  EXPECT_EQ(tokenize("مَرْحَبًا، كيف حالك؟"),
            (Tokens{"مَرْحَبًا", "،", "كيف", "حالك", "؟"}));
}

TEST(WordTokenizer, FoldsGermanSharpSToSs) {
  EXPECT_EQ(tokenize("Straße STRASSE STRAẞE"), (Tokens{"strasse", "strasse", "strasse"}));
  EXPECT_EQ(tokenize("Straße", options_with(false, true)), (Tokens{"Straße"}));
}

TEST(WordTokenizer, SplitsCurlyQuotesFromWords) {
  EXPECT_EQ(tokenize("“Like this” ‘it’s’ «ça» „so“"),
            (Tokens{"“", "like", "this", "”", "‘", "it", "’", "s", "’", "«", "ça", "»", "„",
                    "so", "“"}));
  EXPECT_EQ(tokenize("“like this”—and… that", dropping_punctuation()),
            (Tokens{"like", "this", "and", "that"}));
}

TEST(WordTokenizer, MakesEachEmojiATokenAndKeepsItWhenDroppingPunctuation) {
  // Skin tones, variation selectors and ZERO WIDTH JOINER sequences stay with their emoji.
  EXPECT_EQ(tokenize("great👍🏽!! love❤️ 👨‍👩‍👧fam"),
            (Tokens{"great", "👍🏽", "!", "!", "love", "❤️", "👨‍👩‍👧", "fam"}));
  EXPECT_EQ(tokenize("great👍!", dropping_punctuation()), (Tokens{"great", "👍"}));
  EXPECT_EQ(tokenize("great👍!", options_with(true, false)), (Tokens{"great👍!"}));
}

TEST(WordTokenizer, SplitsOnEveryUnicodeSpace) {
  // EM SPACE, IDEOGRAPHIC SPACE, LINE SEPARATOR, NEXT LINE, NARROW NO-BREAK SPACE.
  EXPECT_EQ(tokenize("a\u2003b\u3000c\u2028d\u0085e\u202Ff"),
            (Tokens{"a", "b", "c", "d", "e", "f"}));
  // ZERO WIDTH SPACE is a format character, not a space.
  EXPECT_EQ(tokenize("a\u200Bb"), (Tokens{"a\u200Bb"}));
}

TEST(WordTokenizer, SplitsSymbolsAndNonAsciiPunctuation) {
  EXPECT_EQ(tokenize("5€ 3×4 ©2024 a¿b 日本語。"),
            (Tokens{"5", "€", "3", "×", "4", "©", "2024", "a", "¿", "b", "日本語", "。"}));
}

TEST(WordTokenizer, LeavesChineseAndJapaneseWithoutSpacesInOnePiece) {
  // Documented: text without spaces needs tokenizer.type sentencepiece.
  EXPECT_EQ(tokenize("我爱北京天安门"), (Tokens{"我爱北京天安门"}));
  EXPECT_EQ(tokenize("東京に行きました"), (Tokens{"東京に行きました"}));
}

TEST(WordTokenizer, NormalisesCompatibilityCharactersWithNfkc) {
  // Case folding alone already unties the ﬁ ligature, but not full-width letters.
  EXPECT_EQ(tokenize("ﬁne ＡＢＣ ①"), (Tokens{"fine", "ａｂｃ", "①"}));
  EXPECT_EQ(tokenize("ﬁne ＡＢＣ ①", with_nfkc()), (Tokens{"fine", "abc", "1"}));
  // Decomposed VIỆT (E + dot below + circumflex) composes to the same token as VIỆT.
  EXPECT_EQ(tokenize("VIE\u0323\u0302T", with_nfkc()), (Tokens{"việt"}));
  EXPECT_EQ(tokenize("VIE\u0323\u0302T"), (Tokens{"vie\u0323\u0302t"}));
}

TEST(WordTokenizer, FoldsStopWordsLikeText) {
  WordTokenizerOptions o;
  o.stopwords = {"STRASSE", "Οδος"};
  EXPECT_EQ(tokenize("Straße ΟΔΟΣ weg", o), (Tokens{"weg"}));
}

TEST(WordTokenizer, LeavesAsciiTextAsBefore) {
  // Every ASCII byte: the same classes as always (0x1C..0x1F are word bytes).
  std::string all;
  for (int c = 1; c < 128; ++c) all += static_cast<char>(c);
  Tokens expected = {"\x01\x02\x03\x04\x05\x06\x07\x08"};
  expected.push_back(std::string("\x0E\x0F\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1A\x1B\x1C\x1D\x1E\x1F"));
  for (char c : std::string("!\"#$%&'()*+,-./")) expected.emplace_back(1, c);
  expected.push_back("0123456789");
  for (char c : std::string(":;<=>?@")) expected.emplace_back(1, c);
  expected.push_back("abcdefghijklmnopqrstuvwxyz");
  for (char c : std::string("[\\]^_`")) expected.emplace_back(1, c);
  expected.push_back("abcdefghijklmnopqrstuvwxyz");
  for (char c : std::string("{|}~")) expected.emplace_back(1, c);
  expected.push_back("\x7F");
  EXPECT_EQ(tokenize(all), expected);
}

}  // namespace tokenizer_test
}  // namespace sift
