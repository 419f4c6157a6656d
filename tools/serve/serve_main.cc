#include "tools/serve/serve_main.h"

#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/atomic_file.h"
#include "core/error.h"
#include "tools/serve/http_server.h"
#include "tools/serve/serve_metrics.h"

namespace sift::serve {

namespace {

// The signals asked for, as bits (a handler may only touch lock-free atomics). Handlers,
// not a blocked mask and sigwait: LibTorch starts threads before `serve` runs, and a
// signal sent to one of those would still kill the process.
std::atomic<unsigned> pending_signals{0};
std::atomic<int> last_stop_signal{0};
constexpr unsigned kReload = 1, kStop = 2;

extern "C" void note_signal(int sig) {
  if (sig != SIGHUP) last_stop_signal.store(sig);
  pending_signals.fetch_or(sig == SIGHUP ? kReload : kStop);
}

void catch_serve_signals() {
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &action, nullptr);
}

std::vector<std::unique_ptr<ModelSlot>> load_models(const ServeArgs& args,
                                                    const ModelLoader& loader,
                                                    ServeMetrics& metrics,
                                                    const std::string& program) {
  std::vector<std::unique_ptr<ModelSlot>> slots;
  for (const ModelSpec& spec : model_specs(args)) {
    try {
      slots.push_back(std::make_unique<ModelSlot>(spec.name, spec.path, loader, args.batch,
                                                  metrics.batch_observer(spec.name)));
    } catch (const std::exception& e) {
      throw Error(fmt::format("--model {}: {}", spec.name, e.what()));
    }
    const auto m = slots.back()->current();
    metrics.loaded(spec.name, m->version, m->load_seconds);
    std::fprintf(stderr, "sift serve: model %s: %s from %s, loaded in %.3f s; %s%s\n",
                 spec.name.c_str(), m->backend->kind().c_str(), spec.path.c_str(), m->load_seconds,
                 program.c_str(), m->backend->one_worker() ? "; one worker (bf16)" : "");
  }
  return slots;
}

// Waits for SIGHUP (reload), SIGTERM or SIGINT (drain) until `done`. A drain past its
// seconds ends each open connection after its current request.
void watch_signals(HttpServer& server, double drain_seconds, const std::atomic<bool>& done) {
  while (!done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const unsigned got = pending_signals.exchange(0);
    if (got & kReload) {
      std::fprintf(stderr, "sift serve: SIGHUP: reloading every model\n");
      server.reload_all();
    }
    if (got & kStop) {
      std::fprintf(stderr, "sift serve: %s: draining (at most %.1f s)\n",
                   last_stop_signal.load() == SIGINT ? "SIGINT" : "SIGTERM", drain_seconds);
      server.drain(drain_seconds);
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(drain_seconds);
      while (!done.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      server.end_connections();
      return;
    }
  }
}

}  // namespace

int run_serve(ServeArgs args, const ModelLoader& loader, const std::string& program) {
  resolve_serve_args(args);
  catch_serve_signals();
  ServeMetrics metrics;
  std::vector<std::unique_ptr<ModelSlot>> models = load_models(args, loader, metrics, program);
  HttpServer server(args.http, models, metrics);
  const int port = server.bind();
  if (!args.port_file.empty()) write_file_atomically(args.port_file, std::to_string(port) + "\n");
  std::fprintf(stderr, "sift serve: listening on http://%s:%d%s\n", args.http.host.c_str(), port,
               args.http.token.empty() ? "" : " (bearer token required)");
  std::atomic<bool> done{false};
  std::thread watcher([&] { watch_signals(server, args.drain_seconds, done); });
  server.listen();
  done.store(true);
  watcher.join();
  std::fprintf(stderr, "sift serve: every accepted request answered; stopped\n");
  return 0;
}

}  // namespace sift::serve
