// Where a result came from: report.json's and an export's provenance (the Sift version and
// git commit the program was built from, its command line, host and start time).
#pragma once

#include <string>

namespace sift {

inline constexpr const char* kSiftVersion = "0.1.0";

// The git commit of the build ("abc123def456", "+ local changes" when the tree had
// edits), from a file the build writes (cmake/build_info.cmake).
const char* build_commit();

struct Provenance {
  std::string version, commit, command_line, host, started;  // started: UTC, ISO 8601
};

// This process's provenance.
Provenance this_process();

// "2026-12-05T00:10:00Z" for `seconds` since the epoch.
std::string utc_iso8601(long long seconds);

}  // namespace sift
