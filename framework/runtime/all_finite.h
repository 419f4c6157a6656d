// Whether a tensor holds only finite values, without LibTorch's temporaries.
#pragma once

#include <torch/torch.h>

namespace sift {

// Whether every element of `t` is finite. fp32 on the CPU (the weights of every run that
// saves without a GPU): one pass over its memory. torch::isfinite allocated about 140 MB of
// temporaries for fastText's 2M x 10 table and took 0.34 s of a 2.7 s TREC run before each
// last.ckpt (measured with strace); the plain pass allocates nothing.
// Also run over every weight a run folder loads (model_bundle.cc): for a fastText table
// torch::isfinite took the peak RSS of `sift predict` from 186 to 306 MB.
bool all_finite(const torch::Tensor& t);

}  // namespace sift
