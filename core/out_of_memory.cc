#include "core/out_of_memory.h"

#include <fmt/format.h>

#include <exception>
#include <regex>

#include "core/memory.h"

namespace sift {
namespace {

struct Failed {
  std::string what, keys;
  uint64_t bytes = 0;
  bool set = false;
};

// The innermost scope an exception left (the first destructor to run while unwinding).
Failed& failed() {
  static thread_local Failed f;
  return f;
}

std::string gib(double bytes) { return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

Allocating::Allocating(std::string what, std::string keys, uint64_t bytes)
    : what_(std::move(what)),
      keys_(std::move(keys)),
      bytes_(bytes),
      exceptions_(std::uncaught_exceptions()) {
  failed().set = false;
}

Allocating::~Allocating() {
  if (std::uncaught_exceptions() > exceptions_ && !failed().set) {
    failed() = {what_, keys_, bytes_, true};
  }
}

bool is_allocation_failure(const std::string& message) {
  return message.find("can't allocate memory") != std::string::npos ||
         message.find("std::bad_alloc") != std::string::npos;
}

std::string out_of_memory_line(const std::string& detail) {
  const Failed& f = failed();
  std::string size;
  std::smatch m;
  if (std::regex_search(detail, m, std::regex(R"(allocate (\d+) bytes)"))) {
    size = gib(std::stod(m[1]));
  } else if (f.set && f.bytes > 0) {
    size = "about " + gib(static_cast<double>(f.bytes));
  }
  const MemoryLimit limit = available_memory();
  const std::string available =
      limit.bytes > 0
          ? fmt::format("; {} available ({})", gib(static_cast<double>(limit.bytes)), limit.source)
          : "";
  if (!f.set) {
    return fmt::format("out of memory{}{}", size.empty() ? "" : " allocating " + size, available);
  }
  return fmt::format("out of memory allocating {}{} (sized by {}){}; make {} smaller", f.what,
                     size.empty() ? "" : ", " + size, f.keys, available, f.keys);
}

}  // namespace sift
