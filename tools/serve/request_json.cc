#include "tools/serve/request_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "datasets/encoding.h"

namespace sift::serve {

namespace {

nlohmann::json parse_object(std::string_view body) {
  if (const size_t at = invalid_utf8_at(body); at != std::string_view::npos) {
    throw HttpError(400, fmt::format("the body is not valid UTF-8 (byte {})", at));
  }
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) throw HttpError(400, "the body is not valid JSON");
  if (!j.is_object()) throw HttpError(400, "the body must be a JSON object");
  return j;
}

// A text cut to the byte limit at a character boundary (as a too-long training line is
// cut with data.truncate_long_lines).
std::string cut_text(std::string text, const RequestLimits& limits, size_t index,
                     std::vector<size_t>& truncated) {
  if (static_cast<int64_t>(text.size()) <= limits.max_text_bytes) return text;
  size_t end = static_cast<size_t>(limits.max_text_bytes);
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  truncated.push_back(index);
  return text;
}

void check_count(size_t n, const std::string& field, const RequestLimits& limits) {
  if (n == 0) throw HttpError(400, fmt::format("{} must hold at least one text", field));
  if (static_cast<int64_t>(n) > limits.max_texts) {
    throw HttpError(
        413, fmt::format("{} holds {} texts; at most {} per request", field, n, limits.max_texts));
  }
}

std::vector<std::string> texts_of(const nlohmann::json& array, const std::string& field,
                                  const RequestLimits& limits, std::vector<size_t>& truncated) {
  if (!array.is_array()) throw HttpError(400, fmt::format("{} must be an array of strings", field));
  check_count(array.size(), field, limits);
  std::vector<std::string> texts;
  texts.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    if (!array[i].is_string()) {
      throw HttpError(400, fmt::format("{}[{}] must be a string", field, i));
    }
    texts.push_back(cut_text(array[i].get<std::string>(), limits, i, truncated));
  }
  return texts;
}

// The texts of inputs[0] in the binary tensor data extension: `data`, each element a 4-byte
// little-endian length and its bytes, as UTF-8.
std::vector<std::string> binary_texts(std::string_view data, const RequestLimits& limits,
                                      std::vector<size_t>& truncated) {
  std::vector<std::string> texts;
  for (size_t at = 0; at < data.size();) {
    const size_t i = texts.size();
    check_count(i + 1, "inputs[0]'s binary data", limits);  // 413 before the element is read
    if (data.size() - at < 4) {
      throw HttpError(400,
                      fmt::format("inputs[0]'s binary data ends inside element {}'s length", i));
    }
    const auto* b = reinterpret_cast<const unsigned char*>(data.data() + at);
    const uint64_t n = b[0] | (b[1] << 8) | (b[2] << 16) | (uint64_t{b[3]} << 24);
    at += 4;
    if (data.size() - at < n) {
      throw HttpError(400, fmt::format("inputs[0]'s binary data ends inside element {} ({} bytes "
                                       "said, {} left)",
                                       i, n, data.size() - at));
    }
    const std::string_view text = data.substr(at, n);
    if (const size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
      throw HttpError(400,
                      fmt::format("inputs[0] element {} is not valid UTF-8 (byte {})", i, bad));
    }
    texts.push_back(cut_text(std::string(text), limits, i, truncated));
    at += n;
  }
  check_count(texts.size(), "inputs[0]'s binary data", limits);
  return texts;
}

void read_options(const nlohmann::json& j, const std::string& where, PredictRequest& r) {
  if (auto it = j.find("top_k"); it != j.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      throw HttpError(400, fmt::format("{}top_k must be an integer >= 1", where));
    }
    r.top_k = it->get<int64_t>();
  }
  if (auto it = j.find("threshold"); it != j.end()) {
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) {
      throw HttpError(400, fmt::format("{}threshold must be a number between 0 and 1", where));
    }
    r.threshold = it->get<double>();
  }
}

void refuse_unknown(const nlohmann::json& j, std::initializer_list<const char*> known,
                    const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) throw HttpError(400, fmt::format("unknown field {}{}", where, key));
  }
}

}  // namespace

