// `sift serve`'s request heads are bounded while they are read (tools/serve/
// bounded_connection.h): what no HTTP client library sends, a head that never ends, is
// written over a raw TCP socket.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_server.h"

namespace sift {
namespace serve_test {
namespace {

// A TCP connection to the server, written and read byte for byte.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(static_cast<uint16_t>(port));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&at), sizeof(at)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool answer_waiting() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  // Writes `text`; false once the server has closed.
  bool send(const std::string& text) {
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::send(fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // Writes `first`, then `more` again and again, until an answer is waiting, the server
  // closes, or `max_bytes` are written: the bytes written.
  size_t send_until_answered(const std::string& first, const std::string& more, size_t max_bytes) {
    size_t sent = send(first) ? first.size() : 0;
    while (sent < max_bytes && !answer_waiting() && send(more)) sent += more.size();
    return sent;
  }
  // What the server writes until it closes, or `seconds` pass in silence.
  std::string read_all(int seconds) {
    std::string out;
    char buffer[4096];
    pollfd p{fd_, POLLIN, 0};
    while (::poll(&p, 1, seconds * 1000) > 0) {
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// The JSON body of a raw answer ("" when there is none).
std::string body_of(const std::string& answer) {
  const size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

// 16 MiB of header lines written without the blank line that ends them: the server must
// answer once the lines pass --max-header-bytes, not read them all (cpp-httplib alone reads
// every line until the blank one, keeping each, and never answers this client).
TEST_F(ServeCli, AHeadThatNeverEndsIsAnswered431OnceOverTheLimitInsteadOfReadToTheEnd) {
  Server s(dir_, {"--model", "trec=" + train_fasttext(), "--max-header-bytes", "4096"});
  RawConnection c(s.port());
  ASSERT_TRUE(c.connected());
  std::string lines;
  for (int i = 0; i < 1000; ++i) lines += "X-Fill: " + std::string(56, 'a') + "\r\n";
  const size_t kMax = size_t{16} << 20;
  const size_t sent = c.send_until_answered(
      "POST /v1/models/trec/predict HTTP/1.1\r\nHost: 127.0.0.1\r\n", lines, kMax);
  EXPECT_LT(sent, kMax) << "no answer while the head went on";
  const std::string answer = c.read_all(5);
  EXPECT_EQ(answer.rfind("HTTP/1.1 431 ", 0), 0u) << answer.substr(0, 200);
  ASSERT_TRUE(json::accept(body_of(answer))) << answer;
  EXPECT_NE(json::parse(body_of(answer))
                .at("error")
                .get<std::string>()
                .find("--max-header-bytes (4096 bytes)"),
            std::string::npos)
      << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  // The server is still up and answers the next client.
  EXPECT_EQ(s.get("/v2/health/live").first, 200);
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

// A request line that never ends: 414 once it passes its bound (8 KiB and a little, past
// cpp-httplib's own limit of 8 KiB a request line).
TEST_F(ServeCli, ARequestLineThatNeverEndsIsAnswered414) {
  Server s(dir_, {"--model", "trec=" + train_fasttext()});
  RawConnection c(s.port());
  ASSERT_TRUE(c.connected());
  const size_t kMax = size_t{16} << 20;
  const size_t sent = c.send_until_answered("GET /", std::string(4096, 'a'), kMax);
  EXPECT_LT(sent, kMax) << "no answer while the request line went on";
  const std::string answer = c.read_all(5);
  EXPECT_EQ(answer.rfind("HTTP/1.1 414 ", 0), 0u) << answer.substr(0, 200);
  ASSERT_TRUE(json::accept(body_of(answer))) << answer;
  EXPECT_NE(body_of(answer).find("request line is over"), std::string::npos) << answer;
  // A request line between 8 KiB and the bound that does end: cpp-httplib's 414, in JSON.
  const auto [status, body] = s.get("/v1/models/" + std::string(8250, 'a'));
  EXPECT_EQ(status, 414) << body;
  EXPECT_TRUE(json::accept(body)) << body;
  const std::string metrics = s.get("/metrics").second;
  EXPECT_NE(metrics.find(R"x(route="(request line too long)",status="414")x"), std::string::npos)
      << metrics;
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

// Header lines under the limit in all, in many lines: answered; one line more than the
// limit allows: 431. Both from cpp-httplib's client.
TEST_F(ServeCli, ManyHeaderLinesAreAnsweredUnderTheLimitAndRefusedPastIt) {
  Server s(dir_, {"--model", "trec=" + train_fasttext(), "--max-header-bytes", "8192"});
  httplib::Headers under, over;
  // Each line "X-N-i: v\r\n" is at most 15 bytes; cpp-httplib's client adds about 100.
  for (int i = 0; i < 400; ++i) under.emplace("X-N-" + std::to_string(i), "v");
  for (int i = 0; i < 4000; ++i) over.emplace("X-N-" + std::to_string(i), "v");
  auto c = s.client();
  auto ok = c.Get("/v2/health/live", under);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto refused = c.Get("/v2/health/live", over);
  ASSERT_TRUE(refused) << httplib::to_string(refused.error());
  EXPECT_EQ(refused->status, 431) << refused->body;
  EXPECT_TRUE(json::accept(refused->body)) << refused->body;
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

// Two requests written at once on one kept-alive connection: the second, read from the
// socket with the first, is answered too (cpp-httplib's own loop starts each request on a
// fresh read buffer, dropping what it had read past the first).
TEST_F(ServeCli, TwoRequestsWrittenAtOnceOnOneConnectionAreBothAnswered) {
  Server s(dir_, {"--model", "trec=" + train_fasttext()});
  RawConnection c(s.port());
  ASSERT_TRUE(c.connected());
  const std::string body = R"({"texts": ["Who wrote Hamlet ?"]})";
  const std::string one =
      "POST /v1/models/trec/predict HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const std::string last =
      "GET /v2/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Connection: close\r\n\r\n";
  ASSERT_TRUE(c.send(one + last));
  const std::string answers = c.read_all(5);
  EXPECT_EQ(answers.rfind("HTTP/1.1 200 ", 0), 0u) << answers;
  EXPECT_NE(answers.find("\"predictions\""), std::string::npos) << answers;
  const size_t second = answers.find("HTTP/1.1 ", 1);
  ASSERT_NE(second, std::string::npos) << answers;
  EXPECT_EQ(answers.substr(second, 13), "HTTP/1.1 200 ") << answers;
  EXPECT_NE(answers.find(R"({"live":true})", second), std::string::npos) << answers;
  EXPECT_EQ(s.stop(SIGTERM), 0);
}

}  // namespace
}  // namespace serve_test
}  // namespace sift
