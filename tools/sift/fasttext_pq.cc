#include "tools/sift/fasttext_pq.h"

#include <algorithm>
#include <numeric>

namespace sift::cli {

PqTable pq_table_of(const FastTextQuantMatrix& q) {
  const int64_t piece = std::gcd(q.dsub, q.lastdsub), pieces = q.cols / piece;
  PqTable t;
  t.codes = torch::empty({q.rows, pieces}, torch::kUInt8);
  t.centroids = torch::empty({pieces * kPqCentroids, piece}, torch::kFloat);
  uint8_t* codes = t.codes.data_ptr<uint8_t>();
  float* centroids = t.centroids.data_ptr<float>();
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t column = p * piece, m = column / q.dsub, offset = column - m * q.dsub;
    const int64_t width = m == q.nsubq - 1 ? q.lastdsub : q.dsub;
    const float* sub = q.centroids.data() + m * kPqCentroids * q.dsub;
    for (int64_t k = 0; k < kPqCentroids; ++k) {
      std::copy_n(sub + k * width + offset, piece, centroids + (p * kPqCentroids + k) * piece);
    }
    for (int64_t r = 0; r < q.rows; ++r) codes[r * pieces + p] = q.codes[r * q.nsubq + m];
  }
  if (q.qnorm) {
    t.norm_codes = torch::tensor(q.norm_codes, torch::kUInt8).view({q.rows, 1});
    t.norm_centroids = torch::tensor(q.norm_centroids, torch::kFloat).view({kPqCentroids, 1});
  }
  return t;
}

}  // namespace sift::cli
