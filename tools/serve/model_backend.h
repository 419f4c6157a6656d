// One served model as `sift serve` sees it, whatever runs it: the fastText model's forward
// on plain arrays (fasttext_backend.h, no LibTorch) or a run folder or export under
// LibTorch (torch_backend.h, sift-main only). The server, its queues and its routes are
// torch-free and hold models only through this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tools/sift/predict_options.h"

namespace sift::serve {

// What one text asks for: the labels to return and the probability threshold, as `sift
// predict`'s --top-k and --threshold come out of resolve_predict.
struct TextQuery {
  const std::vector<int64_t>* ids = nullptr;
  int64_t k = 1;
  double threshold = -1.0;
};

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  // "fasttext", "transformer", ... and whether this backend runs LibTorch.
  virtual std::string kind() const = 0;
  virtual bool uses_libtorch() const = 0;
  virtual const std::vector<std::string>& labels() const = 0;
  virtual bool multi_label() const = 0;
  virtual double train_threshold() const = 0;
  // How long opening the model took (measured where it was opened: sift-lite opens its
  // models once to decide whether it serves them, then serves those).
  virtual double load_seconds() const = 0;
  // Whether texts are bags of ids (fastText: no padding) or padded sequences.
  virtual bool padded() const = 0;
  // Whether the forward runs one text at a time, so that a batch saves nothing (fastText on
  // plain arrays): the server then runs a request's texts on its own thread.
  virtual bool one_at_a_time() const { return false; }
  // Whether every forward must run on one and the same thread (a bf16 model: oneDNN's
  // kernels), so that its queue has one worker whatever --workers says.
  virtual bool one_worker() const { return false; }
  // The text's ids, as training reads it (thread-safe: the backend keeps an encoder per
  // caller).
  virtual void encode(std::string_view text, std::vector<int64_t>& ids) const = 0;
  // The predictions of a batch of texts, one per query, as `sift predict` prints them.
  // Called from several worker threads at once (from one, where one_worker()).
  virtual std::vector<cli::Predictions> predict(const std::vector<TextQuery>& batch) const = 0;
};

}  // namespace sift::serve