PredictRequest parse_predict(std::string_view body, const RequestLimits& limits) {
  const nlohmann::json j = parse_object(body);
  refuse_unknown(j, {"texts", "top_k", "threshold"}, "");
  PredictRequest r;
  const auto texts = j.find("texts");
  if (texts == j.end()) throw HttpError(400, "missing field texts");
  r.texts = texts_of(*texts, "texts", limits, r.truncated);
  read_options(j, "", r);
  return r;
}

namespace {

void check_shape(const nlohmann::json& input, size_t texts) {
  const auto shape = input.find("shape");
  if (shape == input.end()) return;
  int64_t n = 1;
  bool numbers = shape->is_array();
  for (const auto& d : numbers ? *shape : nlohmann::json::array()) {
    numbers = numbers && d.is_number_integer();
    n *= numbers ? d.get<int64_t>() : 1;
  }
  if (!numbers || n != static_cast<int64_t>(texts)) {
    throw HttpError(400,
                    fmt::format("inputs[0].shape does not hold the {} texts of its data", texts));
  }
}

// inputs[0].parameters.binary_data_size: a byte count, given with the header that says
// where the JSON ends.
uint64_t binary_data_size(const nlohmann::json& v, bool binary) {
  if (!v.is_number_unsigned()) {
    throw HttpError(400, "inputs[0].parameters.binary_data_size must be an integer >= 0");
  }
  if (!binary) {
    throw HttpError(400,
                    "inputs[0].parameters.binary_data_size needs the "
                    "Inference-Header-Content-Length header (the JSON's length in bytes)");
  }
  return v.get<uint64_t>();
}

// inputs[0]'s texts: its JSON data, or its binary data, which is all of `tail` (the bytes
// after the JSON; binary: whether the request said where its JSON ends).
std::vector<std::string> input_texts(const nlohmann::json& input, std::string_view tail,
                                     bool binary, const RequestLimits& limits,
                                     std::vector<size_t>& truncated) {
  std::optional<uint64_t> size;
  if (auto p = input.find("parameters"); p != input.end()) {
    if (!p->is_object()) throw HttpError(400, "inputs[0].parameters must be an object");
    refuse_unknown(*p, {"binary_data_size"}, "inputs[0].parameters.");
    if (auto n = p->find("binary_data_size"); n != p->end()) size = binary_data_size(*n, binary);
  }
  const auto data = input.find("data");
  if (size && data != input.end()) {
    throw HttpError(400, "inputs[0] has both data and parameters.binary_data_size");
  }
  if (tail.size() != size.value_or(0)) {
    throw HttpError(400, fmt::format("the body holds {} bytes after its JSON and "
                                     "inputs[0].parameters.binary_data_size says {}",
                                     tail.size(), size.value_or(0)));
  }
  if (size) return binary_texts(tail, limits, truncated);
  if (data == input.end()) throw HttpError(400, "missing field inputs[0].data");
  return texts_of(*data, "inputs[0].data", limits, truncated);
}

// inputs: one BYTES tensor named kV2Input (its texts: input_texts).
void read_input(const nlohmann::json& j, std::string_view tail, bool binary,
                const RequestLimits& limits, PredictRequest& r) {
  const auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_array() || inputs->size() != 1) {
    throw HttpError(400, fmt::format("inputs must be an array of one BYTES tensor of texts, "
                                     "named '{}'",
                                     kV2Input.name));
  }
  const nlohmann::json& input = (*inputs)[0];
  if (!input.is_object()) throw HttpError(400, "inputs[0] must be an object");
  refuse_unknown(input, {"name", "shape", "datatype", "parameters", "data"}, "inputs[0].");
  const auto name = input.find("name");
  if (name == input.end()) throw HttpError(400, "missing field inputs[0].name");
  if (!name->is_string() || name->get<std::string>() != kV2Input.name) {
    throw HttpError(400, fmt::format("inputs[0].name is {}; the model's input is named '{}'",
                                     name->dump(), kV2Input.name));
  }
  if (input.value("datatype", "") != kV2Input.datatype) {
    throw HttpError(400, fmt::format("inputs[0].datatype must be {}", kV2Input.datatype));
  }
  r.texts = input_texts(input, tail, binary, limits, r.truncated);
  check_shape(input, r.texts.size());
}

