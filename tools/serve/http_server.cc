#include "tools/serve/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>
#include <regex>
#include <utility>

#include "core/error.h"
#include "tools/serve/auth.h"
#include "tools/serve/bounded_connection.h"
#include "tools/serve/response_json.h"

namespace sift::serve {

using httplib::Request;
using httplib::Response;

namespace {

// httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled into Debian's
// library): 32 clients connecting at once overflowed it, and some saw their connection
// dropped. listen() again on the bound socket raises it.
//
// Its stop() ends each connection after the request it is answering, without reading one
// that a kept-alive client has already written (under wrk, one request in 50,000 went
// unanswered at SIGTERM). stop_accepting() only shuts the listening socket: accept() fails,
// listen() stops taking connections and waits for the open ones, which go on reading and
// answering (drain: Connection: close) until their client closes or idles past the
// keep-alive. end_connections() then makes each end after its current request.
class DrainingServer : public httplib::Server {
 public:
  DrainingServer(const ConnectionLimits& limits, std::function<void(int)> refused)
      : limits_(limits), refused_(std::move(refused)) {}
  void raise_backlog() { ::listen(svr_sock_, SOMAXCONN); }
  void stop_accepting() { ::shutdown(svr_sock_, SHUT_RDWR); }
  void end_connections() { svr_sock_.store(INVALID_SOCKET); }

 private:
  // Each connection through bounded_connection.h: request heads bounded while read.
  bool process_and_close_socket(socket_t sock) override {
    return serve_connection(
        sock, svr_sock_, limits_,
        [this](httplib::Stream& stream, bool last, bool& closed) {
          return process_request(stream, last, closed, nullptr);
        },
        refused_);
  }
  ConnectionLimits limits_;
  std::function<void(int)> refused_;
};

ConnectionLimits connection_limits(const HttpSettings& s) {
  ConnectionLimits limits;
  limits.max_header_bytes = static_cast<size_t>(s.max_header_bytes);
  limits.keep_alive_s = static_cast<int>(s.keep_alive_seconds);
  return limits;
}

// This thread is answering a connection over --max-connections: its request gets 503.
thread_local bool over_limit = false;

// The connection threads: up to `limit` connections are served at once. httplib's own pool
// queues the next one until a thread is free, which under a flood means waiting without
// bound; here it goes to one of a few refusal threads instead, which read its request and
// answer 503 with Connection: close at once.
class ConnectionPool : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(size_t limit) : serving_(limit), refusing_(kRefusers), limit_(limit) {}
  void enqueue(std::function<void()> fn) override {
    if (busy_.fetch_add(1) >= limit_) {
      busy_.fetch_sub(1);
      refusing_.enqueue([fn = std::move(fn)] {
        over_limit = true;
        fn();
        over_limit = false;
      });
      return;
    }
    serving_.enqueue([this, fn = std::move(fn)] {
      fn();
      busy_.fetch_sub(1);
    });
  }
  void shutdown() override {
    serving_.shutdown();
    refusing_.shutdown();
  }

 private:
  static constexpr size_t kRefusers = 4;
  httplib::ThreadPool serving_, refusing_;
  const size_t limit_;
  std::atomic<size_t> busy_{0};
};

// What the access log and the metrics say of the request this thread is answering.
struct RequestNote {
  Clock::time_point start;
  std::string route = "unmatched";
  size_t texts = 0;
};
thread_local RequestNote note;

constexpr const char* kJson = "application/json";
// The binary tensor data extension's header: the length of the JSON that starts the body.
constexpr const char* kJsonBytes = "Inference-Header-Content-Length";
const char* const kName = "([A-Za-z0-9._-]+)";

void answer(Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJson);
}

void refuse(Response& res, int status, const std::string& message) {
  answer(res, status, error_body(message));
}

// A route's path and method, for the 405 of a known path asked with another method.
struct RouteShape {
  std::regex path;
  const char* allow;
};

// A route's name in the metrics and the access log: its path with kName as {name}, then
// as {version}.
std::string route_name(std::string path) {
  for (const char* part : {"{name}", "{version}"}) {
    const size_t at = path.find(kName);
    if (at != std::string::npos) path.replace(at, std::strlen(kName), part);
  }
  return path;
}

// A path as the access log prints it: printable ASCII only, at most 200 bytes.
std::string printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

