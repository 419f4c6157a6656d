#include "models/product_quantizer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/splitmix.h"

namespace sift {
namespace {

// SplitMix64 rather than std:: engines and distributions, whose output differs between
// standard libraries: the same seed gives the same codes everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t below(uint64_t n) { return splitmix64(state_) % n; }
  double uniform() { return static_cast<double>(splitmix64(state_) >> 11) * 0x1.0p-53; }
  void shuffle(std::vector<int64_t>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  uint64_t state_;
};

// The index of the centroid nearest to x (d values) among c's 256; ties go to the lower.
uint8_t nearest(const float* x, const float* c, int64_t d) {
  float best = std::numeric_limits<float>::infinity();
  int64_t arg = 0;
  for (int64_t k = 0; k < kPqCentroids; ++k) {
    float dist = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      const float diff = x[j] - c[k * d + j];
      dist += diff * diff;
    }
    if (dist < best) {
      best = dist;
      arg = k;
    }
  }
  return static_cast<uint8_t>(arg);
}

// The distinct values of n points of d dims, sorted, or nothing when there are more than
// 256: then k-means learns the centroids.
bool distinct_points(const float* x, int64_t n, int64_t d, std::vector<float>& out) {
  std::map<std::vector<float>, bool> seen;
  for (int64_t i = 0; i < n; ++i) {
    seen.emplace(std::vector<float>(x + i * d, x + (i + 1) * d), true);
    if (static_cast<int64_t>(seen.size()) > kPqCentroids) return false;
  }
  out.clear();
  for (const auto& [point, unused] : seen) out.insert(out.end(), point.begin(), point.end());
  // The unused centroids repeat the first: never nearer than it, so never chosen.
  while (static_cast<int64_t>(out.size()) < kPqCentroids * d) {
    out.insert(out.end(), out.begin(), out.begin() + d);
  }
  return true;
}

void assign(const float* x, int64_t n, int64_t d, const float* c, uint8_t* codes) {
  at::parallel_for(0, n, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) codes[i] = nearest(x + i * d, c, d);
  });
}

// fastText's M-step: each centroid the mean of its points; an empty one is split off a
// cluster chosen with probability growing with its size, the two nudged apart by eps.
void update_centroids(const float* x, int64_t n, int64_t d, const uint8_t* codes, float* c,
                      Rng& rng) {
  constexpr float kEps = 1e-7f;
  std::vector<double> count(kPqCentroids, 0.0);
  std::fill(c, c + kPqCentroids * d, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    count[codes[i]] += 1.0;
    for (int64_t j = 0; j < d; ++j) c[codes[i] * d + j] += x[i * d + j];
  }
  for (int64_t k = 0; k < kPqCentroids; ++k) {
    if (count[k] == 0) continue;
    for (int64_t j = 0; j < d; ++j) c[k * d + j] /= static_cast<float>(count[k]);
  }
  for (int64_t k = 0; k < kPqCentroids; ++k) {
    if (count[k] != 0) continue;
    int64_t m = 0;
    while (rng.uniform() * static_cast<double>(n - kPqCentroids) >= count[m] - 1) {
      m = (m + 1) % kPqCentroids;
    }
    for (int64_t j = 0; j < d; ++j) {
      const float sign = static_cast<float>((j % 2) * 2 - 1);
      c[k * d + j] = c[m * d + j] + sign * kEps;
      c[m * d + j] -= sign * kEps;
    }
    count[k] = std::floor(count[m] / 2);
    count[m] -= count[k];
  }
}

// k-means of n > 256 points of d dims into c (256 x d), started from 256 sampled points.
void kmeans(const float* x, int64_t n, int64_t d, float* c, Rng& rng) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  rng.shuffle(perm);
  for (int64_t k = 0; k < kPqCentroids; ++k) {
    std::copy(x + perm[k] * d, x + (perm[k] + 1) * d, c + k * d);
  }
  std::vector<uint8_t> codes(static_cast<size_t>(n));
  for (int it = 0; it < kPqIterations; ++it) {
    assign(x, n, d, c, codes.data());
    update_centroids(x, n, d, codes.data(), c, rng);
  }
}

struct Quantized {
  torch::Tensor codes;      // uint8 [rows, subs]
  torch::Tensor centroids;  // float [subs * 256, dsub]
};

