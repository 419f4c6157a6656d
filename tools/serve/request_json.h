// The bodies `sift serve` reads: `POST /v1/models/{name}/predict`'s
// {"texts": [...], "top_k": k, "threshold": t} and the Open Inference Protocol v2's
// `infer` request (texts as a BYTES input, as JSON data or in the binary tensor data
// extension, which tritonclient.http sends by default). Every refusal is an HttpError with the
// status and a sentence naming the field; nothing in a body names a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sift::serve {

struct HttpError : std::runtime_error {
  HttpError(int code, const std::string& message) : std::runtime_error(message), status(code) {}
  int status;
};

struct RequestLimits {
  int64_t max_texts = 256;         // texts in one request (413 beyond)
  int64_t max_text_bytes = 65536;  // a longer text is cut to this many bytes, and said
};

// The Open Inference Protocol v2 tensors of every served model: one BYTES input of texts,
// and two outputs, both [texts, k]: the labels (BYTES) and their probabilities (FP32).
struct V2Tensor {
  const char* name;
  const char* datatype;
};
inline constexpr V2Tensor kV2Input{"text", "BYTES"};
inline constexpr V2Tensor kV2Outputs[] = {{"label", "BYTES"}, {"score", "FP32"}};
inline constexpr size_t kV2OutputCount = sizeof(kV2Outputs) / sizeof(kV2Outputs[0]);

struct PredictRequest {
  std::vector<std::string> texts;
  std::optional<int64_t> top_k;
  std::optional<double> threshold;
  std::vector<size_t> truncated;  // the texts cut to max_text_bytes
  // v2 only: the request's "id", echoed in the answer; the outputs asked for, as indices
  // into kV2Outputs in the order asked (every output when the request names none), and
  // whether each is answered as binary data (its parameters.binary_data, else the request's
  // parameters.binary_data_output, else JSON).
  std::optional<std::string> id;
  std::vector<size_t> outputs;
  std::vector<bool> binary;
};

PredictRequest parse_predict(std::string_view body, const RequestLimits& limits);
// v2 `infer`: texts from inputs[0] (named kV2Input), the outputs asked for, the id.
// `json_bytes` is the Inference-Header-Content-Length header's value when the request has
// one (the binary tensor data extension): the JSON is the body's first json_bytes bytes,
// and inputs[0] may give its texts after them (parameters.binary_data_size: each element a
// 4-byte little-endian length and its bytes); every byte after the JSON must be its.
PredictRequest parse_infer(std::string_view body, const RequestLimits& limits,
                           std::optional<uint64_t> json_bytes = std::nullopt);
// The Inference-Header-Content-Length header's value: a byte count within the body (400).
uint64_t parse_header_length(const std::string& value, size_t body_bytes);

}  // namespace sift::serve
