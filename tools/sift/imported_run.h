// The run folder `sift import` writes (fastText's .bin, a Hugging Face folder): made
// once, refusing to replace a model without --force; config.yaml, labels.txt, vocab.txt
// and best.ckpt.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "datasets/vocab.h"
#include "framework/runtime/checkpoint.h"

namespace sift::cli {

// Makes the run folder `out`, refusing one that holds a model unless `force`.
void make_run_folder(const std::string& out, bool force);

// config.yaml, labels.txt (read from `model`, named in errors), the vocabulary and
// best.ckpt of an imported run in `out`.
void write_imported_run(const std::string& out, const std::string& model, const SiftConfig& config,
                        const std::vector<std::string>& labels, const Vocab& vocab,
                        const Checkpoint& c);

}  // namespace sift::cli
