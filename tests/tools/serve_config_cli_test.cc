// `sift serve --config FILE`: the serve: section of a YAML file gives the options the
// flags give (the flags override it), and a wrong key or value is one `sift: error:` line
// naming FILE:LINE and the key.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "serve_server.h"

namespace sift {
namespace serve_test {

TEST_F(ServeCli, AServeSectionGivesTheOptionsAndAFlagOverridesIt) {
  const std::string run = train_fasttext();
  testing::write_file(dir_ + "/serve.yaml", "serve:\n  models:\n    trec: " + run +
                                                "\n  max_texts: 2\n  max_text_bytes: 5\n"
                                                "  access_log: false\n");
  Server s(dir_, {"--config", dir_ + "/serve.yaml", "--max-texts", "3"});
  ASSERT_GT(s.port(), 0) << s.err();
  // --max-texts 3 overrides the file's 2; max_text_bytes: 5 is the file's.
  auto [status, body] = s.post("/v1/models/trec/predict", texts_body({"Who wrote it ?", "a", "b"}));
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(json::parse(body).at("truncated"), json::array({0}));
  std::tie(status, body) = s.post("/v1/models/trec/predict", texts_body({"a", "b", "c", "d"}));
  EXPECT_EQ(status, 413) << body;
  EXPECT_NE(body.find("at most 3"), std::string::npos) << body;
  EXPECT_EQ(s.stop(SIGTERM), 0);
  // access_log: false.
  EXPECT_EQ(s.err().find("POST /v1/models/trec/predict"), std::string::npos) << s.err();
  EXPECT_NE(s.err().find("model trec: fasttext"), std::string::npos) << s.err();
}

TEST_F(ServeCli, ABadServeConfigIsOneErrorNamingTheFileLineAndKey) {
  const std::string run = train_fasttext();
  struct Case {
    std::string yaml;
    std::vector<std::string> says;
  };
  const std::string models = "serve:\n  models:\n    trec: " + run + "\n";
  const std::vector<Case> cases = {
      {models + "  max_batchs: 8\n", {"serve.yaml:4", "serve.max_batchs", "did you mean 'max_batch'"}},
      {models + "  max_batch: 0\n", {"serve.yaml:4", "serve.max_batch", "0 is not in [1, 4096]"}},
      {models + "  workers: two\n", {"serve.yaml:4", "serve.workers", "an integer", "'two'"}},
      {models + "  insecure: maybe\n", {"serve.yaml:4", "serve.insecure", "true or false"}},
      {models + "  port: 1\n  port: 2\n", {"serve.yaml:5", "serve.port", "given twice"}},
      {models + "train:\n  epochs: 3\n", {"serve.yaml:4", "unknown section 'train'"}},
      {"serve:\n  max_batch: 8\n", {"no model to serve"}},
      {"serve:\n  models: [1, 2\n", {"serve.yaml:", "YAML syntax error"}},
      {models + "  host: 0.0.0.0\n", {"--host 0.0.0.0", "--auth-token-file"}},
  };
  for (const auto& c : cases) {
    testing::write_file(dir_ + "/serve.yaml", c.yaml);
    const Result r = sift("serve --config " + quote(dir_ + "/serve.yaml") + " --port 0");
    EXPECT_TRUE(testing::CleanSiftError(r, c.says)) << c.yaml;
  }
  // A flag's own range: the same check, naming the flag; a usage error (exit 2) in one line,
  // not CLI11's two.
  for (const auto& [flag, says] : std::vector<std::pair<std::string, std::string>>{
           {"--max-batch 0", "--max-batch: 0 is not in [1, 4096]"},
           {"--workers two", "--workers: 'two' is not a number"},
           {"--port 70000", "--port: 70000 is not in [0, 65535]"}}) {
    const Result r = sift("serve --model " + quote(run) + " " + flag);
    EXPECT_EQ(r.status, 2) << r;
    EXPECT_TRUE(testing::CleanSiftError(r, {says})) << flag;
  }
  EXPECT_TRUE(testing::CleanSiftError(sift("serve --config " + quote(dir_ + "/none.yaml")),
                                      {"cannot open config file", "none.yaml"}));
}

}  // namespace serve_test
}  // namespace sift
