// One YAML value as flow text ("3", "[3, 4, 5]", "sgd"): how search spaces and `sift
// tune` write option values, so that a value and a space's choice compare as text.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace sift {

std::string flow_text(const YAML::Node& node);

}  // namespace sift
