#include "framework/runtime/base/calibration.h"

#include <algorithm>
#include <cmath>

namespace sift {

void Calibration::add(double confidence, bool correct) {
  // A confidence of exactly 1 belongs to the last bin, not an eleventh.
  const int bin = std::clamp(static_cast<int>(confidence * kBins), 0, kBins - 1);
  ++examples_[bin];
  correct_[bin] += correct ? 1 : 0;
  confidence_sum_[bin] += confidence;
}

int64_t Calibration::examples() const {
  int64_t n = 0;
  for (const int64_t e : examples_) n += e;
  return n;
}

double Calibration::expected_calibration_error() const {
  const int64_t n = examples();
  if (n == 0) return 0.0;
  double ece = 0.0;
  for (int b = 0; b < kBins; ++b) {
    if (examples_[b] == 0) continue;
    const double count = static_cast<double>(examples_[b]);
    ece += count / static_cast<double>(n) *
           std::abs(static_cast<double>(correct_[b]) / count - confidence_sum_[b] / count);
  }
  return ece;
}

nlohmann::json Calibration::to_json() const {
  nlohmann::json bins = nlohmann::json::array();
  for (int b = 0; b < kBins; ++b) {
    nlohmann::json bin = {{"from", static_cast<double>(b) / kBins},
                          {"to", static_cast<double>(b + 1) / kBins},
                          {"examples", examples_[b]}};
    if (examples_[b] > 0) {
      const double count = static_cast<double>(examples_[b]);
      bin["confidence"] = confidence_sum_[b] / count;
      bin["accuracy"] = static_cast<double>(correct_[b]) / count;
    }
    bins.push_back(bin);
  }
  return {{"bins", bins}, {"ece", expected_calibration_error()}};
}

}  // namespace sift
