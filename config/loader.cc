#include "config/loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "config/options.h"
#include "config/yaml_file.h"
#include "core/error.h"
#include "core/printable.h"

namespace sift {
namespace {

std::string where(const std::string& file, const YAML::Mark& mark) {
  return mark.is_null() ? file : fmt::format("{}:{}", file, mark.line + 1);
}

// The origin of a value a model type's defaults gave (apply_model_defaults).
const char kModelDefault[] = "model default";

// Where an origin ("file.yaml:12", "--set key") came from: the file, or "--set".
std::string source_of(const std::string& origin) {
  if (origin.rfind("--set", 0) == 0) return "--set";
  const auto colon = origin.rfind(':');
  return colon == std::string::npos ? origin : origin.substr(0, colon);
}

void set_value(SiftConfig& config, const std::string& given_key, const YAML::Node& value,
               const std::string& origin) {
  std::string key = given_key;
  if (const OptionAlias* alias = find_alias(given_key)) {
    std::fprintf(stderr, "sift: warning: %s is deprecated; use %s\n", alias->name.c_str(),
                 alias->replacement.c_str());
    key = alias->replacement;
  }
  // An option and its old name both given in one file, or both by --set, is an error; a
  // later source (--set over the file) may override either.
  auto refuse_clash = [&](const std::string& other) {
    auto it = config.origin.find(other);
    if (it == config.origin.end() || source_of(it->second) != source_of(origin)) return;
    throw Error(
        fmt::format("{}: {} and {} are both given; keep only {}", origin, given_key, other, key));
  };
  for (const auto& alias : option_aliases()) {
    if (alias.name == given_key) refuse_clash(alias.replacement);
    if (alias.replacement == given_key) refuse_clash(alias.name);
  }
  const Option* option = find_option(key);
  if (option == nullptr) {
    throw Error(fmt::format("{}: unknown option '{}' (did you mean '{}'?)", origin, printable(key),
                            closest_option(key)));
  }
  const std::string expected = option->parse(config, value);
  if (!expected.empty()) {
    const std::string got = value.IsScalar()     ? "'" + printable(value.Scalar()) + "'"
                            : value.IsSequence() ? std::string("a list")
                            : value.IsMap()      ? std::string("a mapping")
                                                 : std::string("nothing");
    throw Error(
        fmt::format("{}: option '{}' expects {}, got {}", origin, given_key, expected, got));
  }
  config.origin[key] = origin;
  if (key != given_key) config.origin[given_key] = origin;  // for refuse_clash
}

// Walks nested mappings; a key is either a declared option or a group of options.
void read_node(SiftConfig& config, const YAML::Node& node, const std::string& prefix,
               const std::string& file) {
  // yaml-cpp keeps both entries of a repeated key (and lookups see the first): refuse it.
  std::map<std::string, YAML::Mark> seen;
  for (const auto& item : node) {
    const std::string name = item.first.as<std::string>();
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    const std::string origin = where(file, item.first.Mark());
    const auto [first, fresh] = seen.emplace(name, item.first.Mark());
    if (!fresh) {
      throw Error(fmt::format("{}: '{}' is given twice (first at {}); keep one", origin,
                              printable(key), where(file, first->second)));
    }
    if (key == "tune") continue;  // search spaces: read by sift tune (search_space.h)
    if (find_option(key) == nullptr && is_option_group(key)) {
      if (!item.second.IsMap() && !item.second.IsNull()) {
        throw Error(
            fmt::format("{}: '{}' is a group of options and must be a mapping", origin, key));
      }
      if (item.second.IsMap()) read_node(config, item.second, key, file);
      continue;
    }
    set_value(config, key, item.second, origin);
  }
}

}  // namespace

YAML::Node read_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot open config file {}: {}", path, std::strerror(errno)));
  try {
    return YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1,
                            e.mark.column + 1, e.msg));
  }
}


std::string yaml_quoted(const std::string& value) {
  YAML::Emitter out;
  out << YAML::DoubleQuoted << value;
  return out.c_str();
}

std::string yaml_quoted_list(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + yaml_quoted(values[i]);
  return out + "]";
}

void apply_override(SiftConfig& config, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(fmt::format("--set '{}': expected key=value", printable(assignment)));
  }
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("--set {}: the value is not valid YAML: {}", key, e.msg));
  }
  try {
    set_value(config, key, value, "--set " + key);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {  // an unknown key or a value of the wrong type
    throw UsageError(e.what());
  }
}

SiftConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  SiftConfig config;
  config.source = path;
  if (!path.empty()) {
    const YAML::Node root = read_yaml_file(path);
    if (!root.IsNull()) {
      if (!root.IsMap()) throw Error(fmt::format("{}: the config must be a YAML mapping", path));
      read_node(config, root, "", path);
    }
  }
  for (const auto& o : overrides) apply_override(config, o);
  check_options(config);
  return config;
}

SiftConfig load_config(const std::string& path, const std::vector<std::string>& overrides,
                       const std::vector<ModelTraits>& models) {
  SiftConfig config = load_config(path, overrides);
  apply_model_defaults(config, models);
  return config;
}

void check_options(const SiftConfig& config) {
  for (const auto& option : all_options()) {
    if (!option.check) continue;
    const std::string problem = option.check(config);
    if (problem.empty()) continue;
    auto it = config.origin.find(option.name);
    const std::string origin = it == config.origin.end() ? "default" : it->second;
    const std::string message = fmt::format("{}: option '{}': {}", origin, option.name, problem);
    if (origin.rfind("--set ", 0) == 0) throw UsageError(message);
    throw Error(message);
  }
}

