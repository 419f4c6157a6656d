// `GET /metrics` in Prometheus's text format, through prometheus-cpp (Debian's
// prometheus-cpp-dev): requests by route and status, request latency, batch sizes, queue
// depth, and each model's load time and version.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tools/serve/batch_queue.h"

namespace sift::serve {

class ServeMetrics {
 public:
  ServeMetrics();
  // One answered request: its route pattern (never the raw path: the label set stays
  // bounded), its status and its latency.
  void request(const std::string& route, int status, double seconds);
  // Counts the texts, tokens and padded tokens of each batch `model` runs.
  BatchObserver batch_observer(const std::string& model);
  void loaded(const std::string& model, int64_t version, double seconds);
  void load_failed(const std::string& model);
  void queue_depth(const std::string& model, int64_t texts);
  std::string text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Histogram>& batch_;
  prometheus::Family<prometheus::Counter>& tokens_;
  prometheus::Family<prometheus::Counter>& padded_;
  prometheus::Family<prometheus::Gauge>& depth_;
  prometheus::Family<prometheus::Gauge>& load_seconds_;
  prometheus::Family<prometheus::Gauge>& version_;
  prometheus::Family<prometheus::Counter>& load_failures_;
};

}  // namespace sift::serve
