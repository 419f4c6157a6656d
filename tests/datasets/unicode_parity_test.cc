// The package's pure-Python export reader (python/sift/torch_export.py, examples/
// classify.py's) tokenizes as WordTokenizer does, from the tables of unicode.json
// alone (unicode_tables_json), whatever Python's own Unicode version: every option
// combination on multilingual text and on seeded random strings of awkward characters
// (combining marks, Hangul jamo, joiners, emoji, compatibility characters, invalid bytes).
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/tokenizer.h"
#include "datasets/unicode.h"
#include "tests/test_files.h"

namespace sift {
namespace unicode_parity_test {

const std::string kSource = SIFT_SOURCE_DIR;

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

void append_cp(int32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::vector<std::string> corpus() {
  std::vector<std::string> lines = {
      "ȘTIRI din România: „Țara” are 5€!",
      "VIỆT NAM — Đà Nẵng, VIE\u0323\u0302T",
      "ΟΔΟΣ οδός ΆΝΘΡΩΠΟΣ; ΐ ΰ",
      "ՀԱՅԱՍՏԱՆ Երևան։ «Բարև»",
      "مَرْحَبًا، كيف حالك؟ ١٢٣",
      "Straße STRASSE ẞ Maße ǅ ﬃ",
      "“Like this” ‘it’s’ «ça» „so“ — ok…",
      "great👍🏽!! love❤️ 👨‍👩‍👧fam 🇷🇴 #1️⃣",
      "我爱北京天安门。東京に行きました、ＡＢＣ① ㍿ ｶﾀｶﾅ",
      "한국어 텍스트 \u1100\u1161\u11A8 \u1100\u1161 가\u11A7 ㈜",
      "İSTANBUL ıi Iı ŉ ǰ ΐ ﬅ",
      "a\u2003b\u3000c\u2028d\u0085e\u202Ff\u200Bg\u00A0h",
      "A\xFF\xC3 \x80\xED\xA0\x80 \xE2\x80 \xF4\x90\x80\x80 \xC0\xAF ok",
      "\u1E9B\u0323 \u0041\u030A\u0301 \u0071\u0307\u0323 \u00C5\u0316 e\u0301\u0300\u0327",
      "plain ASCII, with punctuation: don't! (yes) $5 a+b=c ~x^y",
  };
  // Seeded random strings over a pool of troublesome code points.
  const std::vector<std::pair<int32_t, int32_t>> ranges = {
      {0x20, 0x7E},     {0xA0, 0x17F},    {0x300, 0x36F},   {0x370, 0x3FF},
      {0x400, 0x4FF},   {0x530, 0x58F},   {0x5B0, 0x5C7},   {0x600, 0x6FF},
      {0x900, 0x97F},   {0xE00, 0xE7F},   {0xF70, 0xF85},   {0x1100, 0x11FF},
      {0x1E00, 0x1FFF}, {0x2000, 0x206F}, {0x20A0, 0x214F}, {0x2460, 0x24FF},
      {0x3000, 0x30FF}, {0x3200, 0x33FF}, {0xAC00, 0xAC40}, {0xFB00, 0xFB4F},
      {0xFE00, 0xFE0F}, {0xFF00, 0xFFEF}, {0x1D400, 0x1D4FF}, {0x1F300, 0x1F6FF},
      {0x1F3FB, 0x1F3FF}, {0x200D, 0x200D}, {0x10FFF0, 0x10FFFF}, {0x1E030, 0x1E08F}};
  std::mt19937 rng(20);
  for (int line = 0; line < 3000; ++line) {
    std::string s;
    const int length = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < length; ++k) {
      if (rng() % 40 == 0) {
        s += static_cast<char>(0x80 + rng() % 0x80);  // a stray byte
        continue;
      }
      const auto& [lo, hi] = ranges[rng() % ranges.size()];
      append_cp(lo + static_cast<int32_t>(rng() % static_cast<uint32_t>(hi - lo + 1)), s);
    }
    lines.push_back(s);
  }
  return lines;
}

std::string temp_path(const std::string& name) {
  return testing::temp_root() + "/sift_unicode_parity_" + name;
}

std::string read_all(FILE* f) {
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

TEST(UnicodeParity, PythonExampleTokenizesLikeWordTokenizerFromTheExportedTables) {
  const std::string tables = temp_path("unicode.json");
  const std::string input = temp_path("lines.txt");
  std::ofstream(tables) << unicode_tables_json(true).dump();
  const std::vector<std::string> lines = corpus();
  {
    std::ofstream in(input);
    for (const auto& line : lines) in << hex(line) << "\n";
  }
  // lowercase, split_punctuation, drop_punctuation, nfkc
  const std::vector<std::vector<bool>> combos = {
      {true, true, false, false}, {true, true, false, true},  {false, false, false, false},
      {true, false, true, true},  {false, true, false, true}, {true, false, false, false}};
  std::string expected;
  for (const auto& c : combos) {
    WordTokenizerOptions o;
    o.lowercase = c[0];
    o.split_punctuation = c[1];
    o.drop_punctuation = c[2];
    o.nfkc = c[3];
    WordTokenizer tokenizer(o);
    std::vector<std::string> tokens;
    for (const auto& line : lines) {
      tokenizer.tokenize(line, tokens);
      std::string row;
      for (const auto& t : tokens) row += (row.empty() ? "" : " ") + hex(t);
      expected += row + "\n";
    }
  }
  const std::string script = temp_path("check.py");
  std::ofstream(script) << "import json, sys\n"
                           "sys.path.insert(0, '" << kSource << "/python')\n"
                           "from sift import torch_export as classify\n"
                           "t = classify.UnicodeTables(json.load(open(sys.argv[1])))\n"
                           "lines = [bytes.fromhex(l.strip()) for l in open(sys.argv[2])]\n"
                           "combos = [(1,1,0,0), (1,1,0,1), (0,0,0,0), (1,0,1,1), (0,1,0,1),"
                           " (1,0,0,0)]\n"
                           "for c in combos:\n"
                           "    for line in lines:\n"
                           "        toks = classify.tokenize_unicode(line, t, *map(bool, c))\n"
                           "        print(' '.join(x.hex() for x in toks))\n";
  const std::string command = "/usr/bin/python3 " + script + " " + tables + " " + input;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  const std::string actual = read_all(pipe);
  ASSERT_EQ(pclose(pipe), 0) << command;
  std::istringstream a(actual), e(expected);
  std::string got, want;
  size_t row = 0, mismatches = 0;
  while (std::getline(e, want)) {
    ASSERT_TRUE(static_cast<bool>(std::getline(a, got))) << "Python stopped at row " << row;
    if (got != want && ++mismatches <= 10) {
      ADD_FAILURE() << "row " << row << " (options " << row / lines.size() << ", line "
                    << row % lines.size() << " = " << hex(lines[row % lines.size()])
                    << "):\n  C++    " << want << "\n  Python " << got;
    }
    ++row;
  }
  EXPECT_EQ(mismatches, 0u);
  for (const auto& path : {tables, input, script}) std::remove(path.c_str());
}

}  // namespace unicode_parity_test
}  // namespace sift
