// `sift serve`'s Open Inference Protocol v2 (KServe / Triton HTTP) against a real server
// process and cpp-httplib's client: the request id echoed, the outputs asked for and only
// those, the /versions/{version}/ routes, the input's name checked, the binary tensor data
// extension refused, and metadata that describes what infer reads and answers.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "serve_server.h"

namespace sift {
namespace serve_test {

namespace {

const char* const kInfer = "/v2/models/trec/infer";

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

  // Both, score first: answered in the order asked. binary_data (tritonclient's default for
  // a requested output) is answered as JSON data, which its client reads.
  std::tie(status, body) = s.post(
      kInfer, infer_request(texts, {{"id", ""},
                                    {"parameters", params},
                                    {"outputs",
                                     {{{"name", "score"}, {"parameters", {{"binary_data", true}}}},
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
       400, "inputs[0].parameters.binary_data_size: the binary tensor data extension"},
      {"/v2/models/trec/versions/2/infer", infer_request(one), 404,
       "model 'trec' has no version '2' (version 1 is served)"},
      {"/v2/models/nope/versions/1/infer", infer_request(one), 404, "no model named 'nope'"},
  };
  for (const auto& c : cases) {
    const auto [status, body] = s.post(c.path, c.body);
    EXPECT_EQ(status, c.status) << c.body << " -> " << body;
    EXPECT_NE(error_of(body).find(c.says), std::string::npos) << c.body << " -> " << body;
  }
  // A binary request as tritonclient.http writes one with binary_data=True: the JSON header,
  // then each BYTES element as a 4-byte little-endian length and its bytes.
  const std::string header =
      R"({"inputs":[{"name":"text","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":6}}]})";
  const std::string binary = header + std::string("\x02\x00\x00\x00hi", 6);
  auto c = s.client();
  auto r = c.Post(kInfer, {{"Inference-Header-Content-Length", std::to_string(header.size())}},
                  binary, "application/octet-stream");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(error_of(r->body).find(
                "Inference-Header-Content-Length header: the binary tensor data extension"),
            std::string::npos)
      << r->body;
  for (const char* path : {"/v2/models/trec/versions/2", "/v2/models/trec/versions/2/ready"}) {
    const auto [status, body] = s.get(path);
    EXPECT_EQ(status, 404) << path;
    EXPECT_NE(error_of(body).find("no version '2'"), std::string::npos) << body;
  }
  r = c.Get("/v2/models/trec/versions/1/infer");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  EXPECT_EQ(s.post(kInfer, infer_request(one)).first, 200);
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
