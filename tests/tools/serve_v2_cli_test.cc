// `sift serve`'s Open Inference Protocol v2 (KServe / Triton HTTP) against a real server
// process and cpp-httplib's client: the request id echoed, the outputs asked for and only
// those, the /versions/{version}/ routes, the input's name checked, the binary tensor data
// extension (texts in, labels and scores out, as tritonclient.http sends and reads them by
// default), and metadata that describes what infer reads and answers.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "serve_server.h"

namespace sift {
namespace serve_test {

namespace {

const char* const kInfer = "/v2/models/trec/infer";
const char* const kJsonBytes = "Inference-Header-Content-Length";

// `texts` in the binary tensor data extension's BYTES layout: each a 4-byte little-endian
// length and its bytes.
std::string bytes_elements(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) {
    const auto n = static_cast<uint32_t>(t.size());
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((n >> (8 * b)) & 0xFF));
    out += t;
  }
  return out;
}

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int b = 3; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(s.at(at + b));
  return v;
}

// A binary answer's outputs with their data read back into JSON arrays, as a client
// reads them: each output's binary_data_size bytes in turn after the JSON.
json read_binary_answer(const httplib::Result& r) {
  const size_t json_bytes = std::stoul(r->get_header_value(kJsonBytes));
  json answer = json::parse(r->body.substr(0, json_bytes));
  size_t at = json_bytes;
  for (auto& out : answer.at("outputs")) {
    if (!out.contains("parameters")) continue;
    const size_t end = at + out.at("parameters").at("binary_data_size").get<size_t>();
    json data = json::array();
    while (at < end) {
      const uint32_t v = le32(r->body, at);
      at += 4;
      if (out.at("datatype") == "BYTES") {
        data.push_back(r->body.substr(at, v));
        at += v;
      } else {
        float f;
        std::memcpy(&f, &v, sizeof f);
        data.push_back(f);
      }
    }
    out.erase("parameters");
    out["data"] = data;
  }
  EXPECT_EQ(at, r->body.size()) << "bytes after the outputs' binary data";
  return answer;
}

// A v2 infer body of `texts` as one BYTES input named `input`, with `more` fields.
std::string infer_request(const std::vector<std::string>& texts, json more = json::object(),
                          const std::string& input = "text") {
  more["inputs"] = json::array(
      {{{"name", input}, {"datatype", "BYTES"}, {"shape", {texts.size()}}, {"data", texts}}});
  return more.dump();
}

// The error message of a JSON error body ("" when the body is not one).
std::string error_of(const std::string& body) {
  return json::accept(body) ? json::parse(body).value("error", "") : "";
}

}  // namespace

