// Reading a config: YAML file, then --set overrides, then the per-option checks.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "config/model_traits.h"

namespace sift {

// Reads `path` (may be empty: defaults only), applies "key=value" overrides in order and
// runs every option's check. Throws sift::Error naming the file, line and key.
SiftConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Applies one "key=value" override (the value is read as YAML).
void apply_override(SiftConfig& config, const std::string& assignment);

// A value from the command line as a YAML scalar ("*.tsv", "@list", "a,b.tsv" stay
// strings), and a list of them as a YAML flow sequence: for "key=" + ... overrides.
std::string yaml_quoted(const std::string& value);
std::string yaml_quoted_list(const std::vector<std::string>& values);

// Runs every option's check; the first failure is thrown with the key and its origin.
void check_options(const SiftConfig& config);

// The resolved config as YAML text: every option, nested by its dotted name.
std::string dump_config(const SiftConfig& config);

// The Markdown option reference generated from the option table (docs/options.md), with
// what `sift tune` searches by default for each of `models`.
std::string option_reference(const std::vector<ModelTraits>& models = {});

// The layout options of a split: the split's own value where it was given, else the
// shared data.* value.
FormatConfig resolved_format(const SiftConfig& config, Split split);

// Whether a key was given explicitly (in the file or by --set).
bool is_set(const SiftConfig& config, const std::string& key);

}  // namespace sift
