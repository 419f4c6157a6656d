#include "datasets/wordpiece.h"

#include <utf8proc.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"
#include "datasets/unicode.h"

namespace sift {

namespace {

bool category_is(int32_t cp, std::initializer_list<utf8proc_category_t> categories) {
  return std::find(categories.begin(), categories.end(), utf8proc_category(cp)) != categories.end();
}

// BERT's _is_whitespace, and what Python's str.split() also splits on that survives
// cleaning (the line and paragraph separators).
bool is_space(int32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' ||
         category_is(cp, {UTF8PROC_CATEGORY_ZS, UTF8PROC_CATEGORY_ZL, UTF8PROC_CATEGORY_ZP});
}

// BERT's _is_control: categories C* but tab, newline and carriage return.
bool is_control(int32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return category_is(cp, {UTF8PROC_CATEGORY_CN, UTF8PROC_CATEGORY_CC, UTF8PROC_CATEGORY_CF,
                          UTF8PROC_CATEGORY_CS, UTF8PROC_CATEGORY_CO});
}

// BERT's _is_punctuation: every non-alphanumeric ASCII symbol, and categories P*.
bool is_punctuation(int32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126)) {
    return true;
  }
  return category_is(
      cp, {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS, UTF8PROC_CATEGORY_PE,
           UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF, UTF8PROC_CATEGORY_PO});
}

// BERT's _is_chinese_char: the CJK Unified Ideographs blocks (not Hangul or kana).
bool is_cjk(int32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::vector<int32_t> code_points(std::string_view text) {
  std::vector<int32_t> cps;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    cps.push_back(c.cp < 0 ? 0xFFFD : c.cp);
    i += c.length;
  }
  return cps;
}

// Cleaning leaves valid UTF-8 without NUL, which utf8proc always maps.
std::string normalized(const std::string& text, int options) {
  return utf8proc_normalized(text, options).value_or(text);
}

// _clean_text, then _tokenize_chinese_chars: control characters, NUL and U+FFFD go,
// whitespace becomes ' ', CJK ideographs get spaces around them.
std::string cleaned(std::string_view text, bool split_cjk) {
  std::vector<int32_t> out;
  for (int32_t cp : code_points(text)) {
    if (cp == 0 || cp == 0xFFFD || is_control(cp)) continue;
    const bool cjk = split_cjk && is_cjk(cp);
    if (cjk) out.push_back(' ');
    out.push_back(cp == '\t' || cp == '\n' || cp == '\r' || category_is(cp, {UTF8PROC_CATEGORY_ZS})
                      ? ' '
                      : cp);
    if (cjk) out.push_back(' ');
  }
  return utf8_of(out);
}

std::vector<std::vector<int32_t>> split_on_space(const std::vector<int32_t>& cps) {
  std::vector<std::vector<int32_t>> words;
  bool in_word = false;
  for (int32_t cp : cps) {
    if (is_space(cp)) {
      in_word = false;
    } else {
      if (!in_word) words.emplace_back();
      words.back().push_back(cp);
      in_word = true;
    }
  }
  return words;
}

bool is_cased_letter(int32_t cp) {
  return category_is(cp, {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT});
}

bool is_case_ignorable(int32_t cp) {
  return cp == '\'' || cp == '.' || cp == ':' || cp == 0xB7 || cp == 0x2019 ||
         category_is(cp, {UTF8PROC_CATEGORY_MN, UTF8PROC_CATEGORY_ME, UTF8PROC_CATEGORY_CF,
                          UTF8PROC_CATEGORY_LM, UTF8PROC_CATEGORY_SK});
}

// Python's Final_Sigma: a cased letter before (past case-ignorables), none after.
bool is_final_sigma(const std::vector<int32_t>& w, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(w[j - 1])) --j;
  if (j == 0 || !is_cased_letter(w[j - 1])) return false;
  size_t k = i + 1;
  while (k < w.size() && is_case_ignorable(w[k])) ++k;
  return k == w.size() || !is_cased_letter(w[k]);
}

// Python's str.lower(): simple lower-case mappings, İ to "i̇" (its one unconditional
// special casing) and the final-sigma rule.
std::vector<int32_t> lowered(const std::vector<int32_t>& w) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0x130) {
      out.insert(out.end(), {'i', 0x307});
    } else if (w[i] == 0x3A3) {
      out.push_back(is_final_sigma(w, i) ? 0x3C2 : 0x3C3);
    } else {
      out.push_back(utf8proc_tolower(w[i]));
    }
  }
  return out;
}

std::vector<int32_t> without_accents(const std::vector<int32_t>& w) {
  std::vector<int32_t> out;
  for (int32_t cp : code_points(normalized(utf8_of(w), UTF8PROC_DECOMPOSE))) {
    if (!category_is(cp, {UTF8PROC_CATEGORY_MN})) out.push_back(cp);
  }
  return out;
}

