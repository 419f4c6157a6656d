#include "config/option_types.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sift::option_types {
namespace {

bool is_plain_scalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

}  // namespace

std::string read(const YAML::Node& node, bool& out) {
  const std::string s = node.IsScalar() ? node.Scalar() : "";
  if (s == "true" || s == "yes" || s == "on") {
    out = true;
  } else if (s == "false" || s == "no" || s == "off") {
    out = false;
  } else {
    return "a boolean (true or false)";
  }
  return "";
}

std::string read(const YAML::Node& node, int64_t& out) {
  if (!is_plain_scalar(node)) return "an integer";
  const std::string& s = node.Scalar();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE) return "an integer";
  out = v;
  return "";
}

std::string read(const YAML::Node& node, double& out) {
  if (!is_plain_scalar(node)) return "a number";
  const std::string& s = node.Scalar();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) return "a number";
  out = v;
  return "";
}

std::string read(const YAML::Node& node, std::string& out) {
  if (!node.IsScalar()) return "a string";
  out = node.Scalar();
  return "";
}

std::string read(const YAML::Node& node, std::vector<std::string>& out) {
  out.clear();
  if (node.IsNull()) return "";
  if (node.IsScalar()) {
    out.push_back(node.Scalar());
    return "";
  }
  if (!node.IsSequence()) return "a string or a list of strings";
  for (const auto& item : node) {
    if (!item.IsScalar()) return "a string or a list of strings";
    out.push_back(item.Scalar());
  }
  return "";
}

std::string read(const YAML::Node& node, std::vector<int64_t>& out) {
  out.clear();
  if (node.IsScalar()) {
    out.emplace_back();
    return read(node, out.back()).empty() ? "" : "an integer or a list of integers";
  }
  if (!node.IsSequence()) return "an integer or a list of integers";
  for (const auto& item : node) {
    out.emplace_back();
    if (!read(item, out.back()).empty()) return "an integer or a list of integers";
  }
  return "";
}

YAML::Node write(bool value) { return YAML::Node(value); }
YAML::Node write(int64_t value) { return YAML::Node(value); }
// Shortest text that reads back to the same double ("0.1", not "0.10000000000000001").
YAML::Node write(double value) { return YAML::Node(fmt::format("{}", value)); }
YAML::Node write(const std::string& value) { return YAML::Node(value); }
YAML::Node write(const std::vector<std::string>& value) {
  YAML::Node node(YAML::NodeType::Sequence);
  for (const auto& v : value) node.push_back(v);
  return node;
}

YAML::Node write(const std::vector<int64_t>& value) {
  YAML::Node node(YAML::NodeType::Sequence);
  for (auto v : value) node.push_back(v);
  return node;
}

}  // namespace sift::option_types
