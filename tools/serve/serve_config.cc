#include "tools/serve/serve_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "config/yaml_file.h"
#include "core/error.h"
#include "core/nearest_name.h"

namespace sift::serve {

namespace {

std::string where(const std::string& file, const YAML::Node& node) {
  return fmt::format("{}:{}", file, node.Mark().line + 1);
}

// What a value is, for an error: 'abc', a list, a mapping.
std::string shown(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  return node.IsSequence() ? "a list" : node.IsMap() ? "a mapping" : "nothing";
}

template <typename T>
T scalar_as(const YAML::Node& node, const std::string& at, const char* expected) {
  try {
    if (node.IsScalar()) return node.as<T>();
  } catch (const YAML::Exception&) {
  }
  throw Error(fmt::format("{} expects {}, got {}", at, expected, shown(node)));
}

// models: a mapping of NAME: PATH, or a list of NAME=PATH (or PATH) as --model takes them.
std::vector<std::string> models_of(const YAML::Node& node, const std::string& at) {
  std::vector<std::string> out;
  if (node.IsMap()) {
    for (const auto& item : node) {
      out.push_back(scalar_as<std::string>(item.first, at, "NAME: PATH") + "=" +
                    scalar_as<std::string>(item.second, at, "NAME: PATH"));
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) out.push_back(scalar_as<std::string>(item, at, "NAME=PATH"));
  } else {
    throw Error(fmt::format("{} expects a mapping of NAME: PATH, got {}", at, shown(node)));
  }
  return out;
}

void set_option(const ServeOption& option, ServeArgs& args, const YAML::Node& value,
                const std::string& at) {
  std::visit(
      [&](auto* field) {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          *field = models_of(value, at);
        } else if constexpr (std::is_same_v<T, bool>) {
          *field = scalar_as<bool>(value, at, "true or false");
        } else if constexpr (std::is_same_v<T, std::string>) {
          *field = scalar_as<std::string>(value, at, "a string");
        } else {
          const T v = scalar_as<T>(value, at, std::is_integral_v<T> ? "an integer" : "a number");
          const std::string wrong = out_of_range(option, static_cast<double>(v));
          if (!wrong.empty()) throw Error(fmt::format("{}: {}", at, wrong));
          *field = v;
        }
      },
      option.field(args));
}

// The serve: mapping of the file; any other top-level key is refused.
YAML::Node serve_section(const std::string& path) {
  const YAML::Node root = read_yaml_file(path);
  if (!root.IsMap()) throw Error(fmt::format("{}: expected a mapping with a serve: section", path));
  YAML::Node section;
  for (const auto& item : root) {
    const std::string key = item.first.Scalar();
    if (key != "serve") {
      throw Error(fmt::format("{}: unknown section '{}': a serve config holds serve: only",
                              where(path, item.first), key));
    }
    if (!item.second.IsMap()) {
      throw Error(fmt::format("{}: serve: must be a mapping of options, got {}",
                              where(path, item.first), shown(item.second)));
    }
    section = item.second;
  }
  if (!section) throw Error(fmt::format("{}: no serve: section", path));
  return section;
}

}  // namespace

void apply_serve_config(const CLI::App& cmd, ServeArgs& args) {
  if (args.config_file.empty()) return;
  const std::string& path = args.config_file;
  std::vector<std::string> keys;
  for (const ServeOption& option : serve_options()) keys.push_back(option.key);
  std::map<std::string, int> seen;  // key -> line
  for (const auto& item : serve_section(path)) {
    const std::string key = item.first.Scalar();
    const std::string at = where(path, item.first) + ": serve." + key;
    const auto [first, fresh] = seen.emplace(key, item.first.Mark().line + 1);
    if (!fresh) throw Error(fmt::format("{} is given twice (first at line {})", at, first->second));
    auto option = std::find_if(serve_options().begin(), serve_options().end(),
                               [&](const ServeOption& o) { return o.key == key; });
    if (option == serve_options().end()) {
      const std::string near = nearest_name(key, keys, 3);
      throw Error(fmt::format("{}: no such serve option{}", at,
                              near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
    if (cmd.get_option(flag_name(*option))->count() > 0) continue;  // the flag overrides it
    set_option(*option, args, item.second, at);
  }
}

}  // namespace sift::serve