TEST_F(ServeCli, V2InferEchoesTheIdAndAnswersOnlyTheOutputsAskedInTheirOrder) {
  Server s(dir_, {"--model", "trec=" + train_fasttext()});
  const std::vector<std::string> texts = {"Who wrote Hamlet ?", "How far is the moon ?"};
  const json params = {{"top_k", 2}};
  auto [status, body] = s.post(kInfer, infer_request(texts, {{"parameters", params}}));
  ASSERT_EQ(status, 200) << body;
  const json all = json::parse(body);
  EXPECT_FALSE(all.contains("id")) << body;  // none asked, none answered
  ASSERT_EQ(all.at("outputs").size(), 2u);

  std::tie(status, body) = s.post(
      kInfer,
      infer_request(texts,
                    {{"id", "req-7"}, {"parameters", params}, {"outputs", {{{"name", "score"}}}}}));
  ASSERT_EQ(status, 200) << body;
  json answer = json::parse(body);
  EXPECT_EQ(answer.at("id"), "req-7");
  ASSERT_EQ(answer.at("outputs").size(), 1u) << body;
  EXPECT_EQ(answer.at("outputs")[0].at("name"), "score");
  EXPECT_EQ(answer.at("outputs")[0].at("datatype"), "FP32");
  EXPECT_EQ(answer.at("outputs")[0].at("shape"), json::array({2, 2}));
  EXPECT_EQ(answer.at("outputs")[0].at("data"), all.at("outputs")[1].at("data"));

  // Both, score first: answered in the order asked (binary_data false: in JSON; binary
  // answers have their own test below).
  std::tie(status, body) = s.post(
      kInfer, infer_request(texts, {{"id", ""},
                                    {"parameters", params},
                                    {"outputs",
                                     {{{"name", "score"}, {"parameters", {{"binary_data", false}}}},
                                      {{"name", "label"}}}}}));
  ASSERT_EQ(status, 200) << body;
  answer = json::parse(body);
  EXPECT_EQ(answer.at("id"), "");
  ASSERT_EQ(answer.at("outputs").size(), 2u) << body;
  EXPECT_EQ(answer.at("outputs")[0], all.at("outputs")[1]);
  EXPECT_EQ(answer.at("outputs")[1], all.at("outputs")[0]);
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

TEST_F(ServeCli, V2RefusalsNameTheFieldWithTheirStatusAndTheServerStaysUp) {
  Server s(dir_, {"--model", "trec=" + train_fasttext()});
  const std::vector<std::string> one = {"Who wrote Hamlet ?"};
  struct Case {
    std::string path, body;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {kInfer, infer_request(one, {}, "input_ids"), 400,
       "inputs[0].name is \"input_ids\"; the model's input is named 'text'"},
      {kInfer, R"({"inputs": [{"datatype": "BYTES", "shape": [1], "data": ["a"]}]})", 400,
       "missing field inputs[0].name"},
      {kInfer, infer_request(one, {{"outputs", {{{"name", "probs"}}}}}), 400,
       "outputs[0].name is \"probs\"; the model's outputs are 'label' and 'score'"},
      {kInfer, infer_request(one, {{"outputs", {{{"name", "label"}}, {{"name", "label"}}}}}), 400,
       "outputs[1].name 'label' is asked twice"},
      {kInfer,
       infer_request(one,
                     {{"outputs", {{{"name", "label"}, {"parameters", {{"classification", 2}}}}}}}),
       400, "unknown field outputs[0].parameters.classification"},
      {kInfer, infer_request(one, {{"outputs", "label"}}), 400, "outputs must be an array"},
      {kInfer, infer_request(one, {{"id", 7}}), 400, "id must be a string"},
      {kInfer,
       R"({"inputs": [{"name": "text", "datatype": "BYTES", "shape": [1], "data": ["a"],
           "parameters": {"binary_data_size": 5}}]})",
       400, "inputs[0].parameters.binary_data_size needs the Inference-Header-Content-Length"},
      {"/v2/models/trec/versions/2/infer", infer_request(one), 404,
       "model 'trec' has no version '2' (version 1 is served)"},
      {"/v2/models/nope/versions/1/infer", infer_request(one), 404, "no model named 'nope'"},
  };
  for (const auto& c : cases) {
    const auto [status, body] = s.post(c.path, c.body);
    EXPECT_EQ(status, c.status) << c.body << " -> " << body;
    EXPECT_NE(error_of(body).find(c.says), std::string::npos) << c.body << " -> " << body;
  }
  auto c = s.client();
  for (const char* path : {"/v2/models/trec/versions/2", "/v2/models/trec/versions/2/ready"}) {
    const auto [status, body] = s.get(path);
    EXPECT_EQ(status, 404) << path;
    EXPECT_NE(error_of(body).find("no version '2'"), std::string::npos) << body;
  }
  auto r = c.Get("/v2/models/trec/versions/1/infer");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  EXPECT_EQ(s.post(kInfer, infer_request(one)).first, 200);
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

