// bench/http_libs.sh's cpp-httplib server: `sift serve`'s design (Debian's
// libcpp-httplib-dev, a blocking thread per connection from a pool of THREADS, TCP_NODELAY,
// kept-alive connections) around route.h.
//
//   sift-http-httplib PORT [THREADS]   (default 128, sift serve's --max-connections)
#include <httplib.h>

#include <cstdio>
#include <cstdlib>

#include "route.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sift-http-httplib PORT [THREADS]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const size_t threads = argc > 2 ? static_cast<size_t>(std::atoi(argv[2])) : 128;
  httplib::Server server;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(1000000);
  auto handle = [](const httplib::Request& req, httplib::Response& res) {
    const auto [status, body] = sift::bench::answer(req.method == "POST", req.path, req.body);
    res.status = status;
    res.set_content(body, "application/json");
  };
  server.Post(sift::bench::kRoute, handle);
  server.Get(sift::bench::kRoute, handle);
  if (!server.listen("127.0.0.1", port)) {
    std::fprintf(stderr, "sift-http-httplib: cannot listen on port %d\n", port);
    return 1;
  }
  return 0;
}
