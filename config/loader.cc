#include "config/loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "config/options.h"
#include "core/error.h"
#include "core/printable.h"

namespace sift {
namespace {

std::string where(const std::string& file, const YAML::Mark& mark) {
  return mark.is_null() ? file : fmt::format("{}:{}", file, mark.line + 1);
}

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

YAML::Node parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot open config file {}: {}", path, std::strerror(errno)));
  try {
    return YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1,
                            e.mark.column + 1, e.msg));
  }
}

}  // namespace

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
    throw Error(fmt::format("--set '{}': expected key=value", printable(assignment)));
  }
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("--set {}: the value is not valid YAML: {}", key, e.msg));
  }
  set_value(config, key, value, "--set " + key);
}

SiftConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  SiftConfig config;
  config.source = path;
  if (!path.empty()) {
    const YAML::Node root = parse_file(path);
    if (!root.IsNull()) {
      if (!root.IsMap()) throw Error(fmt::format("{}: the config must be a YAML mapping", path));
      read_node(config, root, "", path);
    }
  }
  for (const auto& o : overrides) apply_override(config, o);
  check_options(config);
  return config;
}

void check_options(const SiftConfig& config) {
  for (const auto& option : all_options()) {
    if (!option.check) continue;
    const std::string problem = option.check(config);
    if (problem.empty()) continue;
    auto it = config.origin.find(option.name);
    const std::string origin = it == config.origin.end() ? "default" : it->second;
    throw Error(fmt::format("{}: option '{}': {}", origin, option.name, problem));
  }
}

std::string dump_config(const SiftConfig& unresolved) {
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
  return std::string(out.c_str()) + "\n";
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
  return config.origin.count(key) != 0;
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