// Product quantization of a contiguous float [rows, dim] matrix.
Quantized quantize(const torch::Tensor& x, int64_t dsub, uint64_t seed) {
  const int64_t n = x.size(0), dim = x.size(1), subs = dim / dsub;
  const float* data = x.data_ptr<float>();
  Quantized q{torch::empty({n, subs}, torch::kUInt8),
              torch::empty({subs * kPqCentroids, dsub}, torch::kFloat)};
  Rng rng(seed);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  const int64_t points = std::min(n, kPqMaxPointsPerCentroid * kPqCentroids);
  std::vector<float> slice(static_cast<size_t>(n * dsub)), distinct;
  std::vector<uint8_t> codes(static_cast<size_t>(n));
  auto* out = q.codes.data_ptr<uint8_t>();
  for (int64_t m = 0; m < subs; ++m) {
    for (int64_t i = 0; i < n; ++i) {
      std::copy(data + i * dim + m * dsub, data + i * dim + (m + 1) * dsub,
                slice.data() + i * dsub);
    }
    float* c = q.centroids.data_ptr<float>() + m * kPqCentroids * dsub;
    if (distinct_points(slice.data(), n, dsub, distinct)) {
      std::copy(distinct.begin(), distinct.end(), c);
    } else {
      // fastText trains each position on its own sample of the rows.
      if (points != n) rng.shuffle(perm);
      std::vector<float> sample(static_cast<size_t>(points * dsub));
      for (int64_t i = 0; i < points; ++i) {
        std::copy(slice.data() + perm[i] * dsub, slice.data() + (perm[i] + 1) * dsub,
                  sample.data() + i * dsub);
      }
      kmeans(sample.data(), points, dsub, c, rng);
    }
    assign(slice.data(), n, dsub, c, codes.data());
    for (int64_t i = 0; i < n; ++i) out[i * subs + m] = codes[i];
  }
  return q;
}

}  // namespace

PqTable pq_encode(const torch::Tensor& table, const PqOptions& options) {
  if (table.dim() != 2 || options.dsub < 1 || table.size(1) % options.dsub != 0) {
    throw Error(fmt::format("--dsub {}: it must divide the table's dimension ({})", options.dsub,
                            table.dim() == 2 ? table.size(1) : 0));
  }
  torch::NoGradGuard no_grad;
  torch::Tensor x = table.detach().to(torch::kCPU, torch::kFloat).contiguous().clone();
  PqTable pq;
  if (options.qnorm) {
    const torch::Tensor norms = x.norm(2, 1, /*keepdim=*/true);
    // A zero row is left as it is (divided by 1); its norm quantizes to the nearest level.
    x.div_(torch::where(norms > 0, norms, torch::ones_like(norms)));
    Quantized n = quantize(norms.contiguous(), 1, options.seed);
    pq.norm_codes = n.codes;
    pq.norm_centroids = n.centroids;
  }
  Quantized q = quantize(x, options.dsub, options.seed);
  pq.codes = q.codes;
  pq.centroids = q.centroids;
  return pq;
}

torch::Tensor pq_decode(const PqTable& pq) {
  // A loop over the rows rather than two gathers: those built a 64-bit index of every code
  // (8 bytes a code) and a second table for the norms.
  const torch::Tensor codes = pq.codes.contiguous(), centroids = pq.centroids.contiguous();
  const int64_t rows = codes.size(0), subs = codes.size(1), dsub = centroids.size(1);
  torch::Tensor out = torch::empty({rows, subs * dsub}, torch::kFloat);
  const uint8_t* code = codes.data_ptr<uint8_t>();
  const float* c = centroids.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const bool qnorm = pq.norm_codes.defined();
  const torch::Tensor norm_codes = qnorm ? pq.norm_codes.contiguous() : torch::Tensor();
  const torch::Tensor norms = qnorm ? pq.norm_centroids.contiguous() : torch::Tensor();
  at::parallel_for(0, rows, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = o + r * subs * dsub;
      for (int64_t m = 0; m < subs; ++m) {
        std::copy_n(c + (m * kPqCentroids + code[r * subs + m]) * dsub, dsub, row + m * dsub);
      }
      if (!qnorm) continue;
      const float norm = norms.data_ptr<float>()[norm_codes.data_ptr<uint8_t>()[r]];
      for (int64_t j = 0; j < subs * dsub; ++j) row[j] *= norm;
    }
  });
  return out;
}

}  // namespace sift
