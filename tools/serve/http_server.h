// `sift serve`'s HTTP side, on cpp-httplib (Debian's libcpp-httplib-dev): the routes, the
// bearer-token check, the JSON errors, the access log and the drain on shutdown. A
// thread per open connection (up to --max-connections) parses and encodes; each model's
// BatchQueue runs the texts.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/serve/request_json.h"
#include "tools/serve/serve_metrics.h"
#include "tools/serve/served_models.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace sift::serve {

struct HttpSettings {
  std::string host = "127.0.0.1";
  int port = 8080;    // 0: any free port (bind() says which)
  std::string token;  // "" : no Authorization asked
  RequestLimits limits;
  int64_t max_body_bytes = 1 << 20;
  // Every header line together; httplib itself bounds each line at 8 KiB (compiled in).
  int64_t max_header_bytes = 16384;
  int64_t max_connections = 128;
  int64_t timeout_ms = 10000;
  int64_t keep_alive_seconds = 5;
  bool access_log = true;
};

class HttpServer {
 public:
  HttpServer(HttpSettings settings, std::vector<std::unique_ptr<ModelSlot>>& models,
             ServeMetrics& metrics);
  ~HttpServer();
  // Binds the address; the port bound. sift::Error when it cannot.
  int bind();
  // Serves until drain() and the end of every open connection.
  void listen();
  // Stops accepting; what was accepted, and what open connections send, is answered (with
  // Connection: close) until `seconds` have passed (503 after).
  void drain(double seconds);
  // After the drain: each open connection ends after the request it is answering.
  void end_connections();
  // Reloads every model (SIGHUP); each failure is logged, the old version kept.
  void reload_all();

 private:
  using Request = httplib::Request;
  using Response = httplib::Response;
  void add_routes();
  ModelSlot& slot_of(const std::string& name) const;
  // The slot's model loaded again, logged and counted; what failed is logged, counted and
  // rethrown, the old version serving on.
  std::shared_ptr<LoadedModel> reload_slot(ModelSlot& slot);
  // The model a route names, at the version its path names (/versions/{v}/), if it names
  // one: 404 unless that version is the one serving.
  std::shared_ptr<LoadedModel> model_of(const Request& req) const;
  void predict(const Request& req, Response& res, bool v2);
  void reload(const Request& req, Response& res);
  void list_models(Response& res) const;
  bool authorized(const Request& req, Response& res) const;
  void log(const Request& req, const Response& res) const;
  bool draining() const { return draining_.load(); }

  HttpSettings settings_;
  std::vector<std::unique_ptr<ModelSlot>>& models_;
  ServeMetrics& metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> drain_deadline_ns_{0};
};

}  // namespace sift::serve
