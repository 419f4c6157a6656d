#include "datasets/augment.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "core/ascii.h"
#include "core/splitmix.h"

namespace sift {
namespace {

double uniform(uint64_t& state) { return splitmix_uniform(state); }

// A uniform integer in [0, n), n > 0 (the bias of the modulo is below 2^-40 for n <= 2^24).
uint64_t below(uint64_t& state, uint64_t n) { return splitmix64(state) % n; }

constexpr uint64_t kLongestNgram = 5;

}  // namespace

std::string augment_text(const std::string& text, const AugmentOptions& options, uint64_t seed) {
  std::vector<std::string_view> words;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && is_ascii_space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !is_ascii_space(text[i])) ++i;
    if (i > start) words.emplace_back(text.data() + start, i - start);
  }
  uint64_t state = seed;
  // One draw per word whatever the probability, so that the n-gram's draws do not
  // depend on `mask`.
  for (auto& w : words) {
    if (uniform(state) < options.mask) w = kMaskToken;
  }
  size_t first = 0, end = words.size();
  if (!words.empty() && uniform(state) < options.ngram) {
    const uint64_t n = std::min<uint64_t>(1 + below(state, kLongestNgram), words.size());
    first = static_cast<size_t>(below(state, words.size() - n + 1));
    end = first + static_cast<size_t>(n);
  }
  std::string out;
  for (size_t i = first; i < end; ++i) {
    if (i > first) out.push_back(' ');
    out.append(words[i].data(), words[i].size());
  }
  return out;
}

uint64_t augment_seed(uint64_t seed, uint64_t epoch, uint64_t text_hash, uint64_t piece,
                      uint64_t offset) {
  uint64_t h = mix64(seed ^ 0x6A09E667F3BCC909ULL);
  for (const uint64_t v : {epoch, text_hash, piece, offset})
    h = mix64(h ^ (v + 0x9E3779B97F4A7C15ULL));
  return h;
}

}  // namespace sift
