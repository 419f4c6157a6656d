// `sift serve`'s options, declared and checked alike by sift-main and sift-lite (which
// serves fastText models without LibTorch and hands any other model to sift-main).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/serve/batch_queue.h"
#include "tools/serve/http_server.h"

namespace sift::serve {

struct ServeArgs {
  std::vector<std::string> models;  // NAME=PATH, or PATH
  HttpSettings http;
  BatchLimits batch;
  std::string auth_token_file;
  bool insecure = false;
  std::string port_file;
  double drain_seconds = 10;
  int64_t compute_threads = 0;  // LibTorch's threads per worker; 0: the cores / workers
};

struct ModelSpec {
  std::string name, path;
};

void add_serve_options(CLI::App& cmd, ServeArgs& args);

// The --model NAME=PATH pairs (a bare PATH named after its file or folder); sift::Error naming the
// option when one is malformed or a name repeats.
std::vector<ModelSpec> model_specs(const ServeArgs& args);

// Checks the options against each other and reads the token file into args.http.token:
// a bind other than loopback needs --auth-token-file or --insecure. sift::Error naming
// the option.
void resolve_serve_args(ServeArgs& args);

}  // namespace sift::serve
