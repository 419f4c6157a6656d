// A fuzz target: LLVMFuzzerTestOneInput, libFuzzer's entry point. Built two ways
// (tests/fuzz/CMakeLists.txt): with clang's -fsanitize=fuzzer for coverage-guided runs
// (bench/fuzz.sh), and with the deterministic driver (driver.cc) as a ctest that replays the
// seed corpus (tests/data/fuzz/TARGET) and a bounded number of seeded mutations of it.
// A target returns 0 for every input; a sift::Error is an accepted outcome (the input was
// refused with a message), anything else (another exception, a crash, a hang, a
// sanitizer report) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace sift::fuzz {

// Runs `f`; a sift::Error (a clean refusal) is swallowed, anything else propagates.
template <typename F>
int refusals_are_fine(F&& f) {
  try {
    f();
  } catch (const sift::Error&) {
  }
  return 0;
}

// A file in this process's own temporary folder holding `bytes` (the readers under test
// take paths): /tmp/sift-fuzz-PID/NAME.
std::string temp_file(const std::string& name, const uint8_t* data, size_t size);

}  // namespace sift::fuzz
