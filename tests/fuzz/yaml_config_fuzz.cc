// The config loader (config/loader) on any bytes as a YAML file, then as a --set value.
#include <string>

#include "config/loader.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sift;
  const std::string path = fuzz::temp_file("config.yaml", data, size);
  fuzz::refusals_are_fine([&] { load_config(path); });
  std::string set(reinterpret_cast<const char*>(data), size);
  for (char& c : set) c = c == '\0' ? ' ' : c;  // a command line holds no NUL
  return fuzz::refusals_are_fine([&] { load_config("", {"data.train.path=" + set}); });
}
