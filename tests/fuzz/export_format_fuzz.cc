// An export's self-description (framework/runtime/base/export_format) on any bytes: as
// sift_format.json with one extra file, and as tokenizer.json.
#include <map>
#include <string>

#include "framework/runtime/base/export_format.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sift;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::map<std::string, std::string> files = {{"labels.txt", "ham\nspam\n"}};
  fuzz::refusals_are_fine([&] { check_format(text, "fuzz.pt", files); });
  TokenizerType type = TokenizerType::word;
  return fuzz::refusals_are_fine([&] { encoder_options_from_json(text, "fuzz.pt", &type); });
}
