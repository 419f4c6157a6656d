// The safetensors header reader (datasets/safetensors) on any bytes as a file.
#include <string_view>

#include "datasets/safetensors.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sift;
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  return fuzz::refusals_are_fine([&] { parse_safetensors_header(file, "fuzz.safetensors"); });
}