HttpServer::HttpServer(HttpSettings settings, std::vector<std::unique_ptr<ModelSlot>>& models,
                       ServeMetrics& metrics)
    : settings_(std::move(settings)),
      models_(models),
      metrics_(metrics),
      server_(std::make_unique<DrainingServer>(connection_limits(settings_), [this](int status) {
        metrics_.request("(request line too long)", status, 0.0);
        if (settings_.access_log) std::fprintf(stderr, "sift serve: ? ? %d texts=0\n", status);
      })) {
  const auto threads = static_cast<size_t>(settings_.max_connections);
  server_->new_task_queue = [threads] { return new ConnectionPool(threads); };
  server_->set_payload_max_length(static_cast<size_t>(settings_.max_body_bytes));
  server_->set_tcp_nodelay(true);
  add_routes();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  const int port =
      settings_.port == 0
          ? server_->bind_to_any_port(settings_.host)
          : (server_->bind_to_port(settings_.host, settings_.port) ? settings_.port : -1);
  if (port < 0) {
    throw Error(fmt::format("cannot listen on {}:{} (address in use, or not this machine's)",
                            settings_.host, settings_.port));
  }
  static_cast<DrainingServer&>(*server_).raise_backlog();
  return port;
}

void HttpServer::listen() { server_->listen_after_bind(); }

void HttpServer::drain(double seconds) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds));
  drain_deadline_ns_.store(until.time_since_epoch().count());
  auto& server = static_cast<DrainingServer&>(*server_);
  server.stop_accepting();  // open connections are still read, and answered with Connection: close
  draining_.store(true);
}

void HttpServer::end_connections() { static_cast<DrainingServer&>(*server_).end_connections(); }

void HttpServer::reload_all() {
  for (auto& slot : models_) {
    try {
      reload_slot(*slot);
    } catch (const std::exception&) {  // logged and counted: the old version keeps serving
    }
  }
}

std::shared_ptr<LoadedModel> HttpServer::reload_slot(ModelSlot& slot) {
  try {
    auto m = slot.reload();
    metrics_.loaded(slot.name(), m->version, m->load_seconds);
    std::fprintf(stderr, "sift serve: reloaded %s: version %lld in %.3f s\n", slot.name().c_str(),
                 static_cast<long long>(m->version), m->load_seconds);
    return m;
  } catch (const std::exception& e) {
    metrics_.load_failed(slot.name());
    std::fprintf(stderr, "sift serve: reload of %s failed, version %lld keeps serving: %s\n",
                 slot.name().c_str(), static_cast<long long>(slot.current()->version), e.what());
    throw;
  }
}

ModelSlot& HttpServer::slot_of(const std::string& name) const {
  for (const auto& slot : models_) {
    if (slot->name() == name) return *slot;
  }
  throw HttpError(404, fmt::format("no model named '{}'", name));
}

std::shared_ptr<LoadedModel> HttpServer::model_of(const Request& req) const {
  auto model = slot_of(req.matches[1]).current();
  if (req.matches.size() > 2 && req.matches[2] != std::to_string(model->version)) {
    throw HttpError(404, fmt::format("model '{}' has no version '{}' (version {} is served)",
                                     req.matches[1].str(), req.matches[2].str(), model->version));
  }
  return model;
}

bool HttpServer::authorized(const Request& req, Response& res) const {
  if (settings_.token.empty() ||
      bearer_matches(req.get_header_value("Authorization"), settings_.token)) {
    return true;
  }
  res.set_header("WWW-Authenticate", "Bearer");
  refuse(res, 401, "missing or wrong bearer token (Authorization: Bearer ...)");
  return false;
}

