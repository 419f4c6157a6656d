// The torch device named by run.device.
#pragma once

#include <torch/torch.h>

#include <string>

namespace sift {

// "cuda" (sift::Error when LibTorch sees no CUDA device); anything else is the CPU.
torch::Device parse_device(const std::string& name);

}  // namespace sift
