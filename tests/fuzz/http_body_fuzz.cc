// The HTTP bodies `sift serve` reads (tools/serve/request_json) on any bytes: as a
// predict request, as an Open Inference Protocol v2 infer request, and as one in the binary
// tensor data extension (the first byte is the Inference-Header-Content-Length, the JSON's
// length, within the rest). An HttpError (a 4xx answer naming the field) is the accepted
// refusal; so is a sift::Error.
#include <algorithm>
#include <functional>
#include <string_view>

#include "tests/fuzz/fuzz_target.h"
#include "tools/serve/request_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sift;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const serve::RequestLimits limits{8, 64};  // small, so that the limits are reached
  using Parse = std::function<serve::PredictRequest(std::string_view, const serve::RequestLimits&)>;
  const Parse binary = [](std::string_view b, const serve::RequestLimits& l) {
    const std::string_view rest = b.substr(std::min<size_t>(1, b.size()));
    const uint64_t json_bytes = b.empty() ? 0 : static_cast<unsigned char>(b[0]);
    return serve::parse_infer(rest, l, std::min<uint64_t>(json_bytes, rest.size()));
  };
  const Parse infer = [](std::string_view b, const serve::RequestLimits& l) {
    return serve::parse_infer(b, l);
  };
  for (const Parse& parse : {Parse(serve::parse_predict), infer, binary}) {
    fuzz::refusals_are_fine([&] {
      try {
        const serve::PredictRequest r = parse(body, limits);
        if (r.texts.size() > 8) throw std::logic_error("more texts than the limit");
        for (const auto& text : r.texts) {
          if (text.size() > 64) throw std::logic_error("a text over the byte limit");
        }
      } catch (const serve::HttpError& e) {
        if (e.status < 400 || e.status > 499) throw std::logic_error("a refusal that is not 4xx");
      }
    });
  }
  return 0;
}
