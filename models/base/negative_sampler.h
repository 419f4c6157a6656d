// train.loss ns: the negatives of an example, drawn as fastText's getNegative draws them:
// labels by count^0.5, a draw of the example's own label drawn again.
#pragma once

#include <cstdint>
#include <vector>

namespace sift {

class NegativeSampler {
 public:
  explicit NegativeSampler(const std::vector<int64_t>& counts);
  // `negatives` labels other than `target` for example `index` of a batch whose draws
  // are seeded by `seed`: the same seed and index give the same labels, whichever thread
  // or path (autograd, fused) asks. Fewer when no other label has a count.
  std::vector<int64_t> draw(int64_t target, int64_t negatives, uint64_t seed, int64_t index) const;

 private:
  std::vector<double> cumulative_;  // running sum of count^0.5
};

}  // namespace sift
