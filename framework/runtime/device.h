// The torch device named by run.device.
#pragma once

#include <torch/torch.h>

#include <string>

namespace sift {

// "cuda" (sift::Error when LibTorch sees no CUDA device) is cuda:LOCAL_RANK: each process of
// a distributed run on one machine takes its own GPU (cuda:0 without LOCAL_RANK); anything
// else is the CPU.
torch::Device parse_device(const std::string& name);

// The CUDA device index for LOCAL_RANK's value (null or empty: 0); sift::Error when it is
// not a whole number or names a device beyond device_count.
int64_t cuda_device_index(const char* local_rank, int64_t device_count);

}  // namespace sift
