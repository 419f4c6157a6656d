#include "framework/runtime/device.h"

#include "core/error.h"

namespace sift {

torch::Device parse_device(const std::string& name) {
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw Error("run.device is 'cuda' but this LibTorch build sees no CUDA device");
    }
    return torch::Device(torch::kCUDA);
  }
  return torch::Device(torch::kCPU);
}

}  // namespace sift
