#include "tools/serve/torch_backend.h"

#include <chrono>
#include <utility>

#include "framework/runtime/export.h"
#include "tools/serve/encoder_pool.h"
#include "tools/serve/fasttext_backend.h"
#include "tools/sift/predict_batch.h"

namespace sift::serve {

namespace {

// Whether any of the model's tensors is bf16: its products then run through oneDNN.
bool has_bf16_tensors(ModelBundle& b) {
  if (auto* scripted = dynamic_cast<ScriptedClassifierImpl*>(b.model.get())) {
    for (const auto& a : scripted->script().named_attributes(/*recurse=*/true)) {
      if (a.value.isTensor() && a.value.toTensor().scalar_type() == torch::kBFloat16) return true;
    }
    return false;
  }
  for (const auto& p : b.model->parameters()) {
    if (p.scalar_type() == torch::kBFloat16) return true;
  }
  return false;
}

class TorchBackend : public ModelBackend {
 public:
  TorchBackend(ModelBundle bundle, double seconds)
      : bundle_(std::move(bundle)),
        encoders_(make_encoder(bundle_.task)),
        seconds_(seconds),
        one_worker_(has_bf16_tensors(bundle_)) {}
  double load_seconds() const override { return seconds_; }
  std::string kind() const override { return bundle_.config.model.type; }
  bool uses_libtorch() const override { return true; }
  const std::vector<std::string>& labels() const override { return bundle_.task.labels.names(); }
  bool multi_label() const override { return bundle_.config.data.multi_label; }
  double train_threshold() const override { return bundle_.config.train.threshold; }
  bool one_worker() const override { return one_worker_; }
  bool padded() const override { return bundle_.task.encoder.kind == InputKind::sequence; }
  void encode(std::string_view text, std::vector<int64_t>& ids) const override {
    encoders_.encode(text, ids);
  }
  std::vector<cli::Predictions> predict(const std::vector<TextQuery>& batch) const override {
    c10::InferenceMode inference;  // thread-local: each worker sets its own
    RawBatch raw;
    std::vector<cli::PredictQuery> queries;
    for (const TextQuery& q : batch) {
      raw.add(*q.ids, 0);
      queries.push_back({q.k, q.threshold});
    }
    return cli::predict_batch(bundle_, raw, queries);
  }

 private:
  mutable ModelBundle bundle_;  // forward is not const; it changes nothing in eval mode
  mutable EncoderPool encoders_;
  double seconds_;
  // A bf16 model's products run through oneDNN (Debian's libdnnl 2.6), whose kernels broke
  // when run from two workers: with batches of every shape the SST-2 Transformer's bf16
  // export answered 500 (std::bad_array_new_length) in each of 5 runs of 8-10 s under wrk
  // -c32 that were checked, and crashed in brgemm_kernel_create in 3 of 7 runs. Run one
  // at a time under a mutex, still from two threads, it answered 500 in 1 of 4 runs
  // (ServeCli.ABf16ExportUnderConcurrentBatchesOfEveryShapeAnswersEveryRequest, and in
  // CI); from one worker, 0 of 10. fp32 (OpenBLAS) and int8 (fbgemm) ran clean.
  bool one_worker_;
};

}  // namespace

std::unique_ptr<ModelBackend> open_torch_backend(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  ModelBundle bundle = load_model(path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::make_unique<TorchBackend>(std::move(bundle), seconds);
}

std::unique_ptr<ModelBackend> open_any_backend(const std::string& path) {
  std::string why;
  try {
    if (auto fasttext = open_fasttext_backend(path, &why)) return fasttext;
  } catch (const std::exception&) {  // LibTorch's loader then says what is wrong
  }
  return open_torch_backend(path);
}

}  // namespace sift::serve
