// What `sift tune` may try for one option: a range (linear or log, real or integer) or
// a list of choices. Default spaces are declared with the options (options.cc) and picked
// per model type (ModelTraits::tuned); a config's `tune:` section narrows, widens or
// turns them off. Values travel as YAML text, the form `--set key=VALUE` reads.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sift {

enum class SpaceKind { linear, log, integer, integer_log, choice };

struct SearchSpace {
  SpaceKind kind = SpaceKind::linear;
  double lo = 0.0;  // bounds of the range kinds, both included
  double hi = 0.0;
  std::vector<std::string> choices;  // YAML text of each choice ("3", "[3, 4, 5]", "sgd")

  static SearchSpace linear(double lo, double hi) { return {SpaceKind::linear, lo, hi, {}}; }
  static SearchSpace log(double lo, double hi) { return {SpaceKind::log, lo, hi, {}}; }
  static SearchSpace integer(double lo, double hi) { return {SpaceKind::integer, lo, hi, {}}; }
  static SearchSpace integer_log(double lo, double hi) {
    return {SpaceKind::integer_log, lo, hi, {}};
  }
  static SearchSpace choice(std::vector<std::string> values) {
    return {SpaceKind::choice, 0.0, 0.0, std::move(values)};
  }

  // "log [0.05, 2]", "choice [1, 2, 3]": the form the `tune:` section takes, without braces.
  std::string describe() const;
  // "" when usable, else a sentence (empty or inverted range, log of a non-positive bound).
  std::string problem() const;
  // The value (YAML text) at position `u` in [0, 1]: the range's point at that fraction
  // (in log space for the log kinds), or the choice it falls on.
  std::string value_at(double u) const;
  // The position of `value` (YAML text), inverse of value_at up to rounding; nullopt when
  // the value is outside the space.
  std::optional<double> position_of(const std::string& value) const;
};

// Reads `{log: [0.05, 2]}`, `{linear: [0, 0.5]}`, `{int: [1, 3]}`, `{int_log: [10, 300]}`
// or `{choice: [16, 32, 64]}`; `origin` ("file.yaml:12") names the place in errors.
SearchSpace parse_space(const YAML::Node& node, const std::string& origin);

// The `tune:` section of a config file: key -> space, where nullopt (`key: off`) drops a
// default. Keys are checked against the option table; "" path or no section: empty.
std::map<std::string, std::optional<SearchSpace>> read_tune_section(const std::string& path);

}  // namespace sift
