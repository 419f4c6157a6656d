// One connection of `sift serve`, read with its request heads bounded while they are read.
// cpp-httplib 0.11 (Debian's build) reads a request's header lines until the blank line
// with no bound on their number, and each line to its end before checking its 8 KiB: a
// client that never ends its head grows the server's memory for as long as it sends (a
// check after the head is read comes too late). Here the socket is cpp-httplib's Stream
// through HeadBoundedStream, which counts the head's bytes as they are handed out and stops
// reading past the limits; serve_connection is cpp-httplib's keep-alive loop around it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace sift::serve {

// Which limit a request's head went past.
enum class HeadOver {
  none,
  request_line,  // its first line is over kMaxRequestLine bytes (414)
  headers,       // its header lines, with the blank line, are over max_header_bytes (431)
};

// cpp-httplib answers a request line of up to 8 KiB, and 414 past it once the line is read
// (CPPHTTPLIB_REQUEST_URI_MAX_LENGTH, compiled in): the line is bounded a little past that,
// so that its own 414 still comes for a line that ends.
inline constexpr size_t kMaxRequestLine = 8192 + 256;

struct ConnectionLimits {
  size_t max_header_bytes = 16384;
  int read_timeout_s = 5, write_timeout_s = 5;
  int keep_alive_s = 5;
  size_t keep_alive_max = 1000000;
};

class HeadBoundedStream : public httplib::Stream {
 public:
  HeadBoundedStream(socket_t sock, const ConnectionLimits& limits);
  // The next byte begins a request: its head is counted from here.
  void start_request();
  HeadOver over() const { return over_; }
  // Bytes already read from the socket and not yet handed out (a pipelined request).
  bool has_buffered() const { return begin_ < end_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

 private:
  size_t head_bytes_allowed(size_t n);

  socket_t sock_;
  ConnectionLimits limits_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool in_head_ = true;
  size_t line_ = 0;          // the head's line being read (0: the request line)
  size_t line_bytes_ = 0;    // its bytes so far
  size_t request_line_ = 0;  // the request line's bytes
  size_t header_bytes_ = 0;  // the header lines' bytes, the blank line's included
  char last_ = 0;            // the byte before
  HeadOver over_ = HeadOver::none;
};

// The head limit the request this thread is answering went past (for the error handler,
// which turns cpp-httplib's 400 into 431).
HeadOver head_over_on_this_thread();

// cpp-httplib's keep-alive loop over `sock` (process_and_close_socket), each request through
// `process` (Server::process_request) on a HeadBoundedStream: requests are served while
// `listening` holds a socket, up to keep_alive_max, each awaited at most keep_alive_s. A head
// past its limits ends the connection: a request line is answered 414 here (cpp-httplib
// gives up on it without an answer), headers get cpp-httplib's answer; then the write side
// is shut and what the client still sends is read and dropped for a second, so that it
// reads the answer instead of a reset. `refused(status)` is told of the 414. Closes `sock`.
bool serve_connection(socket_t sock, const std::atomic<socket_t>& listening,
                      const ConnectionLimits& limits,
                      const std::function<bool(httplib::Stream&, bool last, bool& closed)>& process,
                      const std::function<void(int status)>& refused);

}  // namespace sift::serve
