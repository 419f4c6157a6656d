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

// A user's config: load_config, then the defaults of the model type it names
// (apply_model_defaults; `models` is models/base/traits.h's model_traits()). A run folder's
// config.yaml gives every key and needs no defaults.
SiftConfig load_config(const std::string& path, const std::vector<std::string>& overrides,
                       const std::vector<ModelTraits>& models);

// Gives every key of the model type's defaults (ModelTraits::defaults) that the file and
// --set left out its model's value, with the origin "model default (TYPE)" (is_set stays
// false for it), then checks the options again. Prints one warning for a combination
// known not to learn.
void apply_model_defaults(SiftConfig& config, const std::vector<ModelTraits>& models);

// Applies one "key=value" override (the value is read as YAML).
void apply_override(SiftConfig& config, const std::string& assignment);

// A value from the command line as a YAML scalar ("*.tsv", "@list", "a,b.tsv" stay
// strings), and a list of them as a YAML flow sequence: for "key=" + ... overrides.
std::string yaml_quoted(const std::string& value);
std::string yaml_quoted_list(const std::vector<std::string>& values);

// Runs every option's check; the first failure is thrown with the key and its origin.
void check_options(const SiftConfig& config);

// The resolved config as YAML text: every option, nested by its dotted name; with
// `origins`, each value followed by a comment saying where it came from (default, model
// default, FILE:LINE or --set KEY).
std::string dump_config(const SiftConfig& config, bool origins = false);

// The Markdown option reference generated from the option table (docs/options.md), with
// what `sift tune` searches by default for each of `models`.
std::string option_reference(const std::vector<ModelTraits>& models = {});

// The layout options of a split: the split's own value where it was given, else the
// shared data.* value.
FormatConfig resolved_format(const SiftConfig& config, Split split);

// Whether a key was given explicitly (in the file or by --set; not a model default).
bool is_set(const SiftConfig& config, const std::string& key);

}  // namespace sift
