// A YAML file read whole: the config loader's and `sift serve --config`'s one reader.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace sift {

// The file's YAML; sift::Error naming the file when it cannot be opened, and its
// line:column at a syntax error.
YAML::Node read_yaml_file(const std::string& path);

}  // namespace sift
