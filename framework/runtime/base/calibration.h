// Whether a model's confidence can be taken at its word: the reliability diagram's bins
// (Guo et al. 2017, "On calibration of modern neural networks"). Each example falls in
// the bin of its top probability; a calibrated model's accuracy in a bin equals the
// bin's mean confidence. The expected calibration error (ECE) weighs each bin's gap by
// its share of the examples.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace sift {

class Calibration {
 public:
  static constexpr int kBins = 10;  // equal width over [0, 1], as Guo et al. plot them

  void add(double confidence, bool correct);
  int64_t examples() const;
  double expected_calibration_error() const;
  // {"bins": [{"from", "to", "examples", "confidence", "accuracy"}...], "ece"}: empty bins
  // are listed with zero examples and no confidence or accuracy.
  nlohmann::json to_json() const;

 private:
  std::array<int64_t, kBins> examples_{};
  std::array<int64_t, kBins> correct_{};
  std::array<double, kBins> confidence_sum_{};
};

}  // namespace sift
