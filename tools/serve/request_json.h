// The bodies `sift serve` reads: `POST /v1/models/{name}/predict`'s
// {"texts": [...], "top_k": k, "threshold": t} and the Open Inference Protocol v2's
// `infer` request (texts as a BYTES input). Every refusal is an HttpError with the status
// and a sentence naming the field; nothing in a body names a file.
#pragma once

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

struct PredictRequest {
  std::vector<std::string> texts;
  std::optional<int64_t> top_k;
  std::optional<double> threshold;
  std::vector<size_t> truncated;  // the texts cut to max_text_bytes
};

// The byte offset of the first byte that is not part of valid UTF-8, or npos.
size_t invalid_utf8_at(std::string_view bytes);

PredictRequest parse_predict(std::string_view body, const RequestLimits& limits);
PredictRequest parse_infer(std::string_view body, const RequestLimits& limits);

}  // namespace sift::serve
