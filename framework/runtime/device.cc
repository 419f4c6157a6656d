#include "framework/runtime/device.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/error.h"

namespace sift {

int64_t cuda_device_index(const char* local_rank, int64_t device_count) {
  if (local_rank == nullptr || *local_rank == '\0') return 0;
  char* end = nullptr;
  const long long rank = std::strtoll(local_rank, &end, 10);
  if (*end != '\0' || rank < 0) {
    throw Error(fmt::format("LOCAL_RANK='{}' is not a whole number >= 0", local_rank));
  }
  if (rank >= device_count) {
    throw Error(fmt::format("LOCAL_RANK={} but this machine has {} CUDA device{}: start at most "
                            "one process per GPU (sift launch --nproc {})",
                            rank, device_count, device_count == 1 ? "" : "s", device_count));
  }
  return rank;
}

torch::Device parse_device(const std::string& name) {
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw Error("run.device is 'cuda' but this LibTorch build sees no CUDA device");
    }
    // One GPU per local rank, as torchrun's processes take cuda:LOCAL_RANK.
    const int64_t index = cuda_device_index(std::getenv("LOCAL_RANK"),
                                            static_cast<int64_t>(torch::cuda::device_count()));
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  return torch::Device(torch::kCPU);
}

}  // namespace sift
