#include "tools/serve/torch_backend.h"

#include <chrono>
#include <utility>

#include "framework/runtime/export.h"
#include "tools/serve/encoder_pool.h"
#include "tools/serve/fasttext_backend.h"
#include "tools/sift/predict_batch.h"

namespace sift::serve {

namespace {

class TorchBackend : public ModelBackend {
 public:
  TorchBackend(ModelBundle bundle, double seconds)
      : bundle_(std::move(bundle)), encoders_(make_encoder(bundle_.task)), seconds_(seconds) {}
  double load_seconds() const override { return seconds_; }
  std::string kind() const override { return bundle_.config.model.type; }
  bool uses_libtorch() const override { return true; }
  const std::vector<std::string>& labels() const override { return bundle_.task.labels.names(); }
  bool multi_label() const override { return bundle_.config.data.multi_label; }
  double train_threshold() const override { return bundle_.config.train.threshold; }
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
