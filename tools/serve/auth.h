// Who may talk to `sift serve`: loopback binds by default; any other address needs a
// bearer token (read from a file, so it never shows in `ps`) unless --insecure is given.
// Tokens are compared in constant time, so the answer's timing does not leak a prefix.
#pragma once

#include <string>
#include <string_view>

namespace sift::serve {

bool is_loopback(const std::string& host);
// The token in `path` (surrounding whitespace dropped); sift::Error naming the file when
// it cannot be read or holds no token.
std::string read_token_file(const std::string& path);
// Whether an Authorization header value is "Bearer <token>", compared in constant time.
bool bearer_matches(std::string_view header, std::string_view token);

}  // namespace sift::serve
