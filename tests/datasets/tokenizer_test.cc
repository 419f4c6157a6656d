#include "datasets/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sift {
namespace {

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
  EXPECT_EQ(tokenize("İ×"), (Tokens{"i×"}));  // İ has a 1-byte lowercase; × stays
}

TEST(WordTokenizer, MultiByteCharactersAreWordCharacters) {
  EXPECT_EQ(tokenize("日本語テキスト,ok"), (Tokens{"日本語テキスト", ",", "ok"}));
}

TEST(WordTokenizer, SplitsOnAllWhitespaceIncludingNoBreakSpace) {
  EXPECT_EQ(tokenize(" a\tb\nc\r\nd\v\fe\xC2\xA0" "f  "), (Tokens{"a", "b", "c", "d", "e", "f"}));
  // 0xC2 followed by anything but 0xA0 is a word character (here U+00A9 ©).
  EXPECT_EQ(tokenize("a\xC2\xA9" "b"), (Tokens{"a\xC2\xA9" "b"}));
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
}

}  // namespace
}  // namespace sift
