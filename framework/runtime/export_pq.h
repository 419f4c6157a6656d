// `sift export --quantize pq` (fastText's `quantize`): which table it applies to, the
// rows --cutoff keeps, the checks of its options together, and what the file says of it.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>

#include "framework/runtime/export.h"
#include "framework/runtime/model_bundle.h"

namespace sift {

// The embedding table pq and --cutoff apply to ("embedding.weight"): the model's table
// looked up by id (its structured-pruning rows, models/prune_units.h). sift::Error naming
// --quantize pq when the model has none.
std::string pq_table(const ModelBundle& bundle);

// bool [rows]: the k rows of `table` with the largest L2 norms (ties: the lower id), as
// fastText's selectEmbeddings.
torch::Tensor top_norm_rows(const torch::Tensor& table, int64_t k);

// The rows --cutoff keeps of the bundle's table (options.kept_rows when given).
torch::Tensor kept_rows(const ModelBundle& bundle, const ExportOptions& options);

// --cutoff on a word vocabulary (fastText's pruned dictionary): the words whose rows are
// cut leave the vocabulary, and the table and options.kept_rows are renumbered to match.
// An unknown word leaves its bag as a cut id does, and n-gram buckets hash the words
// themselves, so the buckets keep their order after the words: the same logits from a
// smaller vocab.txt. Sets options.kept_rows; a no-op on the vocabulary of SentencePiece
// or sequence models.
void without_cut_words(ModelBundle& bundle, ExportOptions& options, TensorMap& tensors);

// Refuses, with one sentence naming the flag, the pq options that do not apply: pq on a
// model without a table looked up by id, --cutoff/--dsub/--qnorm/--qout without pq, a
// cutoff larger than the table, a dsub that does not divide the dimension.
void check_pq_options(const ModelBundle& bundle, const ExportOptions& options);

// sift_format.json's "pq": dsub, qnorm, qout, cutoff, the rows and words kept, retrained.
nlohmann::json pq_json(const ExportOptions& options, int64_t rows, int64_t vocabulary);

}  // namespace sift
