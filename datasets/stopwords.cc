#include "datasets/stopwords.h"

#include <fmt/format.h>

#include <sstream>

#include "core/atomic_file.h"
#include "core/file_bytes.h"
#include "core/error.h"

namespace sift {
namespace {

// Written for Sift (not copied from a list under another licence): the closed-class
// English words that carry no topic, plus the halves of split contractions.
constexpr const char* kEnglish =
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for "
    "from further had has have having he her here hers herself him himself his how i if in "
    "into is it its itself just me more most my myself no nor not now of off on once only or "
    "other our ours ourselves out over own same she should so some such than that the their "
    "theirs them themselves then there these they this those through to too under until up "
    "very was we were what when where which while who whom why will with would you your "
    "yours yourself yourselves s t d m o y ll re ve don ain isn aren wasn weren hasn haven "
    "hadn doesn didn won wouldn shan shouldn mustn couldn needn mightn";

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] == '#') continue;
    std::istringstream fields(line);
    std::string word;
    while (fields >> word) words.push_back(word);
  }
  return words;
}

}  // namespace

const std::vector<std::string>& english_stopwords() {
  static const std::vector<std::string> words = split_words(kEnglish);
  return words;
}

std::vector<std::string> resolve_stopwords(const std::string& value) {
  if (value.empty()) return {};
  if (value == "english") return english_stopwords();
  std::vector<std::string> words;
  try {
    words = split_words(read_file_bytes(value));
  } catch (const Error& e) {
    throw Error(fmt::format("tokenizer.stopwords: {}", e.what()));
  }
  if (words.empty()) {
    throw Error(fmt::format("tokenizer.stopwords: {} holds no word (give \"\" for no stop words)",
                            value));
  }
  return words;
}

void save_stopwords(const std::string& path, const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += w + "\n";
  write_file_atomically(path, text);
}

}  // namespace sift