// outputs[i]: {"name", "parameters"}; `binary` gets its parameters.binary_data if given.
size_t read_output(const nlohmann::json& output, const std::string& where,
                   std::optional<bool>& binary) {
  if (!output.is_object()) throw HttpError(400, where + " must be an object");
  refuse_unknown(output, {"name", "parameters"}, where + ".");
  const auto name = output.find("name");
  if (name == output.end()) throw HttpError(400, fmt::format("missing field {}.name", where));
  if (auto p = output.find("parameters"); p != output.end()) {
    if (!p->is_object()) throw HttpError(400, where + ".parameters must be an object");
    refuse_unknown(*p, {"binary_data"}, where + ".parameters.");
    if (auto b = p->find("binary_data"); b != p->end()) {
      if (!b->is_boolean()) {
        throw HttpError(400, where + ".parameters.binary_data must be true or false");
      }
      binary = b->get<bool>();
    }
  }
  for (size_t i = 0; i < kV2OutputCount; ++i) {
    if (name->is_string() && name->get<std::string>() == kV2Outputs[i].name) return i;
  }
  throw HttpError(400, fmt::format("{}.name is {}; the model's outputs are '{}' and '{}'", where,
                                   name->dump(), kV2Outputs[0].name, kV2Outputs[1].name));
}

// The outputs asked (every one when none is named), each binary or not; `all_binary` is the
// request's parameters.binary_data_output.
void read_outputs(const nlohmann::json& j, bool all_binary, PredictRequest& r) {
  const auto outputs = j.find("outputs");
  if (outputs != j.end() && !outputs->is_array()) throw HttpError(400, "outputs must be an array");
  if (outputs == j.end() || outputs->empty()) {
    for (size_t i = 0; i < kV2OutputCount; ++i) r.outputs.push_back(i);
    r.binary.assign(kV2OutputCount, all_binary);
    return;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string where = fmt::format("outputs[{}]", i);
    std::optional<bool> binary;
    const size_t which = read_output((*outputs)[i], where, binary);
    if (std::find(r.outputs.begin(), r.outputs.end(), which) != r.outputs.end()) {
      throw HttpError(400,
                      fmt::format("{}.name '{}' is asked twice", where, kV2Outputs[which].name));
    }
    r.outputs.push_back(which);
    r.binary.push_back(binary.value_or(all_binary));
  }
}

}  // namespace

uint64_t parse_header_length(const std::string& value, size_t body_bytes) {
  const bool digits =
      !value.empty() && value.size() <= 19 &&
      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  const uint64_t bytes = digits ? std::stoull(value) : 0;
  if (!digits || bytes > body_bytes) {
    throw HttpError(400, fmt::format("the Inference-Header-Content-Length header must be the "
                                     "JSON's length in bytes, at most the body's {}",
                                     body_bytes));
  }
  return bytes;
}

PredictRequest parse_infer(std::string_view body, const RequestLimits& limits,
                           std::optional<uint64_t> json_bytes) {
  const size_t json_end = std::min<uint64_t>(json_bytes.value_or(body.size()), body.size());
  const nlohmann::json j = parse_object(body.substr(0, json_end));
  refuse_unknown(j, {"id", "inputs", "outputs", "parameters"}, "");
  PredictRequest r;
  if (auto id = j.find("id"); id != j.end()) {
    if (!id->is_string()) throw HttpError(400, "id must be a string");
    r.id = id->get<std::string>();
  }
  read_input(j, body.substr(json_end), json_bytes.has_value(), limits, r);
  bool all_binary = false;
  if (auto p = j.find("parameters"); p != j.end()) {
    if (!p->is_object()) throw HttpError(400, "parameters must be an object");
    if (auto b = p->find("binary_data_output"); b != p->end()) {
      if (!b->is_boolean())
        throw HttpError(400, "parameters.binary_data_output must be true or false");
      all_binary = b->get<bool>();
    }
    read_options(*p, "parameters.", r);
  }
  read_outputs(j, all_binary, r);
  return r;
}

}  // namespace sift::serve
