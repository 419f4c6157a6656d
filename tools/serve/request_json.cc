#include "tools/serve/request_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sift::serve {

size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    unsigned min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, min = 0x10000;
    } else {
      return i;
    }
    unsigned cp = c & (0x3F >> n);
    for (size_t j = 1; j <= n; ++j) {
      if (i + j >= s.size()) return i;
      const auto d = static_cast<unsigned char>(s[i + j]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

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

std::vector<std::string> texts_of(const nlohmann::json& array, const std::string& field,
                                  const RequestLimits& limits, std::vector<size_t>& truncated) {
  if (!array.is_array()) throw HttpError(400, fmt::format("{} must be an array of strings", field));
  if (array.empty()) throw HttpError(400, fmt::format("{} must hold at least one text", field));
  if (static_cast<int64_t>(array.size()) > limits.max_texts) {
    throw HttpError(413, fmt::format("{} holds {} texts; at most {} per request", field,
                                     array.size(), limits.max_texts));
  }
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

[[noreturn]] void refuse_binary(const std::string& field) {
  throw HttpError(400, fmt::format("{}: the binary tensor data extension is not supported; send "
                                   "the texts as JSON \"data\" (tritonclient.http: "
                                   "binary_data=False)",
                                   field));
}

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

// inputs: one BYTES tensor named kV2Input.
void read_input(const nlohmann::json& j, const RequestLimits& limits, PredictRequest& r) {
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
  if (auto p = input.find("parameters"); p != input.end()) {
    if (!p->is_object()) throw HttpError(400, "inputs[0].parameters must be an object");
    if (p->contains("binary_data_size")) refuse_binary("inputs[0].parameters.binary_data_size");
  }
  const auto data = input.find("data");
  if (data == input.end()) throw HttpError(400, "missing field inputs[0].data");
  r.texts = texts_of(*data, "inputs[0].data", limits, r.truncated);
  check_shape(input, r.texts.size());
}

// outputs[i]: {"name", "parameters"}; binary_data is answered as JSON data, which clients read.
size_t read_output(const nlohmann::json& output, const std::string& where) {
  if (!output.is_object()) throw HttpError(400, where + " must be an object");
  refuse_unknown(output, {"name", "parameters"}, where + ".");
  const auto name = output.find("name");
  if (name == output.end()) throw HttpError(400, fmt::format("missing field {}.name", where));
  if (auto p = output.find("parameters"); p != output.end()) {
    if (!p->is_object()) throw HttpError(400, where + ".parameters must be an object");
    refuse_unknown(*p, {"binary_data"}, where + ".parameters.");
    if (auto b = p->find("binary_data"); b != p->end() && !b->is_boolean()) {
      throw HttpError(400, where + ".parameters.binary_data must be true or false");
    }
  }
  for (size_t i = 0; i < kV2OutputCount; ++i) {
    if (name->is_string() && name->get<std::string>() == kV2Outputs[i].name) return i;
  }
  throw HttpError(400, fmt::format("{}.name is {}; the model's outputs are '{}' and '{}'", where,
                                   name->dump(), kV2Outputs[0].name, kV2Outputs[1].name));
}

void read_outputs(const nlohmann::json& j, PredictRequest& r) {
  const auto outputs = j.find("outputs");
  if (outputs == j.end()) return;
  if (!outputs->is_array()) throw HttpError(400, "outputs must be an array");
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string where = fmt::format("outputs[{}]", i);
    const size_t which = read_output((*outputs)[i], where);
    if (std::find(r.outputs.begin(), r.outputs.end(), which) != r.outputs.end()) {
      throw HttpError(400,
                      fmt::format("{}.name '{}' is asked twice", where, kV2Outputs[which].name));
    }
    r.outputs.push_back(which);
  }
}

}  // namespace

PredictRequest parse_infer(std::string_view body, const RequestLimits& limits) {
  const nlohmann::json j = parse_object(body);
  refuse_unknown(j, {"id", "inputs", "outputs", "parameters"}, "");
  PredictRequest r;
  if (auto id = j.find("id"); id != j.end()) {
    if (!id->is_string()) throw HttpError(400, "id must be a string");
    r.id = id->get<std::string>();
  }
  read_input(j, limits, r);
  read_outputs(j, r);
  if (r.outputs.empty()) {
    for (size_t i = 0; i < kV2OutputCount; ++i) r.outputs.push_back(i);
  }
  if (auto p = j.find("parameters"); p != j.end()) {
    if (!p->is_object()) throw HttpError(400, "parameters must be an object");
    if (auto b = p->find("binary_data_output"); b != p->end() && !b->is_boolean()) {
      throw HttpError(400, "parameters.binary_data_output must be true or false");
    }
    read_options(*p, "parameters.", r);
  }
  return r;
}

}  // namespace sift::serve
