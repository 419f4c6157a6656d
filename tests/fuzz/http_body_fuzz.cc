// The HTTP bodies `sift serve` reads (tools/serve/request_json) on any bytes: as a
// predict request and as an Open Inference Protocol v2 infer request. An HttpError (a
// 4xx answer naming the field) is the accepted refusal; so is a sift::Error.
#include <string_view>

#include "tests/fuzz/fuzz_target.h"
#include "tools/serve/request_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sift;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const serve::RequestLimits limits{8, 64};  // small, so that the limits are reached
  for (auto parse : {serve::parse_predict, serve::parse_infer}) {
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
