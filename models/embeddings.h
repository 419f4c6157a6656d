// Word embeddings of the sequence models: random or pretrained (.vec text files), and
// optionally frozen.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/vocab.h"
#include "models/model.h"

namespace sift {

// Reads word vectors in fastText/word2vec text format (an optional header line
// "count dim", then "word v1 ... vdim" per line; plain, .gz or .zst) as a stream, and
// keeps those of the vocabulary's words. Returns [vocab.size(), dim]: the vectors of the
// words found, uniform random in [-0.25, 0.25] for the others (Kim 2014), zero for the
// padding row 0. A word's exact spelling wins over a case-folded match ("The" fills
// "the" only when the file has no "the"). *found (when given) receives the number of
// vocabulary words that got a vector. Throws sift::Error for a missing file, a header
// whose dimension is not `dim`, or a line with the wrong number of values or a value
// that is not a finite number, naming PATH:LINE. *has_vector (when given) receives, per
// vocabulary id, whether the file gave that word a vector.
torch::Tensor load_word_vectors(const std::string& path, const Vocab& vocab, int64_t dim,
                                int64_t* found, std::vector<bool>* has_vector = nullptr);

// The token embedding of a sequence model: shape.num_ids x config.dim, padding row 0
// zero and never updated. Rows start uniform in [-0.25, 0.25], or from the vectors of
// model.pretrained; model.freeze_embeddings keeps them fixed. Throws sift::Error when
// model.pretrained is set but the ids are not words of a vocabulary (SentencePiece).
torch::nn::Embedding make_word_embedding(const ModelConfig& config, const ModelShape& shape);

// The bag table of the fastText and MLP models: shape.num_ids x config.dim, mean bags,
// sparse gradients when shape.sparse_gradients, rows uniform in +-1/dim as fastText's;
// with model.pretrained, the words found in that file start from their vectors.
// The table is created without EmbeddingBag's own normal_ fill, which the uniform fill
// overwrote: for 2M x 10 buckets that fill took 0.32 s, a fifth of a 1.7 s TREC run.
// `fill` receives the uniform fill, for the model's ClassifierImpl::remember_fill.
torch::nn::EmbeddingBag make_bag_table(const ModelConfig& config, const ModelShape& shape,
                                       UniformFill& fill);

// Vaswani et al.'s position table [positions, dim]: sin on even columns, cos on odd ones.
torch::Tensor sinusoidal_table(int64_t positions, int64_t dim);

// [batch, length] bool on `device`: true at positions before each sequence's length.
torch::Tensor valid_positions(const torch::Tensor& lengths, int64_t length, torch::Device device);

}  // namespace sift
