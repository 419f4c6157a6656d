#include "tools/serve/serve_options.h"

#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "core/error.h"
#include "tools/serve/auth.h"

namespace sift::serve {

void add_serve_options(CLI::App& cmd, ServeArgs& a) {
  cmd.add_option("--model", a.models,
                 "NAME=PATH: serve the run folder or `sift export` file at PATH as NAME "
                 "(repeatable; a bare PATH is named after its file or folder: sms.pt -> sms)")
      ->required();
  cmd.add_option("--host", a.http.host,
                 "Address to listen on; anything but loopback needs --auth-token-file or "
                 "--insecure")
      ->capture_default_str();
  cmd.add_option("--port", a.http.port, "TCP port (0: any free one; see --port-file)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--port-file", a.port_file, "Write the port listened on to this file");
  cmd.add_option("--auth-token-file", a.auth_token_file,
                 "File holding a bearer token every request must carry");
  cmd.add_flag("--insecure", a.insecure, "Allow a non-loopback --host without a token");
  cmd.add_option("--max-batch", a.batch.max_batch, "A batch closes at this many texts")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd.add_option("--max-batch-tokens", a.batch.max_batch_tokens,
                 "... or at this many tokens (padded ones counted for padded models)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cmd.add_option("--max-delay-us", a.batch.max_delay_us,
                 "... or when its oldest text has waited this long (microseconds)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{10000000}));
  cmd.add_flag("--wait-full-delay", a.batch.wait_full_delay,
               "A batch waits all of --max-delay-us even when no request is on its way in");
  cmd.add_option("--queue-texts", a.batch.queue_texts,
                 "Texts queued per model at most; a request that does not fit gets 429")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  cmd.add_option("--workers", a.batch.workers, "Batch worker threads per model")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  cmd.add_option("--compute-threads", a.compute_threads,
                 "LibTorch threads per worker (0: the cores divided by --workers)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{256}));
  cmd.add_option("--max-texts", a.http.limits.max_texts, "Texts per request at most (413 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd.add_option("--max-text-bytes", a.http.limits.max_text_bytes,
                 "A longer text is cut to this many bytes, and the answer says so")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd.add_option("--max-body-bytes", a.http.max_body_bytes, "Request bodies at most (413 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd.add_option("--max-connections", a.http.max_connections,
                 "Connections served at once (one thread each); more wait until one closes")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  cmd.add_option("--timeout-ms", a.http.timeout_ms,
                 "A request not answered this long after it arrived gets 504")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}));
  cmd.add_option("--keep-alive-seconds", a.http.keep_alive_seconds,
                 "An idle connection is closed after this long")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{3600}));
  cmd.add_option("--drain-seconds", a.drain_seconds,
                 "On SIGTERM: stop accepting, answer what was accepted within this long, exit 0")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd.add_flag("!--no-access-log", a.http.access_log, "No line per request on stderr");
}

std::vector<ModelSpec> model_specs(const ServeArgs& args) {
  static const std::regex kName("[A-Za-z0-9._-]+");
  std::vector<ModelSpec> out;
  for (const std::string& m : args.models) {
    const size_t eq = m.find('=');
    if (eq == 0 || eq + 1 == m.size()) throw Error(fmt::format("--model {}: give NAME=PATH", m));
    // A bare PATH is named after its file or folder: runs/sms_spam, sms.pt -> sms.
    ModelSpec spec = eq == std::string::npos
                         ? ModelSpec{std::filesystem::path(m).lexically_normal().stem().string(), m}
                         : ModelSpec{m.substr(0, eq), m.substr(eq + 1)};
    if (spec.name.empty()) spec.name = std::filesystem::path(m).parent_path().stem().string();
    if (!std::regex_match(spec.name, kName)) {
      throw Error(fmt::format("--model {}: a name is letters, digits, '.', '_' and '-'", m));
    }
    for (const auto& other : out) {
      if (other.name == spec.name) throw Error(fmt::format("--model: {} named twice", spec.name));
    }
    out.push_back(spec);
  }
  return out;
}

void resolve_serve_args(ServeArgs& args) {
  if (!args.auth_token_file.empty()) args.http.token = read_token_file(args.auth_token_file);
  if (!is_loopback(args.http.host) && args.http.token.empty() && !args.insecure) {
    throw Error(fmt::format(
        "--host {}: listening beyond this machine needs --auth-token-file (or --insecure)",
        args.http.host));
  }
}

}  // namespace sift::serve
