// bench/http_libs.sh's Boost.Beast server: Asio's event loop on THREADS threads (one per
// core: the design Beast's documentation recommends for throughput), each connection a
// chain of async reads and writes on its own strand, TCP_NODELAY, kept-alive connections,
// around route.h.
//
//   sift-http-beast PORT [THREADS]   (default 2)
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "route.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// One connection: read a request, answer it, and again while the client keeps it alive.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  explicit Connection(tcp::socket socket) : stream_(std::move(socket)) {}

  void read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->write();
                     });
  }

 private:
  void write() {
    const auto [status, body] = sift::bench::answer(
        request_.method() == http::verb::post, std::string(request_.target()), request_.body());
    response_ = {};
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    response_.result(static_cast<unsigned>(status));
    response_.set(http::field::content_type, "application/json");
    response_.body() = body;
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return;
                        if (self->response_.keep_alive()) {
                          self->read();
                        } else {
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
                        }
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

void accept(net::io_context& io, tcp::acceptor& acceptor) {
  acceptor.async_accept(net::make_strand(io), [&io, &acceptor](beast::error_code ec,
                                                               tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Connection>(std::move(socket))->read();
    }
    accept(io, acceptor);
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sift-http-beast PORT [THREADS]\n");
    return 2;
  }
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  net::io_context io(threads);
  tcp::acceptor acceptor(io);
  const tcp::endpoint at(net::ip::make_address("127.0.0.1"), port);
  beast::error_code ec;
  acceptor.open(at.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    std::fprintf(stderr, "sift-http-beast: cannot listen on port %d: %s\n", port,
                 ec.message().c_str());
    return 1;
  }
  accept(io, acceptor);
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  return 0;
}