void HttpServer::add_routes() {
  auto& s = *server_;
  // Every handler's exceptions become a JSON error, and the server stays up.
  auto guarded = [](std::string route, auto fn) {
    return [route, fn](const Request& req, Response& res) {
      note.route = route;
      try {
        fn(req, res);
      } catch (const HttpError& e) {
        refuse(res, e.status, e.what());
      } catch (const Error& e) {
        refuse(res, 400, e.what());
      } catch (const std::exception& e) {
        refuse(res, 500, e.what());
      }
    };
  };
  s.set_pre_routing_handler([this](const Request& req, Response& res) {
    note = RequestNote{Clock::now()};
    if (draining() || over_limit) res.set_header("Connection", "close");
    if (over_limit) {
      note.route = "(over --max-connections)";
      res.set_header("Retry-After", "1");
      refuse(res, 503,
             fmt::format("too many connections: {} are open (--max-connections); retry later",
                         settings_.max_connections));
      return httplib::Server::HandlerResponse::Handled;
    }
    return authorized(req, res) ? httplib::Server::HandlerResponse::Unhandled
                                : httplib::Server::HandlerResponse::Handled;
  });
  auto shapes = std::make_shared<std::vector<RouteShape>>();
  auto route = [&](const char* method, const std::string& path, auto fn) {
    shapes->push_back({std::regex(path), method});
    auto handler = guarded(route_name(path), fn);
    std::strcmp(method, "GET") == 0 ? s.Get(path, handler) : s.Post(path, handler);
  };
  route("GET", "/v1/models", [this](const Request&, Response& res) { list_models(res); });
  route("POST", std::string("/v1/models/") + kName + "/predict",
        [this](const Request& req, Response& res) { predict(req, res, false); });
  route("POST", std::string("/v1/models/") + kName + "/reload",
        [this](const Request& req, Response& res) { reload(req, res); });
  route("GET", "/v2", [](const Request&, Response& res) {
    answer(res, 200, R"({"name":"sift","version":"0.1.0","extensions":["binary_tensor_data"]})");
  });
  route("GET", "/v2/health/live",
        [](const Request&, Response& res) { answer(res, 200, R"({"live":true})"); });
  route("GET", "/v2/health/ready", [this](const Request&, Response& res) {
    answer(res, draining() ? 503 : 200, draining() ? R"({"ready":false})" : R"({"ready":true})");
  });
  // Each v2 model route, also under /versions/{version}/ (404 unless that version serves).
  const std::string model = std::string("/v2/models/") + kName;
  for (const bool versioned : {false, true}) {
    const std::string path = versioned ? model + "/versions/" + kName : model;
    route("POST", path + "/infer",
          [this](const Request& req, Response& res) { predict(req, res, true); });
    route("GET", path, [this](const Request& req, Response& res) {
      const auto m = model_of(req);
      answer(res, 200, metadata_body({req.matches[1], m->backend.get(), m->version}));
    });
    route("GET", path + "/ready", [this](const Request& req, Response& res) {
      model_of(req);
      answer(res, draining() ? 503 : 200, draining() ? R"({"ready":false})" : R"({"ready":true})");
    });
  }
  route("GET", "/metrics", [this](const Request&, Response& res) {
    for (const auto& slot : models_) {
      metrics_.queue_depth(slot->name(), slot->current()->queue->depth());
    }
    res.set_content(metrics_.text(), "text/plain; version=0.0.4");
  });
  // httplib's own answers (404 of an unknown path, 413 of a long body, 400) get a JSON
  // body; a known path asked with another method gets 405 and Allow.
  s.set_error_handler([this, shapes](const Request& req, Response& res) {
    if (!res.body.empty()) return;
    if (head_over_on_this_thread() == HeadOver::headers) {  // cpp-httplib says 400
      note = RequestNote{Clock::now(), "(headers too long)"};
      res.set_header("Connection", "close");
      return refuse(res, 431,
                    fmt::format("the request's header lines are over --max-header-bytes ({} "
                                "bytes); the connection is closed",
                                settings_.max_header_bytes));
    }
    if (res.status == 404) {
      for (const auto& shape : *shapes) {
        if (std::regex_match(req.path, shape.path)) {
          res.set_header("Allow", shape.allow);
          return refuse(res, 405,
                        fmt::format("{} takes {}, not {}", printable(req.path), shape.allow,
                                    printable(req.method)));
        }
      }
      return refuse(res, 404, fmt::format("no route {}", printable(req.path)));
    }
    if (res.status == 413) {
      return refuse(res, 413, "the body is larger than --max-body-bytes");
    }
    refuse(res, res.status, fmt::format("the request could not be read (HTTP {})", res.status));
  });
  // Counted before the answer is written, not in httplib's logger (called after the write):
  // a client that has read its answer then finds it in /metrics. With the logger, CI's
  // ServeCli test read /metrics before the thread of its previous request had counted it.
  s.set_post_routing_handler([this](const Request& req, Response& res) { log(req, res); });
}

void HttpServer::list_models(Response& res) const {
  std::vector<std::shared_ptr<LoadedModel>> held;
  std::vector<ModelView> views;
  for (const auto& slot : models_) {
    held.push_back(slot->current());
    views.push_back({slot->name(), held.back()->backend.get(), held.back()->version});
  }
  answer(res, 200, models_body(views));
}

