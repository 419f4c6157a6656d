// `sift serve`'s options, declared and checked alike by sift-main and sift-lite (which
// serves fastText models without LibTorch and hands any other model to sift-main). One
// table names each option's flag and its key under a config file's `serve:` section
// (serve_config.h), with its range: the command line and the file are checked alike.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "tools/serve/batch_queue.h"
#include "tools/serve/http_server.h"

namespace sift::serve {

struct ServeArgs {
  std::string config_file;          // --config: a YAML file with a serve: section
  std::vector<std::string> models;  // NAME=PATH, or PATH
  HttpSettings http;
  BatchLimits batch;
  std::string auth_token_file;
  bool insecure = false;
  std::string port_file;
  double drain_seconds = 10;
  int64_t compute_threads = 0;  // LibTorch's threads per worker; 0: the cores / workers
};

// One option: its key under `serve:` (max_batch), its flag (--max-batch; "!--no-x" for a
// flag that sets it false), what it says, where its value goes and, for a number, its range.
struct ServeOption {
  using Field =
      std::variant<int64_t*, int*, double*, bool*, std::string*, std::vector<std::string>*>;
  std::string key, flag, help;
  std::function<Field(ServeArgs&)> field;
  double min = 0, max = 0;  // a number's range, both ends included
};
const std::vector<ServeOption>& serve_options();
// The option's flag as CLI11 names it (--no-access-log for "!--no-access-log").
std::string flag_name(const ServeOption& option);
// "" when `value` is in the option's range, else what is wrong ("0 is not in [1, 4096]").
std::string out_of_range(const ServeOption& option, double value);

struct ModelSpec {
  std::string name, path;
};

void add_serve_options(CLI::App& cmd, ServeArgs& args);

// The --model NAME=PATH pairs (a bare PATH named after its file or folder); sift::Error naming the
// option when one is malformed or a name repeats, or when no model is given.
std::vector<ModelSpec> model_specs(const ServeArgs& args);

// Checks the options against each other and reads the token file into args.http.token:
// a bind other than loopback needs --auth-token-file or --insecure. sift::Error naming
// the option.
void resolve_serve_args(ServeArgs& args);

}  // namespace sift::serve
