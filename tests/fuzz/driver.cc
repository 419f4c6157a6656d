// The deterministic driver of a fuzz target (fuzz_target.h) where libFuzzer is not linked:
// `TARGET CORPUS_DIR [MUTATIONS] [SEED]` runs every file of the seed corpus, then
// MUTATIONS (default 2000) seeded mutations of them (byte flips, cuts, inserted bytes that
// the formats treat specially, deleted ranges, splices of two seeds), and prints how many
// inputs ran. A finding crashes or throws out of main, failing the ctest that runs it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/splitmix.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// One mutation of `s` drawn from `rng`; `other` is another seed for splices.
std::string mutate(std::string s, const std::string& other, uint64_t& rng) {
  static const std::string kSpecial("\"\t\n\r\0\xff,\\{}[]:-#&*!|>'%@ ", 25);
  const int edits = 1 + static_cast<int>(sift::splitmix64(rng) % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = s.empty() ? 0 : static_cast<size_t>(sift::splitmix64(rng) % (s.size() + 1));
    switch (sift::splitmix64(rng) % 6) {
      case 0:  // flip a bit
        if (!s.empty()) s[at % s.size()] ^= static_cast<char>(1u << (sift::splitmix64(rng) % 8));
        break;
      case 1:  // cut
        s.resize(at);
        break;
      case 2:  // insert a byte the formats treat specially
        s.insert(at, 1, kSpecial[sift::splitmix64(rng) % kSpecial.size()]);
        break;
      case 3:  // delete a range
        s.erase(at, static_cast<size_t>(sift::splitmix64(rng) % 16));
        break;
      case 4:  // a random byte
        if (!s.empty()) s[at % s.size()] = static_cast<char>(sift::splitmix64(rng));
        break;
      default: {  // splice: the head of this one, the tail of the other
        const size_t from =
            other.empty() ? 0 : static_cast<size_t>(sift::splitmix64(rng) % other.size());
        s = s.substr(0, at) + other.substr(from);
      }
    }
  }
  return s;
}

int run(const std::string& input) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS] [SEED]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> seeds;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1])) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // the same order on every file system
  for (const auto& f : files) seeds.push_back(read(f));
  if (seeds.empty()) seeds.push_back("");
  const long mutations = argc > 2 ? std::atol(argv[2]) : 2000;
  uint64_t rng = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 42;
  long ran = 0;
  for (const auto& s : seeds) ran += run(s) == 0;
  for (long i = 0; i < mutations; ++i) {
    const std::string& a = seeds[sift::splitmix64(rng) % seeds.size()];
    const std::string& b = seeds[sift::splitmix64(rng) % seeds.size()];
    ran += run(mutate(a, b, rng)) == 0;
  }
  std::printf("%ld inputs (%zu seeds, %ld mutations) ran without a finding\n", ran, seeds.size(),
              mutations);
  return 0;
}
