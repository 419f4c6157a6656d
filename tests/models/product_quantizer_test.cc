// Product quantization (fastText's quantize): the round trip of encode and decode, exact
// when a position takes at most 256 values, within the quantization error otherwise.
#include "models/product_quantizer.h"

#include <gtest/gtest.h>

#include "tests/test_files.h"

namespace sift {
namespace product_quantizer_test {

// [rows, dim] with, at each 2-dim position, sub-vectors drawn from `values` distinct ones.
torch::Tensor table_of_distinct(int64_t rows, int64_t dim, int64_t values) {
  torch::manual_seed(3);
  std::vector<torch::Tensor> positions;
  for (int64_t m = 0; m < dim / 2; ++m) {
    const torch::Tensor choices = torch::randn({values, 2});
    positions.push_back(choices.index_select(0, torch::randint(values, {rows}, torch::kLong)));
  }
  return torch::cat(positions, 1);
}

// For each row and position, the squared distance to the nearest of the position's
// centroids: the smallest error any code could give.
torch::Tensor best_errors(const torch::Tensor& table, const PqTable& pq, int64_t dsub) {
  const int64_t subs = table.size(1) / dsub;
  std::vector<torch::Tensor> errors;
  for (int64_t m = 0; m < subs; ++m) {
    const torch::Tensor x = table.narrow(1, m * dsub, dsub);
    const torch::Tensor c = pq.centroids.narrow(0, m * kPqCentroids, kPqCentroids);
    errors.push_back(std::get<0>(torch::cdist(x, c).pow(2).min(1)));
  }
  return torch::stack(errors, 1);
}

TEST(ProductQuantizer, DecodesExactlyATableOfAtMost256DistinctSubVectorsAPosition) {
  const torch::Tensor table = table_of_distinct(3000, 8, 256);
  const PqTable pq = pq_encode(table, {});
  EXPECT_EQ(pq.codes.sizes(), (std::vector<int64_t>{3000, 4}));
  EXPECT_EQ(pq.codes.scalar_type(), torch::kUInt8);
  EXPECT_EQ(pq.centroids.sizes(), (std::vector<int64_t>{4 * 256, 2}));
  EXPECT_TRUE(torch::equal(pq_decode(pq), table));
}

TEST(ProductQuantizer, EncodesEachSubVectorAsItsNearestCentroid) {
  torch::manual_seed(5);
  const torch::Tensor table = torch::randn({5000, 10});
  const PqTable pq = pq_encode(table, {});
  const torch::Tensor decoded = pq_decode(pq);
  const torch::Tensor errors = (decoded - table).pow(2).view({5000, 5, 2}).sum(2);
  // The code of every sub-vector is its nearest centroid (ties aside)...
  EXPECT_LT((errors - best_errors(table, pq, 2)).max().item<double>(), 1e-5);
  // ...and k-means placed the centroids well: 256 centroids over a 2-dim Gaussian leave
  // about 1% of its variance (for comparison, centroids at 256 random points: about 2%).
  const double relative = (errors.sum() / table.pow(2).sum()).item<double>();
  EXPECT_LT(relative, 0.015);
  EXPECT_GT(relative, 0.0);
}

TEST(ProductQuantizer, SameSeedSameCodesOtherSeedOtherCentroids) {
  torch::manual_seed(9);
  const torch::Tensor table = torch::randn({2000, 4});
  const PqTable a = pq_encode(table, {}), b = pq_encode(table, {});
  EXPECT_TRUE(torch::equal(a.codes, b.codes));
  EXPECT_TRUE(torch::equal(a.centroids, b.centroids));
  PqOptions other;
  other.seed = 99;
  EXPECT_FALSE(torch::equal(pq_encode(table, other).centroids, a.centroids));
}

TEST(ProductQuantizer, QnormStoresNormalisedRowsAndQuantizesTheirNormsApart) {
  torch::manual_seed(11);
  const torch::Tensor table = torch::randn({4000, 6}) * torch::rand({4000, 1}) * 3;
  PqOptions options;
  options.qnorm = true;
  const PqTable pq = pq_encode(table, options);
  ASSERT_TRUE(pq.norm_codes.defined());
  EXPECT_EQ(pq.norm_codes.sizes(), (std::vector<int64_t>{4000, 1}));
  EXPECT_EQ(pq.norm_centroids.sizes(), (std::vector<int64_t>{256, 1}));
  // The centroids hold unit-norm rows' pieces: none longer than 1.
  EXPECT_LE(pq.centroids.norm(2, 1).max().item<double>(), 1.0 + 1e-5);
  const torch::Tensor norms = table.norm(2, 1);
  const torch::Tensor decoded = pq_decode(pq);
  // Each norm is coded as its nearest level...
  const torch::Tensor levels = pq.norm_centroids.view({-1});
  const torch::Tensor quantized = levels.index_select(0, pq.norm_codes.view({-1}).to(torch::kLong));
  const torch::Tensor nearest = std::get<0>((norms.unsqueeze(1) - levels).abs().min(1));
  EXPECT_LT(((quantized - norms).abs() - nearest).max().item<double>(), 1e-5);
  // ...and 256 k-means levels leave a tiny squared error (a replica of this k-means in
  // Python: 3e-5 to 8e-5 of the norms' energy over five seeds). Not a bound on each norm:
  // k-means may give two sparse tail norms one level (its largest error there: 0.5 to 1.0
  // of a range of 13).
  const double norm_error = ((quantized - norms).pow(2).sum() / norms.pow(2).sum()).item<double>();
  EXPECT_LT(norm_error, 1e-3);
  const double relative = ((decoded - table).pow(2).sum() / table.pow(2).sum()).item<double>();
  EXPECT_LT(relative, 0.05);
}

TEST(ProductQuantizer, RefusesADsubThatDoesNotDivideTheDimension) {
  PqOptions options;
  options.dsub = 3;
  const std::string message = testing::error_of([&] {
    pq_encode(torch::randn({300, 10}), options);
  });
  EXPECT_NE(message.find("--dsub 3"), std::string::npos) << message;
  EXPECT_NE(message.find("(10)"), std::string::npos) << message;
}

}  // namespace product_quantizer_test
}  // namespace sift
