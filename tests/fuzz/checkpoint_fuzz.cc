// The checkpoint reader (framework/runtime/base/checkpoint_file) on any bytes: once as the
// whole file, once as the body behind a valid header (magic, version, length and CRC-32
// computed here), so the mutations reach the sections past the checksum.
#include <string>

#include "core/crc32.h"
#include "framework/runtime/base/checkpoint_file.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sift;
  const std::string whole = fuzz::temp_file("whole.ckpt", data, size);
  fuzz::refusals_are_fine([&] { read_checkpoint(whole); });
  const std::string body(reinterpret_cast<const char*>(data), size);
  const std::string file =
      checkpoint_header(kCheckpointVersion, body.size(), crc32_of(body)) + body;
  const std::string framed =
      fuzz::temp_file("framed.ckpt", reinterpret_cast<const uint8_t*>(file.data()), file.size());
  fuzz::refusals_are_fine([&] { read_checkpoint(framed); });
  return fuzz::refusals_are_fine([&] { read_checkpoint(framed, {"model"}); });
}