namespace {

// Each "key: value" line of a dump followed by "# ORIGIN", the dotted key found from the
// indentation (block sequences' "- item" lines carry none).
std::string with_origins(const std::string& dump, const SiftConfig& config) {
  std::string out;
  std::vector<std::pair<size_t, std::string>> path;  // indentation, key
  size_t start = 0;
  while (start < dump.size()) {
    size_t end = dump.find('\n', start);
    if (end == std::string::npos) end = dump.size();
    std::string line = dump.substr(start, end - start);
    start = end + 1;
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    if (indent == std::string::npos || line[indent] == '-' || colon == std::string::npos) {
      out += line + "\n";
      continue;
    }
    while (!path.empty() && path.back().first >= indent) path.pop_back();
    path.emplace_back(indent, line.substr(indent, colon - indent));
    std::string key;
    for (const auto& [depth, name] : path) key += (key.empty() ? "" : ".") + name;
    if (find_option(key) != nullptr) {
      const auto it = config.origin.find(key);
      line += "  # " + (it == config.origin.end() ? std::string("default") : it->second);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string dump_config(const SiftConfig& unresolved, bool origins) {
  // Each split's layout is written out in full, so that the dump reads back the same
  // whatever the shared data.* defaults say.
  SiftConfig config = unresolved;
  for (Split split : {Split::train, Split::valid, Split::test}) {
    split_config(config.data, split).FormatConfig::operator=(resolved_format(unresolved, split));
  }
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& option : all_options()) {
    YAML::Node node = root;
    std::string rest = option.name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      // Assigning YAML::Node handles rebinds them, so walk with a fresh handle each step.
      YAML::Node child = node[rest.substr(0, dot)];
      node.reset(child);
      rest = rest.substr(dot + 1);
    }
    node[rest] = option.emit(config);
  }
  YAML::Emitter out;
  out << root;
  const std::string dump = std::string(out.c_str()) + "\n";
  return origins ? with_origins(dump, unresolved) : dump;
}

namespace {

std::string tune_reference(const std::vector<ModelTraits>& models) {
  std::string out =
      "\n## What `sift tune` searches by model type\n\n"
      "A config's `tune:` section narrows, widens or adds spaces (`train.optimizer.lr: {log: "
      "[0.01, 1]}`) and turns one off (`model.buckets: off`).\n\n"
      "| model.type | searched options |\n|---|---|\n";
  for (const auto& m : models) {
    std::vector<std::string> keys;
    for (const auto& t : m.tuned) {
      const Option* o = find_option(t.key);
      const auto& space = t.space ? t.space : o->space;
      keys.push_back(fmt::format("`{}` {}", t.key, space ? space->describe() : "?"));
    }
    out += fmt::format("| {} | {} |\n", m.name, fmt::join(keys, "; "));
  }
  return out;
}

}  // namespace

std::string option_reference(const std::vector<ModelTraits>& models) {
  std::string out =
      "# Option reference\n\n"
      "Generated from the option table in `config/options.cc` by "
      "`sift config --reference`; do not edit by hand.\n\n"
      "| key | type | default | description | `sift tune` space |\n|---|---|---|---|---|\n";
  const SiftConfig defaults;
  for (const auto& option : all_options()) {
    std::string type = option.type;
    if (!option.choices.empty()) type = fmt::format("{}", fmt::join(option.choices, " \\| "));
    const std::string space = option.space ? "`" + option.space->describe() + "`" : "";
    out += fmt::format("| `{}` | {} | `{}` | {} | {} |\n", option.name, type,
                       emitted(option, defaults), option.help, space);
  }
  return models.empty() ? out : out + tune_reference(models);
}

bool is_set(const SiftConfig& config, const std::string& key) {
  const auto it = config.origin.find(key);
  return it != config.origin.end() && it->second.rfind(kModelDefault, 0) != 0;
}

void apply_model_defaults(SiftConfig& config, const std::vector<ModelTraits>& models) {
  for (const ModelTraits& model : models) {
    if (model.name != config.model.type) continue;
    for (const auto& [key, value] : model.defaults) {
      if (config.origin.count(key) != 0) continue;
      // An optimizer or schedule given by type keeps the table's values for its other
      // keys: the model's Adam rate is not for the user's SGD. (model.type names the model
      // whose defaults these are.)
      const std::string group = key.substr(0, key.rfind('.'));
      if (group != "train" && group != "model" && is_set(config, group + ".type")) continue;
      set_value(config, key, YAML::Load(value), fmt::format("{} ({})", kModelDefault, model.name));
    }
  }
  check_options(config);
}

FormatConfig resolved_format(const SiftConfig& config, Split split) {
  const SplitConfig& own = split_config(config.data, split);
  const FormatConfig& shared = config.data;
  auto pick = [&](const char* field, const auto& own_value, const auto& shared_value) {
    return is_set(config, "data." + to_string(split) + "." + field) ? own_value : shared_value;
  };
  FormatConfig f;
  f.format = pick("format", own.format, shared.format);
  f.text = pick("text", own.text, shared.text);
  f.label = pick("label", own.label, shared.label);
  f.header = pick("header", own.header, shared.header);
  f.encoding = pick("encoding", own.encoding, shared.encoding);
  f.unescape = pick("unescape", own.unescape, shared.unescape);
  f.label_mapping = pick("label_mapping", own.label_mapping, shared.label_mapping);
  return f;
}

}  // namespace sift
