#include "datasets/wordpiece_trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace sift {
namespace {

const std::vector<std::string> kSpecial{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

// The UTF-8 characters of `word`, one string each.
std::vector<std::string> characters(const std::string& word) {
  std::vector<std::string> out;
  for (size_t i = 0; i < word.size();) {
    const auto lead = static_cast<unsigned char>(word[i]);
    const size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    out.push_back(word.substr(i, n));
    i += n;
  }
  return out;
}

using Counts = std::unordered_map<std::string, uint64_t>;

// The keys by falling count, ties by spelling; those below `min_count` left out.
std::vector<std::string> by_frequency(const Counts& counts, uint64_t min_count) {
  std::vector<std::pair<std::string, uint64_t>> items;
  for (const auto& [key, count] : counts) {
    if (count >= min_count) items.emplace_back(key, count);
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> keys;
  for (auto& item : items) keys.push_back(std::move(item.first));
  return keys;
}

}  // namespace

std::vector<std::string> train_wordpiece_vocab(const std::vector<std::string>& texts, size_t size,
                                               const WordPieceOptions& options) {
  const WordPieceTokenizer basic(WordPieceVocab(kSpecial), options);
  Counts words, chars;
  for (const auto& text : texts) {
    for (const auto& w : basic.basic_tokens(text)) {
      ++words[w];
      for (const auto& c : characters(w)) ++chars[c];
    }
  }
  std::vector<std::string> tokens = kSpecial;
  std::unordered_set<std::string> have(tokens.begin(), tokens.end());
  const std::vector<std::string> alphabet = by_frequency(chars, 1);
  if (size < tokens.size() + 2 * alphabet.size()) {
    throw Error(fmt::format(
        "tokenizer.vocab_size: {} tokens cannot hold the 5 special tokens and the sample's {} "
        "characters twice (alone and as ## continuations); give at least {}",
        size, alphabet.size(), tokens.size() + 2 * alphabet.size()));
  }
  for (const auto& c : alphabet) {
    if (have.insert(c).second) tokens.push_back(c);
  }
  for (const auto& c : alphabet) tokens.push_back(options.continuation + c);
  for (const auto& w : by_frequency(words, 2)) {
    if (tokens.size() >= size) break;
    if (have.insert(w).second) tokens.push_back(w);
  }
  return tokens;
}

}  // namespace sift
