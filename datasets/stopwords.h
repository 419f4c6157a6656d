// Stop words: frequent function words a bag-of-words model is better without (Yao et
// al. 2019 remove them before training fastText on 20 Newsgroups).
#pragma once

#include <string>
#include <vector>

namespace sift {

// The built-in English list (tokenizer.stopwords: english): pronouns, articles,
// auxiliaries, prepositions, conjunctions, and the pieces contractions split into
// ("don", "t", "ll", "ve", ...). Lower case.
const std::vector<std::string>& english_stopwords();

// tokenizer.stopwords resolved: empty for "", the built-in list for "english", else
// the words of the file at `value` (separated by whitespace; a line starting with '#'
// is a comment). A missing or empty file is a sift::Error naming the option.
std::vector<std::string> resolve_stopwords(const std::string& value);

// One word per line, written to PATH.tmp and renamed: a run folder keeps the list it
// was trained with, so predicting never depends on the original file.
// resolve_stopwords reads it back.
void save_stopwords(const std::string& path, const std::vector<std::string>& words);

}  // namespace sift
