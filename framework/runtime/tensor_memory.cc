#include "framework/runtime/base/tensor_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

namespace sift {
namespace {

// LibTorch's default CPU allocation (c10::alloc_cpu: 64-byte aligned) with a 64-byte
// header that holds the size. Some kernels take raw pointers (raw_allocate), which needs
// the data pointer to be the deleter's context: the header keeps the size without a map.
class CountingAllocator final : public c10::Allocator {
 public:
  static constexpr size_t kHeader = 64;

  c10::DataPtr allocate(size_t n) const override {
    auto* base = static_cast<char*>(c10::alloc_cpu(n + kHeader));
    *reinterpret_cast<int64_t*>(base) = static_cast<int64_t>(n);
    tensor_bytes_allocated(static_cast<int64_t>(n));
    void* data = base + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static void release(void* data) {
    if (data == nullptr) return;
    char* base = static_cast<char*>(data) - kHeader;
    tensor_bytes_freed(*reinterpret_cast<int64_t*>(base));
    c10::free_cpu(base);
  }
};

CountingAllocator allocator;

}  // namespace

void count_tensor_memory() {
  if (!start_counting_tensor_bytes()) return;
  // Priority 100: above the default allocator's registration, as c10 requires to replace it.
  c10::SetCPUAllocator(&allocator, /*priority=*/100);
}

}  // namespace sift
