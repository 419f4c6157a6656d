// The route both HTTP servers of bench/http_libs.sh answer: `sift serve`'s predict route
// without a model. POST /v1/models/m/predict with {"texts": [...]} is parsed (nlohmann
// JSON, as sift serve does) and answered with one fixed prediction per text, so that what
// is measured is the HTTP library: accepting, reading, parsing and writing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace sift::bench {

inline constexpr const char* kRoute = "/v1/models/m/predict";

// (HTTP status, JSON body) for a request.
inline std::pair<int, std::string> answer(bool post, const std::string& target,
                                          const std::string& body) {
  if (target != kRoute) return {404, R"({"error":"no route"})"};
  if (!post) return {405, R"({"error":"POST only"})"};
  const nlohmann::json request = nlohmann::json::parse(body, nullptr, false);
  if (!request.is_object() || !request.contains("texts") || !request["texts"].is_array()) {
    return {400, R"({"error":"expected {\"texts\": [...]}"})"};
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < request["texts"].size(); ++i) {
    rows.push_back(nlohmann::json::array({{{"label", "1"}, {"score", 0.875}}}));
  }
  return {200, nlohmann::json{{"model", "m"}, {"version", 1}, {"predictions", rows}}.dump()};
}

}  // namespace sift::bench
