#include "tools/serve/response_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
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

namespace {

void append_le32(std::string& out, uint32_t v) {
  for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
}

// An output's elements in the binary tensor data extension's layout.
std::string binary_of(const nlohmann::json& data, bool bytes) {
  std::string out;
  for (const auto& v : data) {
    if (bytes) {
      const auto& s = v.get_ref<const std::string&>();
      append_le32(out, static_cast<uint32_t>(s.size()));
      out += s;
    } else {
      const float f = v.get<float>();
      uint32_t u;
      std::memcpy(&u, &f, sizeof u);
      append_le32(out, u);
    }
  }
  return out;
}

}  // namespace

InferAnswer infer_body(const ModelView& m, const std::vector<cli::Predictions>& results,
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
  std::string binary;
  bool any_binary = false;
  for (size_t o = 0; o < asked.outputs.size(); ++o) {
    const size_t i = asked.outputs[o];
    nlohmann::json out = {{"name", kV2Outputs[i].name},
                          {"datatype", kV2Outputs[i].datatype},
                          {"shape", {results.size(), k}}};
    if (o < asked.binary.size() && asked.binary[o]) {
      const std::string bytes = binary_of(data[i], i == 0);
      out["parameters"] = {{"binary_data_size", bytes.size()}};
      binary += bytes;
      any_binary = true;
    } else {
      out["data"] = std::move(data[i]);
    }
    outputs.push_back(std::move(out));
  }
  nlohmann::json out = {{"model_name", m.name},
                        {"model_version", std::to_string(m.version)},
                        {"outputs", std::move(outputs)}};
  if (asked.id) out["id"] = *asked.id;
  InferAnswer answer{dump(out), std::nullopt};
  if (any_binary) {
    answer.json_bytes = answer.body.size();
    answer.body += binary;
  }
  return answer;
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
