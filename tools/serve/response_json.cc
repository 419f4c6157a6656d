#include "tools/serve/response_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sift::serve {

namespace {

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json predictions_json(const cli::Predictions& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [label, score] : p) out.push_back({{"label", label}, {"score", score}});
  return out;
}

}  // namespace

std::string error_body(const std::string& message) { return dump({{"error", message}}); }

std::string predict_body(const ModelView& m, const std::vector<cli::Predictions>& results,
                         const std::vector<size_t>& truncated, int64_t max_text_bytes) {
  nlohmann::json out = {{"model", m.name}, {"version", m.version}};
  nlohmann::json& rows = out["predictions"] = nlohmann::json::array();
  for (const auto& p : results) rows.push_back(predictions_json(p));
  if (!truncated.empty()) {
    out["truncated"] = truncated;
    out["warning"] = fmt::format("{} text(s) longer than {} bytes were cut to that length",
                                 truncated.size(), max_text_bytes);
  }
  return dump(out);
}

std::string infer_body(const ModelView& m, const std::vector<cli::Predictions>& results) {
  size_t k = 0;
  for (const auto& p : results) k = std::max(k, p.size());
  nlohmann::json labels = nlohmann::json::array(), scores = nlohmann::json::array();
  for (const auto& p : results) {
    for (size_t j = 0; j < k; ++j) {
      labels.push_back(j < p.size() ? p[j].first : "");
      scores.push_back(j < p.size() ? p[j].second : 0.0);
    }
  }
  const nlohmann::json shape = {results.size(), k};
  return dump({{"model_name", m.name},
               {"model_version", std::to_string(m.version)},
               {"outputs",
                {{{"name", "label"}, {"datatype", "BYTES"}, {"shape", shape}, {"data", labels}},
                 {{"name", "score"}, {"datatype", "FP32"}, {"shape", shape}, {"data", scores}}}}});
}

std::string models_body(const std::vector<ModelView>& models) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : models) {
    list.push_back({{"name", m.name},
                    {"kind", m.backend->kind()},
                    {"version", m.version},
                    {"labels", m.backend->labels()},
                    {"multi_label", m.backend->multi_label()},
                    {"libtorch", m.backend->uses_libtorch()}});
  }
  return dump({{"models", list}});
}

std::string metadata_body(const ModelView& m) {
  return dump({{"name", m.name},
               {"versions", {std::to_string(m.version)}},
               {"platform", m.backend->uses_libtorch() ? "sift_libtorch" : "sift_fasttext"},
               {"inputs", {{{"name", "text"}, {"datatype", "BYTES"}, {"shape", {-1}}}}},
               {"outputs",
                {{{"name", "label"}, {"datatype", "BYTES"}, {"shape", {-1, -1}}},
                 {{"name", "score"}, {"datatype", "FP32"}, {"shape", {-1, -1}}}}}});
}

}  // namespace sift::serve
