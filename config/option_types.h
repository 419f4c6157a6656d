// Conversions between YAML values and typed option fields.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sift::option_types {

// Each read() returns "" on success, or the expected type in words.
std::string read(const YAML::Node& node, bool& out);
std::string read(const YAML::Node& node, int64_t& out);
std::string read(const YAML::Node& node, double& out);
std::string read(const YAML::Node& node, std::string& out);
std::string read(const YAML::Node& node, std::vector<std::string>& out);
std::string read(const YAML::Node& node, std::vector<int64_t>& out);

YAML::Node write(bool value);
YAML::Node write(int64_t value);
YAML::Node write(double value);
YAML::Node write(const std::string& value);
YAML::Node write(const std::vector<std::string>& value);
YAML::Node write(const std::vector<int64_t>& value);

template <class T>
const char* type_name();
template <> inline const char* type_name<bool>() { return "bool"; }
template <> inline const char* type_name<int64_t>() { return "int"; }
template <> inline const char* type_name<double>() { return "float"; }
template <> inline const char* type_name<std::string>() { return "string"; }
template <> inline const char* type_name<std::vector<std::string>>() { return "list"; }
template <> inline const char* type_name<std::vector<int64_t>>() { return "int list"; }

}  // namespace sift::option_types
