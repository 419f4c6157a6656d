#include "tools/serve/fasttext_backend.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "tools/serve/encoder_pool.h"

namespace sift::serve {

cli::Predictions fasttext_predictions(const FastTextPredictor& model,
                                      const std::vector<int64_t>& ids, int64_t k,
                                      double threshold) {
  const auto& names = model.run().labels.names();
  if (model.multi_label()) {
    return cli::labels_over(model.label_probabilities(ids).data(), names, threshold);
  }
  cli::Predictions out;
  for (const auto& [label, p] : model.top_k(ids, k, threshold)) {
    out.emplace_back(names[static_cast<size_t>(label)], p);
  }
  return out;
}

namespace {

class FastTextBackend : public ModelBackend {
 public:
  FastTextBackend(std::unique_ptr<FastTextPredictor> model, double seconds)
      : model_(std::move(model)), encoders_(model_->encoder()), seconds_(seconds) {}
  double load_seconds() const override { return seconds_; }
  std::string kind() const override { return "fasttext"; }
  bool uses_libtorch() const override { return false; }
  const std::vector<std::string>& labels() const override { return model_->run().labels.names(); }
  bool multi_label() const override { return model_->multi_label(); }
  double train_threshold() const override { return model_->run().config.train.threshold; }
  bool padded() const override { return false; }
  bool one_at_a_time() const override { return true; }
  void encode(std::string_view text, std::vector<int64_t>& ids) const override {
    encoders_.encode(text, ids);
  }
  std::vector<cli::Predictions> predict(const std::vector<TextQuery>& batch) const override {
    std::vector<cli::Predictions> out;
    out.reserve(batch.size());
    for (const TextQuery& q : batch) {
      out.push_back(fasttext_predictions(*model_, *q.ids, q.k, q.threshold));
    }
    return out;
  }

 private:
  std::unique_ptr<FastTextPredictor> model_;
  mutable EncoderPool encoders_;
  double seconds_;
};

}  // namespace

std::unique_ptr<ModelBackend> open_fasttext_backend(const std::string& path, std::string* why) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<FastTextPredictor> model = std::filesystem::is_directory(path)
                                                 ? FastTextPredictor::open(path, why)
                                                 : FastTextPredictor::open_export(path, why);
  if (!model) return nullptr;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::make_unique<FastTextBackend>(std::move(model), seconds);
}

}  // namespace sift::serve
