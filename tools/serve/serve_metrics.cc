#include "tools/serve/serve_metrics.h"

#include <prometheus/text_serializer.h>

#include <sstream>

namespace sift::serve {

namespace {

using prometheus::Histogram;

const Histogram::BucketBoundaries& latency_buckets() {
  static const Histogram::BucketBoundaries b{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                             0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                             1,      2.5,     5,      10};
  return b;
}

const Histogram::BucketBoundaries& batch_buckets() {
  static const Histogram::BucketBoundaries b{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  return b;
}

}  // namespace

ServeMetrics::ServeMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("sift_requests_total")
                    .Help("HTTP requests answered, by route and status")
                    .Register(*registry_)),
      latency_(prometheus::BuildHistogram()
                   .Name("sift_request_duration_seconds")
                   .Help("Time from the request's arrival to its answer, by route")
                   .Register(*registry_)),
      batch_(prometheus::BuildHistogram()
                 .Name("sift_batch_texts")
                 .Help("Texts per batch a model ran")
                 .Register(*registry_)),
      tokens_(prometheus::BuildCounter()
                  .Name("sift_batch_tokens_total")
                  .Help("Tokens of the texts a model ran")
                  .Register(*registry_)),
      padded_(prometheus::BuildCounter()
                  .Name("sift_batch_padded_tokens_total")
                  .Help("Tokens a model ran, padding included (texts x the batch's longest)")
                  .Register(*registry_)),
      depth_(prometheus::BuildGauge()
                 .Name("sift_queue_texts")
                 .Help("Texts waiting in a model's queue")
                 .Register(*registry_)),
      load_seconds_(prometheus::BuildGauge()
                        .Name("sift_model_load_seconds")
                        .Help("How long the model's current version took to load")
                        .Register(*registry_)),
      version_(prometheus::BuildGauge()
                   .Name("sift_model_version")
                   .Help("The model's current version (1 at start, +1 per reload)")
                   .Register(*registry_)),
      load_failures_(prometheus::BuildCounter()
                         .Name("sift_model_load_failures_total")
                         .Help("Reloads that failed (the previous version kept serving)")
                         .Register(*registry_)) {}

void ServeMetrics::request(const std::string& route, int status, double seconds) {
  requests_.Add({{"route", route}, {"status", std::to_string(status)}}).Increment();
  latency_.Add({{"route", route}}, latency_buckets()).Observe(seconds);
}

BatchObserver ServeMetrics::batch_observer(const std::string& model) {
  Histogram* h = &batch_.Add({{"model", model}}, batch_buckets());
  prometheus::Counter* tokens = &tokens_.Add({{"model", model}});
  prometheus::Counter* padded = &padded_.Add({{"model", model}});
  return [h, tokens, padded](const BatchRun& run) {
    h->Observe(static_cast<double>(run.texts));
    tokens->Increment(static_cast<double>(run.tokens));
    padded->Increment(static_cast<double>(run.padded_tokens));
  };
}

void ServeMetrics::loaded(const std::string& model, int64_t version, double seconds) {
  load_seconds_.Add({{"model", model}}).Set(seconds);
  version_.Add({{"model", model}}).Set(static_cast<double>(version));
}

void ServeMetrics::load_failed(const std::string& model) {
  load_failures_.Add({{"model", model}}).Increment();
}

void ServeMetrics::queue_depth(const std::string& model, int64_t texts) {
  depth_.Add({{"model", model}}).Set(static_cast<double>(texts));
}

std::string ServeMetrics::text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace sift::serve
