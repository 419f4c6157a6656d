// `sift import fasttext`: a model of `fasttext supervised` (.bin) as a Sift run folder, or
// one of `fasttext quantize` (.ftz) as a pq export holding its codes.
#pragma once

#include <string>

namespace sift::cli {

// Reads `model` and writes `out`: a run folder for a .bin, an export file for a .ftz
// (told apart by the file's quantization flag, not its name). Refuses to replace a model
// unless `force`.
// `label_prefix`: fastText's -label of the model (not in its file).
void import_fasttext(const std::string& model, const std::string& out, bool force,
                     const std::string& label_prefix);

}  // namespace sift::cli