TEST_F(ServeCli, V2InferReadsAndAnswersBinaryTensorDataAsTritonclientSendsItByDefault) {
  Server s(dir_, {"--model", "trec=" + train_fasttext(), "--max-texts", "4"});
  const std::vector<std::string> texts = {"Who wrote Hamlet ?", "How far is the moon ?",
                                          "Où est la gare ?"};
  const json params = {{"top_k", 2}};
  const auto [status, plain] = s.post(kInfer, infer_request(texts, {{"parameters", params}}));
  ASSERT_EQ(status, 200) << plain;
  const json expected = json::parse(plain);
  auto c = s.client();
  // binary_data_output: every output answered in binary; the texts sent in binary too.
  const auto send = [&](json header) {
    header["inputs"] = {{{"name", "text"},
                         {"datatype", "BYTES"},
                         {"shape", {texts.size()}},
                         {"parameters", {{"binary_data_size", bytes_elements(texts).size()}}}}};
    const std::string h = header.dump();
    return c.Post(kInfer, {{kJsonBytes, std::to_string(h.size())}}, h + bytes_elements(texts),
                  "application/octet-stream");
  };
  json with_params = params;
  with_params["binary_data_output"] = true;
  auto r = send({{"parameters", with_params}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  ASSERT_TRUE(r->has_header(kJsonBytes));
  const json binary = read_binary_answer(r);
  ASSERT_EQ(binary.at("outputs").size(), 2u);
  EXPECT_EQ(binary.at("outputs")[0], expected.at("outputs")[0]);  // labels, byte for byte
  ASSERT_EQ(binary.at("outputs")[1].at("data").size(), 6u);
  for (size_t i = 0; i < 6; ++i) {  // scores: the JSON's decimal digits against fp32 bits
    EXPECT_NEAR(binary.at("outputs")[1].at("data")[i].get<double>(),
                expected.at("outputs")[1].at("data")[i].get<double>(), 1e-6);
  }
  // An output's binary_data overrides binary_data_output: labels in JSON, scores in binary.
  r = send(
      {{"parameters", with_params},
       {"outputs",
        {{{"name", "label"}, {"parameters", {{"binary_data", false}}}}, {{"name", "score"}}}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json mixed = read_binary_answer(r);
  EXPECT_EQ(mixed.at("outputs")[0], expected.at("outputs")[0]);
  EXPECT_EQ(mixed.at("outputs")[1], binary.at("outputs")[1]);
  // Texts in binary, answer in JSON (no binary output asked): no header, a JSON body.
  r = send({{"parameters", params}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(r->has_header(kJsonBytes));
  EXPECT_EQ(json::parse(r->body), expected);

  // Refusals: each a 400 (413 for too many texts) naming what is wrong; the server stays up.
  const std::string one =
      R"({"inputs":[{"name":"text","datatype":"BYTES","parameters":{"binary_data_size":)";
  struct Case {
    std::string header, tail, length;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {one + "8}}]}", bytes_elements({"hi"}), "", 400, "the body holds 6 bytes after its JSON"},
      {one + "6}}]}", std::string("\x09\x00\x00\x00hi", 6), "", 400,
       "ends inside element 0 (9 bytes said, 2 left)"},
      {one + "3}}]}", std::string("\x02\x00\x00", 3), "", 400, "ends inside element 0's length"},
      {one + "6}}]}", std::string("\x02\x00\x00\x00\xc3\x28", 6), "", 400,
       "inputs[0] element 0 is not valid UTF-8 (byte 0)"},
      {one + "-1}}]}", "", "", 400, "binary_data_size must be an integer >= 0"},
      {one + "0}}]}", "", "", 400, "inputs[0]'s binary data must hold at least one text"},
      {one + "6, \"foo\": 1}}]}", bytes_elements({"hi"}), "", 400,
       "unknown field inputs[0].parameters.foo"},
      {R"({"inputs":[{"name":"text","datatype":"BYTES","data":["a"],"parameters":{"binary_data_size":6}}]})",
       bytes_elements({"hi"}), "", 400, "inputs[0] has both data and parameters.binary_data_size"},
      {one + "25}}]}", bytes_elements({"a", "b", "c", "d", "e"}), "", 413,
       "inputs[0]'s binary data holds 5 texts; at most 4 per request"},
      {one + "6}}]}", bytes_elements({"hi"}), "12x", 400,
       "the Inference-Header-Content-Length header must be the JSON's length in bytes"},
      {one + "6}}]}", bytes_elements({"hi"}), "100000", 400, "at most the body's"},
  };
  for (const auto& k : cases) {
    const std::string length = k.length.empty() ? std::to_string(k.header.size()) : k.length;
    r = c.Post(kInfer, {{kJsonBytes, length}}, k.header + k.tail, "application/octet-stream");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, k.status) << k.header << " -> " << r->body;
    EXPECT_NE(error_of(r->body).find(k.says), std::string::npos) << k.header << " -> " << r->body;
  }
  EXPECT_EQ(json::parse(s.get("/v2").second).at("extensions"), json::array({"binary_tensor_data"}));
  EXPECT_EQ(s.post(kInfer, infer_request(texts)).first, 200);
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

TEST_F(ServeCli, V2VersionedRoutesServeTheLoadedVersionAndFollowAReload) {
  Server s(dir_, {"--model", "trec=" + train_fasttext()});
  const std::string body = infer_request({"Who wrote Hamlet ?"}, {{"parameters", {{"top_k", 3}}}});
  const auto plain = s.post(kInfer, body);
  ASSERT_EQ(plain.first, 200) << plain.second;
  const auto v1 = s.post("/v2/models/trec/versions/1/infer", body);
  ASSERT_EQ(v1.first, 200) << v1.second;
  EXPECT_EQ(json::parse(v1.second), json::parse(plain.second));
  EXPECT_EQ(json::parse(v1.second).at("model_version"), "1");
  EXPECT_EQ(s.get("/v2/models/trec/versions/1").second, s.get("/v2/models/trec").second);
  EXPECT_EQ(s.get("/v2/models/trec/versions/1/ready").first, 200);

  ASSERT_EQ(s.post("/v1/models/trec/reload", "").first, 200);
  auto [status, answer] = s.post("/v2/models/trec/versions/1/infer", body);
  EXPECT_EQ(status, 404);
  EXPECT_NE(error_of(answer).find("no version '1' (version 2 is served)"), std::string::npos)
      << answer;
  EXPECT_EQ(s.get("/v2/models/trec/versions/1/ready").first, 404);
  std::tie(status, answer) = s.post("/v2/models/trec/versions/2/infer", body);
  ASSERT_EQ(status, 200) << answer;
  EXPECT_EQ(json::parse(answer).at("model_version"), "2");
  EXPECT_EQ(json::parse(s.get("/v2/models/trec/versions/2").second).at("versions"),
            json::array({"2"}));
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

TEST_F(ServeCli, V2MetadataDescribesTheTensorsInferReadsAndAnswers) {
  Server s(dir_, {"--model", "trec=" + train_fasttext()});
  const json meta = json::parse(s.get("/v2/models/trec").second);
  EXPECT_EQ(meta.at("name"), "trec");
  EXPECT_EQ(meta.at("versions"), json::array({"1"}));
  ASSERT_EQ(meta.at("inputs").size(), 1u);
  const json& input = meta.at("inputs")[0];
  // A request built from the metadata alone: its input's name and datatype, a shape of its
  // rank ([-1]: the texts), and every output it lists, asked by name.
  ASSERT_EQ(input.at("shape"), json::array({-1}));
  json request = {{"inputs",
                   {{{"name", input.at("name")},
                     {"datatype", input.at("datatype")},
                     {"shape", {3}},
                     {"data", {"Who wrote Hamlet ?", "What is a fjord ?", "When did it rain ?"}}}}},
                  {"parameters", {{"top_k", 2}}},
                  {"outputs", json::array()}};
  for (const auto& out : meta.at("outputs"))
    request["outputs"].push_back({{"name", out.at("name")}});
  const auto [status, body] = s.post(kInfer, request.dump());
  ASSERT_EQ(status, 200) << body;
  const json outputs = json::parse(body).at("outputs");
  ASSERT_EQ(outputs.size(), meta.at("outputs").size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const json& said = meta.at("outputs")[i];
    EXPECT_EQ(outputs[i].at("name"), said.at("name"));
    EXPECT_EQ(outputs[i].at("datatype"), said.at("datatype"));
    ASSERT_EQ(outputs[i].at("shape").size(), said.at("shape").size()) << said;
    EXPECT_EQ(outputs[i].at("shape"), json::array({3, 2}));
    int64_t elements = 1;
    for (const auto& d : outputs[i].at("shape")) elements *= d.get<int64_t>();
    ASSERT_EQ(outputs[i].at("data").size(), static_cast<size_t>(elements));
    for (const auto& v : outputs[i].at("data")) {
      EXPECT_TRUE(said.at("datatype") == "BYTES" ? v.is_string() : v.is_number_float()) << v;
    }
  }
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

}  // namespace serve_test
}  // namespace sift
