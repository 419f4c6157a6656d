#include "models/embeddings.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "datasets/word_vectors.h"
#include "models/init.h"

namespace sift {
namespace {

// Kim (2014): words without a pretrained vector start uniform in [-a, a], a = 0.25,
// about the spread of the word2vec vectors.
constexpr double kRandomBound = 0.25;

// Where a row's vector came from; a better source overwrites a worse one.
enum Source : uint8_t { kRandom = 0, kCaseFolded = 1, kExact = 2 };

// ASCII only: enough for the English vectors these models use, and never changes a
// UTF-8 sequence's bytes.
std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

torch::Tensor load_word_vectors(const std::string& path, const Vocab& vocab, int64_t dim,
                                int64_t* found, std::vector<bool>* has_vector) {
  WordVectorFile file(path, dim);
  auto table = torch::empty({vocab.size(), dim}, torch::kFloat);
  fast_uniform_(table, -kRandomBound, kRandomBound);
  float* rows = table.data_ptr<float>();
  std::vector<uint8_t> source(static_cast<size_t>(vocab.size()), kRandom);
  std::string_view word;
  std::vector<std::string_view> values;
  while (file.next(word, values)) {
    Source kind = kExact;
    int64_t id = vocab.id(word);
    if (id == Vocab::kUnk) {
      const std::string folded = ascii_lower(word);
      if (folded != word) id = vocab.id(folded);
      kind = kCaseFolded;
    }
    // Only the vocabulary's rows are parsed: a 2M-word file is mostly other words.
    if (id == Vocab::kUnk || id == Vocab::kPad || source[id] >= kind) continue;
    file.parse(word, values, rows + id * dim);
    source[id] = kind;
  }
  table[Vocab::kPad].zero_();
  if (found) {
    *found = 0;
    for (uint8_t s : source) *found += s != kRandom;
  }
  if (has_vector) {
    has_vector->assign(source.size(), false);
    for (size_t id = 0; id < source.size(); ++id) (*has_vector)[id] = source[id] != kRandom;
  }
  return table;
}

namespace {

// model.pretrained's vectors of the vocabulary's words (load_word_vectors), the table's
// rows being the vocabulary's ids (`whole_table`) or starting with them (a bag's table,
// its n-gram buckets after them).
torch::Tensor pretrained_vectors(const ModelConfig& config, const ModelShape& shape,
                                 bool whole_table, std::vector<bool>* has_vector) {
  // SentencePiece ids are pieces, not the vocabulary's words.
  if (!shape.vocab ||
      (whole_table ? shape.vocab->size() != shape.num_ids : shape.vocab->size() > shape.num_ids)) {
    throw Error(
        "model.pretrained: word vectors are matched to the words of the vocabulary, so they "
        "need tokenizer.type word");
  }
  int64_t found = 0;
  torch::Tensor vectors =
      load_word_vectors(config.pretrained, *shape.vocab, config.dim, &found, has_vector);
  // No match at all is a wrong file (language, casing), not a usable start.
  if (found == 0) {
    throw Error(fmt::format("model.pretrained: none of the {} vocabulary words has a vector in {}",
                            shape.vocab->size() - 2, config.pretrained));
  }
  return vectors;
}

}  // namespace

torch::nn::Embedding make_word_embedding(const ModelConfig& config, const ModelShape& shape) {
  torch::nn::Embedding embedding(torch::nn::EmbeddingOptions(shape.num_ids, config.dim)
                                     .padding_idx(Vocab::kPad)
                                     .sparse(shape.sparse_gradients));
  torch::NoGradGuard no_grad;
  if (config.pretrained.empty()) {
    fast_uniform_(embedding->weight, -kRandomBound, kRandomBound);
  } else {
    embedding->weight.copy_(pretrained_vectors(config, shape, /*whole_table=*/true, nullptr));
  }
  embedding->weight[Vocab::kPad].zero_();
  if (config.freeze_embeddings) embedding->weight.set_requires_grad(false);
  return embedding;
}

// Odd dims are allowed: the last sin column has no cos beside it.
torch::Tensor sinusoidal_table(int64_t positions, int64_t dim) {
  auto position = torch::arange(positions, torch::kFloat64).unsqueeze(1);
  auto rate = torch::exp(torch::arange(0, dim, 2, torch::kFloat64) *
                         (-std::log(10000.0) / static_cast<double>(dim)));
  auto angles = position * rate;  // [positions, ceil(dim / 2)]
  auto table = torch::zeros({positions, dim}, torch::kFloat64);
  using torch::indexing::Slice;
  table.index_put_({Slice(), Slice(0, torch::indexing::None, 2)}, torch::sin(angles));
  table.index_put_({Slice(), Slice(1, torch::indexing::None, 2)},
                   torch::cos(angles).narrow(1, 0, dim / 2));
  return table.to(torch::kFloat32);
}

torch::Tensor valid_positions(const torch::Tensor& lengths, int64_t length, torch::Device device) {
  auto steps = torch::arange(length, torch::TensorOptions().dtype(torch::kInt64).device(device));
  return steps.unsqueeze(0) < lengths.to(device).unsqueeze(1);
}

namespace {

// fastText's -pretrainedVectors: the rows of the vocabulary's words found in the file
// take their vectors; the other words and the n-gram buckets keep the uniform fill.
// A checkpoint stores rows that differ from the fill, so these travel with the run.
void copy_pretrained_words(torch::Tensor& weight, const ModelConfig& config,
                           const ModelShape& shape) {
  std::vector<bool> has_vector;
  const torch::Tensor vectors =
      pretrained_vectors(config, shape, /*whole_table=*/false, &has_vector);
  for (size_t id = 0; id < has_vector.size(); ++id) {
    if (has_vector[id]) weight[static_cast<int64_t>(id)].copy_(vectors[static_cast<int64_t>(id)]);
  }
}

}  // namespace

torch::nn::EmbeddingBag make_bag_table(const ModelConfig& config, const ModelShape& shape,
                                       UniformFill& fill) {
  torch::nn::EmbeddingBag table(torch::nn::EmbeddingBagOptions(shape.num_ids, config.dim)
                                    .mode(torch::kMean)
                                    .sparse(shape.sparse_gradients)
                                    ._weight(torch::empty({shape.num_ids, config.dim})));
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / static_cast<double>(config.dim);
  // A contiguous float CPU tensor, created above: the fill is always recomputable.
  fill = fast_uniform_(table->weight, -bound, bound).value();
  if (!config.pretrained.empty()) copy_pretrained_words(table->weight, config, shape);
  return table;
}

}  // namespace sift
