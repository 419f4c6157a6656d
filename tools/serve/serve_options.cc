#include "tools/serve/serve_options.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <regex>

#include "core/error.h"
#include "tools/serve/auth.h"

namespace sift::serve {

namespace {

using Field = ServeOption::Field;

std::vector<ServeOption> make_table() {
  constexpr double kBig = static_cast<double>(int64_t{1} << 24);
  return {
      {"models", "--model",
       "NAME=PATH: serve the run folder or `sift export` file at PATH as NAME (repeatable; a "
       "bare PATH is named after its file or folder: sms.pt -> sms)",
       [](ServeArgs& a) -> Field { return &a.models; }},
      {"host", "--host",
       "Address to listen on; anything but loopback needs --auth-token-file or --insecure",
       [](ServeArgs& a) -> Field { return &a.http.host; }},
      {"port", "--port", "TCP port (0: any free one; see --port-file)",
       [](ServeArgs& a) -> Field { return &a.http.port; }, 0, 65535},
      {"port_file", "--port-file", "Write the port listened on to this file",
       [](ServeArgs& a) -> Field { return &a.port_file; }},
      {"auth_token_file", "--auth-token-file",
       "File holding a bearer token every request must carry",
       [](ServeArgs& a) -> Field { return &a.auth_token_file; }},
      {"insecure", "--insecure", "Allow a non-loopback --host without a token",
       [](ServeArgs& a) -> Field { return &a.insecure; }},
      {"max_batch", "--max-batch", "A batch closes at this many texts",
       [](ServeArgs& a) -> Field { return &a.batch.max_batch; }, 1, 4096},
      {"max_batch_tokens", "--max-batch-tokens",
       "... or at this many tokens (padded ones counted for padded models)",
       [](ServeArgs& a) -> Field { return &a.batch.max_batch_tokens; }, 1, kBig},
      {"max_delay_us", "--max-delay-us",
       "... or when its oldest text has waited this long (microseconds)",
       [](ServeArgs& a) -> Field { return &a.batch.max_delay_us; }, 0, 1e7},
      {"wait_full_delay", "--wait-full-delay",
       "A batch waits all of --max-delay-us even when no request is on its way in",
       [](ServeArgs& a) -> Field { return &a.batch.wait_full_delay; }},
      {"length_buckets", "!--no-length-buckets",
       "A padded model's batch takes texts in arrival order, not those nearest in length",
       [](ServeArgs& a) -> Field { return &a.batch.length_buckets; }},
      {"run_cost_tokens", "--run-cost-tokens",
       "A padded model's batch is cut into runs of similar length where the padding saved "
       "passes this many tokens a run (a forward's own cost)",
       [](ServeArgs& a) -> Field { return &a.batch.run_cost_tokens; }, 0, kBig},
      {"queue_texts", "--queue-texts",
       "Texts queued per model at most; a request that does not fit gets 429",
       [](ServeArgs& a) -> Field { return &a.batch.queue_texts; }, 1, kBig},
      {"workers", "--workers", "Batch worker threads per model",
       [](ServeArgs& a) -> Field { return &a.batch.workers; }, 1, 64},
      {"compute_threads", "--compute-threads",
       "LibTorch threads per worker (0: the cores divided by --workers)",
       [](ServeArgs& a) -> Field { return &a.compute_threads; }, 0, 256},
      {"max_texts", "--max-texts", "Texts per request at most (413 beyond)",
       [](ServeArgs& a) -> Field { return &a.http.limits.max_texts; }, 1, 1 << 20},
      {"max_text_bytes", "--max-text-bytes",
       "A longer text is cut to this many bytes, and the answer says so",
       [](ServeArgs& a) -> Field { return &a.http.limits.max_text_bytes; }, 1, 1 << 30},
      {"max_body_bytes", "--max-body-bytes", "Request bodies at most (413 beyond)",
       [](ServeArgs& a) -> Field { return &a.http.max_body_bytes; }, 1, 1 << 30},
      {"max_header_bytes", "--max-header-bytes",
       "Request header lines, all together, at most, counted as they are read (431 beyond, and "
       "the connection closed)",
       [](ServeArgs& a) -> Field { return &a.http.max_header_bytes; }, 256, 1 << 20},
      {"max_connections", "--max-connections",
       "Connections served at once (one thread each); one more is answered 503 and closed",
       [](ServeArgs& a) -> Field { return &a.http.max_connections; }, 1, 4096},
      {"timeout_ms", "--timeout-ms", "A request not answered this long after it arrived gets 504",
       [](ServeArgs& a) -> Field { return &a.http.timeout_ms; }, 1, 3600000},
      {"keep_alive_seconds", "--keep-alive-seconds", "An idle connection is closed after this long",
       [](ServeArgs& a) -> Field { return &a.http.keep_alive_seconds; }, 1, 3600},
      {"drain_seconds", "--drain-seconds",
       "On SIGTERM: stop accepting, answer what was accepted within this long, exit 0",
       [](ServeArgs& a) -> Field { return &a.drain_seconds; }, 0, 3600},
      {"access_log", "!--no-access-log", "No line per request on stderr",
       [](ServeArgs& a) -> Field { return &a.http.access_log; }},
  };
}

// CLI11's check of a number option: the table's range, said as the file's check says it.
CLI::Validator range_check(const ServeOption& option) {
  return CLI::Validator(
      [&option](std::string& text) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(text, &used);
          if (used == text.size()) return out_of_range(option, v);
        } catch (const std::exception&) {
        }
        return "'" + text + "' is not a number";
      },
      "");
}

}  // namespace

const std::vector<ServeOption>& serve_options() {
  static const std::vector<ServeOption> table = make_table();
  return table;
}

std::string flag_name(const ServeOption& option) {
  return option.flag[0] == '!' ? option.flag.substr(1) : option.flag;
}

namespace {

// A whole number without a decimal point or exponent (1e7 -> 10000000).
std::string number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

std::string out_of_range(const ServeOption& option, double value) {
  if (value >= option.min && value <= option.max) return "";
  return fmt::format("{} is not in [{}, {}]", number(value), number(option.min),
                     number(option.max));
}

void add_serve_options(CLI::App& cmd, ServeArgs& a) {
  cmd.add_option("--config", a.config_file,
                 "YAML file whose serve: section gives these options (flags override it)");
  for (const ServeOption& option : serve_options()) {
    std::visit(
        [&](auto* value) {
          using T = std::remove_pointer_t<decltype(value)>;
          if constexpr (std::is_same_v<T, bool>) {
            cmd.add_flag(option.flag, *value, option.help);
          } else {
            CLI::Option* o = cmd.add_option(option.flag, *value, option.help);
            if constexpr (std::is_arithmetic_v<T>)
              o->capture_default_str()->check(range_check(option));
            if constexpr (std::is_same_v<T, std::string>) {
              if (!value->empty()) o->capture_default_str();
            }
          }
        },
        option.field(a));
  }
}

std::vector<ModelSpec> model_specs(const ServeArgs& args) {
  static const std::regex kName("[A-Za-z0-9._-]+");
  if (args.models.empty()) {
    throw Error("no model to serve: give --model NAME=PATH (or serve: models: in --config FILE)");
  }
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
