// What train and eval print at the end: a short text, or JSON with --json.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace sift::cli {

// {"run_dir", "splits": {name: {"accuracy", "macro_f1", "examples"}}}
nlohmann::json summary_json(const nlohmann::json& report);
std::string summary_text(const nlohmann::json& report);

}  // namespace sift::cli
