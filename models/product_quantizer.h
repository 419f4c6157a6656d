// Product quantization of an embedding table, as fastText's `quantize` does
// (ProductQuantizer, QuantMatrix; Jegou et al. 2011): each row is cut into sub-vectors of
// `dsub` dims, and each sub-vector is stored as the one-byte index of the nearest of 256
// centroids learnt for its position by k-means. With `qnorm`, rows are normalised first
// and their L2 norms quantized separately (a 1-dim product quantizer of their own).
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace sift {

inline constexpr int64_t kPqCentroids = 256;  // one byte per code
// fastText's k-means: 25 iterations over at most 256 sampled points per centroid.
inline constexpr int kPqIterations = 25;
inline constexpr int64_t kPqMaxPointsPerCentroid = 256;
inline constexpr uint64_t kPqSeed = 1234;  // fastText's ProductQuantizer seed

struct PqOptions {
  int64_t dsub = 2;
  bool qnorm = false;
  uint64_t seed = kPqSeed;
};

// A table as codes and centroids. Row r is, for each position m < subs,
// centroids[m * 256 + codes[r][m]] (dsub values), times norm_centroids[norm_codes[r][0]]
// with qnorm.
struct PqTable {
  torch::Tensor codes;           // uint8 [rows, subs]
  torch::Tensor centroids;       // float [subs * 256, dsub]
  torch::Tensor norm_codes;      // uint8 [rows, 1]; undefined without qnorm
  torch::Tensor norm_centroids;  // float [256, 1]; undefined without qnorm
};

// Learns the centroids of `table` (float [rows, dim], dim a multiple of dsub) and encodes
// it. Deterministic for a seed. A position whose sub-vectors take at most 256 distinct
// values gets exactly those as centroids (its codes decode without error); the others
// get k-means as fastText runs it (centroids started from sampled rows, empty clusters
// split off the larger ones).
PqTable pq_encode(const torch::Tensor& table, const PqOptions& options);

// The table the codes stand for: float [rows, dim].
torch::Tensor pq_decode(const PqTable& pq);

}  // namespace sift
