// The option table: every config key declared once with its type, default, help and
// check. The table drives YAML parsing, --set, validation, `sift config --dump` and
// the generated option reference (docs/options.md).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/search_space.h"

namespace sift {

struct Option {
  std::string name;                  // dotted key, e.g. "train.batch_size"
  std::string type;                  // "int", "float", "bool", "string", "list", "enum"
  std::vector<std::string> choices;  // allowed values of an enum
  std::string help;
  // Reads a YAML value into the config; returns "" or what was expected ("an integer").
  std::function<std::string(SiftConfig&, const YAML::Node&)> parse;
  std::function<YAML::Node(const SiftConfig&)> emit;
  // Returns "" when the value is acceptable, else a full sentence.
  std::function<std::string(const SiftConfig&)> check;
  // What `sift tune` tries for it when a model type tunes it (ModelTraits::tuned); unset:
  // not tunable unless a config's `tune:` section gives a space.
  std::optional<SearchSpace> space;
};

// A former name of an option, still read (YAML and --set) with a deprecation warning and
// stored in the option it was renamed to; dumps write only the new name.
struct OptionAlias {
  std::string name;         // e.g. "train.checkpointing"
  std::string replacement;  // e.g. "train.gradient_checkpointing"
};

const std::vector<OptionAlias>& option_aliases();

// The alias named `name`, or nullptr.
const OptionAlias* find_alias(const std::string& name);

// All options, in declaration order.
const std::vector<Option>& all_options();

// The option named `name`, or nullptr.
const Option* find_option(const std::string& name);

// The option's value in `config`, as YAML in flow style ("0.1", "[a, b]").
std::string emitted(const Option& option, const SiftConfig& config);

// The keys whose values in `config` differ from their defaults, in declaration order.
std::vector<std::string> keys_off_default(const SiftConfig& config);

// The declared key closest to `name` (edit distance), for "did you mean" hints.
std::string closest_option(const std::string& name);

// True when some declared key (or alias) starts with `prefix` + ".".
bool is_option_group(const std::string& prefix);

}  // namespace sift
