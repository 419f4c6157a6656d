// Text encoders for many threads: a TextEncoder reuses a token buffer and is not
// thread-safe, so each HTTP thread borrows one for the length of an encode. The pool
// grows to the number of threads that ever encoded at once.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "datasets/text_encoder.h"

namespace sift::serve {

class EncoderPool {
 public:
  explicit EncoderPool(TextEncoder first) { free_.push_back(std::make_unique<TextEncoder>(first)); }

  void encode(std::string_view text, std::vector<int64_t>& ids) {
    std::unique_ptr<TextEncoder> encoder = take();
    encoder->encode(text, ids);
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(encoder));
  }

 private:
  std::unique_ptr<TextEncoder> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() == 1) return std::make_unique<TextEncoder>(*free_.back());  // a copy
    std::unique_ptr<TextEncoder> e = std::move(free_.back());
    free_.pop_back();
    return e;
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<TextEncoder>> free_;  // the first is kept as the template
};

}  // namespace sift::serve
