// The bodies `sift serve` answers with: predictions in its own /v1 shape and in the Open
// Inference Protocol v2's, model descriptions, and {"error": "..."}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/serve/model_backend.h"
#include "tools/serve/request_json.h"

namespace sift::serve {

struct ModelView {
  std::string name;
  const ModelBackend* backend;
  int64_t version;
};

std::string error_body(const std::string& message);
// {"model", "version", "predictions": [[{"label", "score"}, ...], ...]} and, when texts
// were cut, "truncated" (their indices) and "warning".
std::string predict_body(const ModelView& m, const std::vector<cli::Predictions>& results,
                         const std::vector<size_t>& truncated, int64_t max_text_bytes);
// v2: the outputs `asked` names (kV2Outputs: "label" BYTES and "score" FP32), in its
// order, each [texts, k] with k the most labels any text has (shorter rows are padded with
// "" and 0), and its "id" when it has one. An output asked as binary data has
// parameters.binary_data_size instead of data, and its bytes follow the JSON in the body, in
// the order of the outputs (BYTES: each element a 4-byte little-endian length and its bytes;
// FP32: little-endian floats); json_bytes then says where the JSON ends (the
// Inference-Header-Content-Length header).
struct InferAnswer {
  std::string body;
  std::optional<size_t> json_bytes;
};
InferAnswer infer_body(const ModelView& m, const std::vector<cli::Predictions>& results,
                       const PredictRequest& asked);
// GET /v1/models: every model's name, kind, version, labels and whether LibTorch runs it.
std::string models_body(const std::vector<ModelView>& models);
// GET /v2/models/{m}: the v2 metadata: the input and outputs infer reads and answers.
std::string metadata_body(const ModelView& m);

}  // namespace sift::serve
