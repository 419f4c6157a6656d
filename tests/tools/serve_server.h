// `sift serve` under test: a real server on an ephemeral port driven over HTTP by
// cpp-httplib's client, and the fixture that trains the models it serves (shared by the
// serve_*_cli_test.cc files).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "process.h"
#include "run_sift.h"

namespace sift {
namespace serve_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::quote;
using Result = testing::SiftResult;
using testing::operator<<;

inline const std::string kSource = SIFT_SOURCE_DIR;
inline const std::string kTrec = kSource + "/tests/data/trec/";

// A tiny Transformer on the TREC sample (about a second to train).
inline const char* const kTransformerYaml = R"(run:
  threads: 1
data:
  format: label_first
  encoding: latin-1
  valid_split: 0
  max_length: 32
model:
  type: transformer
  dim: 32
  layers: 1
  heads: 2
  ff_dim: 64
  max_positions: 32
train:
  epochs: 1
  batch_size: 16
  optimizer:
    type: adamw
    lr: 0.002
)";

// A `sift serve` process on a free port, killed (if still running) when dropped.
class Server {
 public:
  Server(const std::string& dir, std::vector<std::string> args) : dir_(dir) {
    fs::remove(dir + "/port");
    args.insert(args.begin(), "serve");
    for (const char* a : {"--port", "0", "--port-file", "port"}) args.emplace_back(a);
    pid_ = testing::start_sift(dir, args);
    testing::wait_for_file(dir + "/port");
    port_ = std::atoi(testing::slurp(dir + "/port").c_str());
  }
  ~Server() {
    if (pid_ > 0 && ::kill(pid_, SIGKILL) == 0) testing::wait_for(pid_);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The exit status after `sig`.
  int stop(int sig) {
    ::kill(pid_, sig);
    const int status = testing::wait_for(pid_);
    pid_ = -1;
    return status;
  }
  std::string err() const { return testing::slurp(dir_ + "/err"); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30);
    c.set_tcp_nodelay(true);  // else Nagle holds the body behind the headers for 40 ms
    return c;
  }
  // POST `body` to `path`: (status, body); status -1 when no answer came.
  std::pair<int, std::string> post(const std::string& path, const std::string& body) const {
    auto c = client();
    auto r = c.Post(path.c_str(), body, "application/json");
    return r ? std::make_pair(r->status, r->body) : std::make_pair(-1, std::string());
  }
  std::pair<int, std::string> get(const std::string& path) const {
    auto c = client();
    auto r = c.Get(path.c_str());
    return r ? std::make_pair(r->status, r->body) : std::make_pair(-1, std::string());
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

inline std::string texts_body(const std::vector<std::string>& texts, const std::string& more = "") {
  std::string body = json({{"texts", texts}}).dump();
  body.pop_back();  // the closing brace, after `more`
  return body + more + "}";
}

// (label, score) rows of a /v1 answer.
inline std::vector<std::vector<std::pair<std::string, double>>> rows_of(const std::string& body) {
  std::vector<std::vector<std::pair<std::string, double>>> out;
  const json answer = json::parse(body);
  for (const auto& row : answer.at("predictions")) {
    out.emplace_back();
    for (const auto& p : row) out.back().emplace_back(p.at("label"), p.at("score"));
  }
  return out;
}

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::make_temp_dir("sift_serve"); }
  Result sift(const std::string& args, const std::string& env = "") {
    return testing::run_command(env + " " + quote(SIFT_BINARY) + " " + args, dir_, "", kSource);
  }
  // configs/trec.yaml's fastText model on the TREC sample.
  std::string train_fasttext(const std::string& name = "ft") {
    const Result r = sift(
        "train configs/trec.yaml --quiet --set run.dir=" + quote(dir_) + " --set run.name=" + name +
        " --set data.train.path=" + quote(kTrec + "TREC.train.sample") +
        " --set data.test.path=" + quote(kTrec + "TREC.test.sample") + " --set train.epochs=5");
    EXPECT_EQ(r.status, 0) << r;
    return dir_ + "/" + name;
  }
  std::string train_transformer() { return train_yaml("tf", kTransformerYaml); }
  // The run `name` of `yaml` (with --set `sets`) on the TREC sample.
  std::string train_yaml(const std::string& name, const std::string& yaml,
                         const std::string& sets = "") {
    testing::write_file(dir_ + "/" + name + ".yaml", yaml);
    const Result r = sift("train " + quote(dir_ + "/" + name + ".yaml") + " --quiet --set run.dir=" +
                          quote(dir_) + " --set run.name=" + name + " --set data.train.path=" +
                          quote(kTrec + "TREC.train.sample") + " --set data.test.path=" +
                          quote(kTrec + "TREC.test.sample") + sets);
    EXPECT_EQ(r.status, 0) << r;
    return dir_ + "/" + name;
  }
  // The TREC sample's questions (label dropped), one per text.
  std::vector<std::string> questions(size_t n) {
    std::vector<std::string> out;
    for (const auto& line : testing::lines_of(testing::slurp(kTrec + "TREC.test.sample"))) {
      const size_t space = line.find(' ');
      if (space != std::string::npos) out.push_back(line.substr(space + 1));
      if (out.size() == n) break;
    }
    return out;
  }
  // `sift predict --json` of `model` for `texts`: (label, score) rows.
  std::vector<std::vector<std::pair<std::string, double>>> predicted(
      const std::string& model, const std::vector<std::string>& texts, const std::string& options) {
    std::string input;
    for (const auto& t : texts) input += t + "\n";
    testing::write_file(dir_ + "/texts.txt", input);
    const Result r = sift("predict --json --model " + quote(model) + " --input " +
                          quote(dir_ + "/texts.txt") + " " + options);
    EXPECT_EQ(r.status, 0) << r;
    std::vector<std::vector<std::pair<std::string, double>>> out;
    for (const auto& line : testing::lines_of(r.out)) {
      out.emplace_back();
      const json printed = json::parse(line);
      for (const auto& p : printed.at("predictions")) {
        out.back().emplace_back(p.at("label"), p.at("score"));
      }
    }
    return out;
  }
  std::string dir_;
};

}  // namespace serve_test
}  // namespace sift
