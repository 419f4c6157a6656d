#include "core/provenance.h"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iterator>

namespace sift {
namespace {

// Taken when the program loads: the start of the run it reports.
const std::time_t kStarted = std::time(nullptr);

// argv as the shell would take it back: words with spaces or quotes in single quotes.
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out, word;
  auto flush = [&] {
    const bool plain = !word.empty() && word.find_first_of(" \t\n'\"$\\") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += word;
    } else {
      out += '\'';
      for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
    word.clear();
  };
  for (const char c : raw) {
    if (c == '\0') {
      flush();
    } else {
      word += c;
    }
  }
  if (!word.empty()) flush();
  return out;
}

}  // namespace

std::string utc_iso8601(long long seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Provenance this_process() {
  char host[256] = "";
  ::gethostname(host, sizeof(host) - 1);
  return {kSiftVersion, build_commit(), command_line(), host, utc_iso8601(kStarted)};
}

}  // namespace sift
