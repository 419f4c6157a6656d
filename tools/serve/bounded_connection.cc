#include "tools/serve/bounded_connection.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "tools/serve/response_json.h"

namespace sift::serve {

namespace {

// 4 KiB, as cpp-httplib's own socket stream reads.
constexpr size_t kBufferBytes = 4096;

thread_local HeadOver this_thread_over = HeadOver::none;

// poll() for `events` on `sock` for at most `ms`; > 0 when ready.
int wait_for(socket_t sock, short events, int ms) {
  pollfd p{sock, events, 0};
  int n;
  do {
    n = ::poll(&p, 1, ms);
  } while (n < 0 && errno == EINTR);
  return n;
}

void address_of(const sockaddr_storage& addr, std::string& ip, int& port) {
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), sizeof(addr), host, sizeof(host),
                    nullptr, 0, NI_NUMERICHOST) == 0) {
    ip = host;
  }
  port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(addr).sin6_port
                                          : reinterpret_cast<const sockaddr_in&>(addr).sin_port);
}

// The keep-alive wait: the next request's first bytes, within `seconds`, while the server
// listens (polled in 100 ms slices: once the drain ends the connections, an idle one ends
// within 100 ms instead of at its keep-alive timeout).
bool next_request_arrives(const HeadBoundedStream& stream, socket_t sock, int seconds,
                          const std::atomic<socket_t>& listening) {
  if (stream.has_buffered()) return true;
  for (int ms = seconds * 1000; ms > 0 && listening.load() != INVALID_SOCKET; ms -= 100) {
    const int n = wait_for(sock, POLLIN, std::min(ms, 100));
    if (n != 0) return n > 0;
  }
  return false;
}

// After an answer that ends the connection mid-request: no more writes, and what the client
// still sends is read and dropped (for a second at most), so that closing does not reset
// the connection before the client has read the answer.
void linger(socket_t sock) {
  ::shutdown(sock, SHUT_WR);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  char sink[kBufferBytes];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || wait_for(sock, POLLIN, static_cast<int>(left.count())) <= 0) return;
    if (::recv(sock, sink, sizeof(sink), 0) <= 0) return;
  }
}

void answer_request_line_over(HeadBoundedStream& stream) {
  const std::string body =
      error_body(fmt::format("the request line is over {} bytes (a path that long is not one of "
                             "sift serve's routes)",
                             kMaxRequestLine));
  const std::string head = fmt::format(
      "HTTP/1.1 414 URI Too Long\r\nContent-Type: application/json\r\nContent-Length: "
      "{}\r\nConnection: close\r\n\r\n",
      body.size());
  const std::string all = head + body;
  for (size_t done = 0; done < all.size();) {
    const ssize_t n = stream.write(all.data() + done, all.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

HeadBoundedStream::HeadBoundedStream(socket_t sock, const ConnectionLimits& limits)
    : sock_(sock), limits_(limits), buffer_(kBufferBytes) {}

void HeadBoundedStream::start_request() {
  in_head_ = true;
  line_ = line_bytes_ = request_line_ = header_bytes_ = 0;
  last_ = 0;
  over_ = this_thread_over = HeadOver::none;
}

bool HeadBoundedStream::is_readable() const {
  return has_buffered() || wait_for(sock_, POLLIN, limits_.read_timeout_s * 1000) > 0;
}

bool HeadBoundedStream::is_writable() const {
  return wait_for(sock_, POLLOUT, limits_.write_timeout_s * 1000) > 0;
}

// How many of the next `n` buffered bytes may be handed out: all of them past the head; in
// the head, those up to its end or up to the limit it would pass (then it is over).
// cpp-httplib ends a head only at a line that is exactly CRLF (a bare LF line is skipped).
size_t HeadBoundedStream::head_bytes_allowed(size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const bool first = line_ == 0;
    if (first ? ++request_line_ > kMaxRequestLine : ++header_bytes_ > limits_.max_header_bytes) {
      over_ = this_thread_over = first ? HeadOver::request_line : HeadOver::headers;
      return i;
    }
    const char c = buffer_[begin_ + i];
    if (c == '\n') {
      if (!first && line_bytes_ == 1 && last_ == '\r') {
        in_head_ = false;
        return i + 1;
      }
      ++line_;
      line_bytes_ = 0;
    } else {
      ++line_bytes_;
    }
    last_ = c;
  }
  return n;
}

ssize_t HeadBoundedStream::read(char* ptr, size_t size) {
  if (over_ != HeadOver::none) return -1;
  if (!has_buffered()) {
    if (!in_head_ && size >= buffer_.size()) {  // a large body read: straight from the socket
      if (!is_readable()) return -1;
      return ::recv(sock_, ptr, size, 0);
    }
    if (!is_readable()) return -1;
    const ssize_t got = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
    if (got <= 0) return got;
    begin_ = 0;
    end_ = static_cast<size_t>(got);
  }
  size_t n = std::min(size, end_ - begin_);
  if (in_head_) n = head_bytes_allowed(n);
  if (n == 0) return -1;
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t HeadBoundedStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do {
    n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

void HeadBoundedStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    address_of(addr, ip, port);
  }
}

void HeadBoundedStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    address_of(addr, ip, port);
  }
}

HeadOver head_over_on_this_thread() { return this_thread_over; }

bool serve_connection(socket_t sock, const std::atomic<socket_t>& listening,
                      const ConnectionLimits& limits,
                      const std::function<bool(httplib::Stream&, bool last, bool& closed)>& process,
                      const std::function<void(int status)>& refused) {
  HeadBoundedStream stream(sock, limits);
  bool ok = false;
  for (size_t left = limits.keep_alive_max;
       left > 0 && next_request_arrives(stream, sock, limits.keep_alive_s, listening); --left) {
    stream.start_request();
    bool closed = false;
    ok = process(stream, left == 1, closed);
    if (stream.over() != HeadOver::none) {
      if (stream.over() == HeadOver::request_line) {
        answer_request_line_over(stream);
        refused(414);
      }
      linger(sock);
      ok = false;
      break;
    }
    if (!ok || closed) break;
  }
  stream.start_request();  // the thread's next connection starts clean
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace sift::serve
