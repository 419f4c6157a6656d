#include "tools/serve/auth.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/file_bytes.h"

namespace sift::serve {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string read_token_file(const std::string& path) {
  std::string token;
  try {
    token = read_file_bytes(path);
  } catch (const std::exception& e) {
    throw Error(fmt::format("--auth-token-file: {}", e.what()));
  }
  const size_t b = token.find_first_not_of(" \t\r\n");
  const size_t e = token.find_last_not_of(" \t\r\n");
  token = b == std::string::npos ? "" : token.substr(b, e - b + 1);
  if (token.empty()) throw Error(fmt::format("--auth-token-file: {} holds no token", path));
  return token;
}

bool bearer_matches(std::string_view header, std::string_view token) {
  static constexpr std::string_view kScheme = "Bearer ";
  if (header.substr(0, kScheme.size()) != kScheme) return false;
  const std::string_view given = header.substr(kScheme.size());
  // Every byte of the longer one is compared, whatever differs first.
  unsigned diff = given.size() == token.size() ? 0 : 1;
  const size_t n = std::max(given.size(), token.size());
  for (size_t i = 0; i < n; ++i) {
    const auto a = i < given.size() ? static_cast<unsigned char>(given[i]) : 0u;
    const auto b = i < token.size() ? static_cast<unsigned char>(token[i]) : 0u;
    diff |= a ^ b;
  }
  return diff == 0;
}

}  // namespace sift::serve