// _run_split_on_punc: each punctuation character a word of its own.
void split_punctuation(const std::vector<int32_t>& w, std::vector<std::string>& out) {
  std::vector<int32_t> run;
  for (int32_t cp : w) {
    if (is_punctuation(cp)) {
      if (!run.empty()) out.push_back(utf8_of(run));
      run.clear();
      out.push_back(utf8_of({cp}));
    } else {
      run.push_back(cp);
    }
  }
  if (!run.empty()) out.push_back(utf8_of(run));
}

}  // namespace

WordPieceVocab WordPieceVocab::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open WordPiece vocabulary " + path);
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    tokens.push_back(line);
  }
  return WordPieceVocab(std::move(tokens), path);
}

WordPieceVocab::WordPieceVocab(std::vector<std::string> tokens, const std::string& where)
    : tokens_(std::move(tokens)) {
  if (tokens_.empty()) throw Error("WordPiece vocabulary " + where + " holds no token");
  for (size_t i = 0; i < tokens_.size(); ++i) {
    // BERT's load_vocab keeps the last line of a repeated token; vocab.txt files of
    // published models repeat none, so a repeat is a broken file.
    if (!ids_.emplace(tokens_[i], static_cast<int32_t>(i)).second) {
      throw Error(where + ":" + std::to_string(i + 1) + ": token '" + tokens_[i] +
                  "' is listed twice");
    }
  }
}

int32_t WordPieceVocab::id(std::string_view token) const {
  const auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

WordPieceTokenizer::WordPieceTokenizer(WordPieceVocab vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  const auto required = [&](const std::string& token) {
    const int32_t id = vocab_.id(token);
    if (id < 0) throw Error("the WordPiece vocabulary has no " + token + " token");
    return id;
  };
  unk_ = required(options_.unk);
  cls_ = required(options_.cls);
  sep_ = required(options_.sep);
}

std::vector<std::string> WordPieceTokenizer::basic_tokens(std::string_view text) const {
  const std::string clean = normalized(cleaned(text, options_.split_cjk), UTF8PROC_COMPOSE);
  const bool strip = options_.strip_accents.value_or(options_.lowercase);
  std::vector<std::string> out;
  for (std::vector<int32_t>& word : split_on_space(code_points(clean))) {
    if (options_.lowercase) word = lowered(word);
    if (strip) word = without_accents(word);
    split_punctuation(word, out);
  }
  return out;
}

void WordPieceTokenizer::append_wordpieces(const std::string& word,
                                           std::vector<int32_t>& ids) const {
  // Byte offset of each character (basic tokens are valid UTF-8), then the word's end.
  std::vector<size_t> at;
  for (size_t i = 0; i < word.size(); i += decode_utf8(word, i).length) at.push_back(i);
  if (at.size() > options_.max_chars_per_word) {
    ids.push_back(unk_);
    return;
  }
  const size_t chars = at.size();
  at.push_back(word.size());
  const size_t first = ids.size();
  std::string part;
  for (size_t start = 0; start < chars;) {
    int32_t found = -1;
    size_t end = chars;
    for (; end > start; --end) {
      part.assign(start > 0 ? options_.continuation : std::string());
      part.append(word, at[start], at[end] - at[start]);
      found = vocab_.id(part);
      if (found >= 0) break;
    }
    if (found < 0) {  // one piece matches nothing: the whole word is unknown
      ids.resize(first);
      ids.push_back(unk_);
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<int32_t> ids;
  for (const std::string& word : basic_tokens(text)) append_wordpieces(word, ids);
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(vocab_.token(id));
  return pieces;
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text, size_t max_tokens) const {
  std::vector<int32_t> ids{cls_};
  for (const std::string& word : basic_tokens(text)) {
    append_wordpieces(word, ids);
    if (max_tokens != 0 && ids.size() >= max_tokens - 1) break;
  }
  if (max_tokens != 0 && ids.size() > max_tokens - 1) ids.resize(max_tokens - 1);
  ids.push_back(sep_);
  return ids;
}

std::shared_ptr<const WordPieceTokenizer> open_wordpiece(const std::string& vocab_path,
                                                         bool lowercase) {
  WordPieceVocab vocab = WordPieceVocab::load(vocab_path);
  if (vocab.token(0) != "[PAD]") {
    throw Error(vocab_path + ":1: the first token must be [PAD] (id 0 pads every batch), not '" +
                vocab.token(0) + "'");
  }
  WordPieceOptions options;
  options.lowercase = lowercase;
  return std::make_shared<const WordPieceTokenizer>(std::move(vocab), options);
}

}  // namespace sift
