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

std::string infer_body(const ModelView& m, const std::vector<cli::Predictions>& results,
                       const PredictRequest& asked) {
  size_t k = 0;
  for (const auto& p : results) k = std::max(k, p.size());
  nlohmann::json data[kV2OutputCount] = {nlohmann::json::array(), nlohmann::json::array()};
  for (const auto& p : results) {
    for (size_t j = 0; j < k; ++j) {
      data[0].push_back(j < p.size() ? p[j].first : "");
      data[1].push_back(j < p.size() ? p[j].second : 0.0);
    }
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (const size_t i : asked.outputs) {
    outputs.push_back({{"name", kV2Outputs[i].name},
                       {"datatype", kV2Outputs[i].datatype},
                       {"shape", {results.size(), k}},
                       {"data", std::move(data[i])}});
  }
  nlohmann::json out = {{"model_name", m.name},
                        {"model_version", std::to_string(m.version)},
                        {"outputs", std::move(outputs)}};
  if (asked.id) out["id"] = *asked.id;
  return dump(out);
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
  nlohmann::json outputs = nlohmann::json::array();
  for (const V2Tensor& t : kV2Outputs) {
    outputs.push_back({{"name", t.name}, {"datatype", t.datatype}, {"shape", {-1, -1}}});
  }
  return dump(
      {{"name", m.name},
       {"versions", {std::to_string(m.version)}},
       {"platform", m.backend->uses_libtorch() ? "sift_libtorch" : "sift_fasttext"},
       {"inputs", {{{"name", kV2Input.name}, {"datatype", kV2Input.datatype}, {"shape", {-1}}}}},
       {"outputs", std::move(outputs)}});
}

}  // namespace sift::serve
