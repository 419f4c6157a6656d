#include "config/search_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "config/flow_text.h"
#include "config/options.h"
#include "config/yaml_file.h"
#include "core/error.h"
#include "core/printable.h"

namespace sift {
namespace {

// SpaceKind's spellings, in its order.
constexpr const char* kKindNames[] = {"linear", "log", "int", "int_log", "choice"};

std::string kind_name(SpaceKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

bool is_log(SpaceKind kind) { return kind == SpaceKind::log || kind == SpaceKind::integer_log; }
bool is_integer(SpaceKind kind) {
  return kind == SpaceKind::integer || kind == SpaceKind::integer_log;
}

std::string number_text(double v, bool integer) {
  return integer ? fmt::format("{}", static_cast<int64_t>(std::llround(v)))
                 : fmt::format("{:.6g}", v);
}

std::string where(const std::string& file, const YAML::Node& node) {
  return fmt::format("{}:{}", file, node.Mark().line + 1);
}

}  // namespace

std::string flow_text(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

std::string SearchSpace::describe() const {
  if (kind == SpaceKind::choice) {
    return fmt::format("choice [{}]", fmt::join(choices, ", "));
  }
  return fmt::format("{} [{}, {}]", kind_name(kind), number_text(lo, is_integer(kind)),
                     number_text(hi, is_integer(kind)));
}

std::string SearchSpace::problem() const {
  if (kind == SpaceKind::choice) {
    return choices.empty() ? "The choice list is empty." : "";
  }
  if (!(lo <= hi)) {
    return fmt::format("The range [{}, {}] is empty or inverted: give [low, high].", lo, hi);
  }
  if (is_log(kind) && lo <= 0) {
    return fmt::format("A log range needs bounds > 0 (got {}).", lo);
  }
  if (is_integer(kind) && (lo != std::floor(lo) || hi != std::floor(hi))) {
    return fmt::format("An integer range needs whole bounds (got [{}, {}]).", lo, hi);
  }
  return "";
}

std::string SearchSpace::value_at(double u) const {
  u = std::clamp(u, 0.0, 1.0);
  if (kind == SpaceKind::choice) {
    const size_t n = choices.size();
    return choices[std::min(n - 1, static_cast<size_t>(u * static_cast<double>(n)))];
  }
  if (kind == SpaceKind::integer) {
    // Each whole value owns an equal share of [0, 1].
    return number_text(std::min(hi, std::floor(lo + u * (hi - lo + 1))), true);
  }
  const double v = is_log(kind) ? std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)))
                                : lo + u * (hi - lo);
  return number_text(std::clamp(v, lo, hi), is_integer(kind));
}

std::optional<double> SearchSpace::position_of(const std::string& value) const {
  if (kind == SpaceKind::choice) {
    const std::string text = flow_text(YAML::Load(value));
    for (size_t i = 0; i < choices.size(); ++i) {
      if (choices[i] == text) {
        return (static_cast<double>(i) + 0.5) / static_cast<double>(choices.size());
      }
    }
    return std::nullopt;
  }
  double v = 0;
  try {
    v = std::stod(value);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (v < lo || v > hi) return std::nullopt;
  if (kind == SpaceKind::integer) return (v - lo + 0.5) / (hi - lo + 1);
  if (hi == lo) return 0.5;
  if (is_log(kind)) return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  return (v - lo) / (hi - lo);
}

SearchSpace parse_space(const YAML::Node& node, const std::string& origin) {
  const std::string expected =
      "expected {log: [low, high]}, {linear: [low, high]}, {int: [low, high]}, "
      "{int_log: [low, high]}, {choice: [a, b, ...]} or off";
  if (!node.IsMap() || node.size() != 1) throw Error(fmt::format("{}: {}", origin, expected));
  const std::string name = node.begin()->first.as<std::string>();
  const YAML::Node list = node.begin()->second;
  SearchSpace space;
  const auto known = std::find(std::begin(kKindNames), std::end(kKindNames), name);
  if (known == std::end(kKindNames) || !list.IsSequence()) {
    throw Error(fmt::format("{}: '{}': {}", origin, printable(name), expected));
  }
  space.kind = static_cast<SpaceKind>(known - std::begin(kKindNames));
  if (space.kind == SpaceKind::choice) {
    for (const auto& item : list) space.choices.push_back(flow_text(item));
  } else {
    if (list.size() != 2) throw Error(fmt::format("{}: {} needs [low, high]", origin, name));
    try {
      space.lo = list[0].as<double>();
      space.hi = list[1].as<double>();
    } catch (const YAML::Exception&) {
      throw Error(fmt::format("{}: {} needs two numbers", origin, name));
    }
  }
  const std::string problem = space.problem();
  if (!problem.empty()) throw Error(fmt::format("{}: {}", origin, problem));
  return space;
}

std::map<std::string, std::optional<SearchSpace>> read_tune_section(const std::string& path) {
  std::map<std::string, std::optional<SearchSpace>> spaces;
  if (path.empty()) return spaces;
  const YAML::Node root = read_yaml_file(path);
  if (!root.IsMap() || !root["tune"]) return spaces;
  const YAML::Node section = root["tune"];
  if (!section.IsMap()) {
    throw Error(
        fmt::format("{}: 'tune' must map option keys to search spaces", where(path, section)));
  }
  for (const auto& item : section) {
    const std::string key = item.first.as<std::string>();
    const std::string origin = where(path, item.first);
    if (find_option(key) == nullptr) {
      throw Error(fmt::format("{}: tune: unknown option '{}' (did you mean '{}'?)", origin,
                              printable(key), closest_option(key)));
    }
    const YAML::Node value = item.second;
    const bool off = value.IsScalar() && (value.Scalar() == "off" || value.Scalar() == "false");
    spaces[key] = off ? std::nullopt
                      : std::optional<SearchSpace>(parse_space(value, origin + ": tune." + key));
  }
  return spaces;
}

}  // namespace sift
