// How both programs (sift-lite and sift-main) end a command that failed: one
// `sift: error:` line on stderr and the exit status, written once.
#pragma once

#include <functional>

namespace sift::cli {

// Runs `command` and returns its status, or, when it throws: a usage error 2 (UsageError),
// a training stopped by a signal 128 + the signal (Interrupted: "sift: " and its message,
// which says how to resume), an allocation failure the out-of-memory line and 1, any other
// error its message and 1. Standard output is flushed first, so that the line follows what
// the command printed.
int exit_status_of(const std::function<int()>& command);

}  // namespace sift::cli