namespace {

// Tells a model's queue that a request is on its way in, until it is submitted or refused.
class Arrival {
 public:
  explicit Arrival(BatchQueue& queue) : queue_(&queue) { queue.arriving(); }
  ~Arrival() {
    if (queue_ != nullptr) queue_->left();
  }
  Arrival(const Arrival&) = delete;
  Arrival& operator=(const Arrival&) = delete;
  BatchQueue::Admit submit(const std::shared_ptr<Job>& job) {
    BatchQueue* q = std::exchange(queue_, nullptr);
    return q->submit(job);
  }

 private:
  BatchQueue* queue_;
};

}  // namespace

void HttpServer::predict(const Request& req, Response& res, bool v2) {
  const std::string name = req.matches[1];
  const std::shared_ptr<LoadedModel> model = model_of(req);  // finishes on this version
  std::optional<uint64_t> json_bytes;
  if (v2 && req.has_header(kJsonBytes)) {
    json_bytes = parse_header_length(req.get_header_value(kJsonBytes), req.body.size());
  }
  Arrival arrival(*model->queue);
  const PredictRequest r = v2 ? parse_infer(req.body, settings_.limits, json_bytes)
                              : parse_predict(req.body, settings_.limits);
  note.texts = r.texts.size();
  const ModelBackend& b = *model->backend;
  cli::PredictArgs args;
  args.top_k = r.top_k.value_or(1);
  args.threshold = r.threshold.value_or(-1.0);
  cli::PredictSettings s;
  try {
    s = cli::resolve_predict(args, static_cast<int64_t>(b.labels().size()), b.multi_label(),
                             b.train_threshold());
  } catch (const Error& e) {  // names the CLI option: say the field instead
    throw HttpError(400, std::string(e.what()).replace(0, 2, ""));
  }
  std::vector<std::vector<int64_t>> ids(r.texts.size());
  for (size_t i = 0; i < r.texts.size(); ++i) b.encode(r.texts[i], ids[i]);
  auto deadline = note.start + std::chrono::milliseconds(settings_.timeout_ms);
  if (draining()) {
    deadline = std::min(deadline, Clock::time_point(Clock::duration(drain_deadline_ns_.load())));
  }
  auto job = std::make_shared<Job>(std::move(ids), s.k, s.threshold, deadline);
  switch (arrival.submit(job)) {
    case BatchQueue::Admit::full:
      res.set_header("Retry-After", "1");
      return refuse(res, 429,
                    fmt::format("model {}'s queue is full ({} texts); retry later", name,
                                model->queue->limits().queue_texts));
    case BatchQueue::Admit::stopped:
      return refuse(res, 503, "the server is shutting down");
    case BatchQueue::Admit::accepted:
      break;
  }
  if (!job->wait_until(deadline) || job->expired()) {
    return refuse(res, 504, fmt::format("not answered within {} ms", settings_.timeout_ms));
  }
  if (!job->error().empty()) return refuse(res, 500, "the model failed: " + job->error());
  const ModelView view{name, &b, model->version};
  if (!v2) {
    return answer(res, 200,
                  predict_body(view, job->results(), r.truncated, settings_.limits.max_text_bytes));
  }
  InferAnswer a = infer_body(view, job->results(), r);
  if (!a.json_bytes) return answer(res, 200, a.body);
  res.status = 200;
  res.set_header(kJsonBytes, std::to_string(*a.json_bytes));
  res.set_content(std::move(a.body), "application/octet-stream");
}

void HttpServer::reload(const Request& req, Response& res) {
  ModelSlot& slot = slot_of(req.matches[1]);
  try {
    const auto m = reload_slot(slot);
    answer(res, 200,
           fmt::format(R"({{"model":"{}","version":{},"load_seconds":{:.3f}}})", slot.name(),
                       m->version, m->load_seconds));
  } catch (const std::exception& e) {
    throw HttpError(500, fmt::format("reload failed, version {} keeps serving: {}",
                                     slot.current()->version, e.what()));
  }
}

void HttpServer::log(const Request& req, const Response& res) const {
  const double seconds = std::chrono::duration<double>(Clock::now() - note.start).count();
  metrics_.request(note.route, res.status, seconds);
  if (!settings_.access_log) return;
  std::fprintf(stderr, "sift serve: %s %s %d texts=%zu %.3f ms\n", printable(req.method).c_str(),
               printable(req.path).c_str(), res.status, note.texts, seconds * 1000);
}

}  // namespace sift::serve
