// A word-vector text file (fastText's and word2vec's .vec, GloVe's .txt): an optional
// "count dim" header line, then a word and its `dim` values per line. The one reader of
// the format: the embeddings take the values of the vocabulary's words from it
// (models/embeddings.h), and the fastText model's vocabulary takes its words as
// `-pretrainedVectors` does (framework/runtime/base/task.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/line_reader.h"

namespace sift {

class WordVectorFile {
 public:
  // Throws sift::Error "model.pretrained: ..." for a file that cannot be opened.
  WordVectorFile(const std::string& path, int64_t dim);
  // The next vector's word and its `dim` value fields (views valid until the next call);
  // false at the end. Throws sift::Error naming PATH:LINE for an over-long line, a header
  // whose dimension is not `dim`, or a line without `dim` values after its word.
  bool next(std::string_view& word, std::vector<std::string_view>& values);
  // The values of the line `next` gave, as floats into out[0..dim): PATH:LINE and the word
  // on a value that is not a finite number.
  void parse(std::string_view word, const std::vector<std::string_view>& values, float* out) const;

 private:
  std::string path_;
  int64_t dim_;
  std::unique_ptr<LineReader> reader_;
  std::string line_;
  std::vector<std::string_view> fields_;
};

}  // namespace sift
