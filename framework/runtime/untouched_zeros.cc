#include "framework/runtime/untouched_zeros.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace sift {
namespace {

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// The whole pages of `t`'s mapping.
size_t mapped_bytes(const torch::Tensor& t) {
  const size_t page = page_size();
  return (t.nbytes() + page - 1) / page * page;
}

}  // namespace

torch::Tensor untouched_zeros(at::IntArrayRef sizes, const torch::TensorOptions& options) {
  const auto cpu = options.device(torch::kCPU);
  size_t bytes = c10::elementSize(c10::typeMetaToScalarType(cpu.dtype()));
  for (const int64_t d : sizes) bytes *= static_cast<size_t>(d);
  if (bytes == 0) return torch::zeros(sizes, cpu);
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (data == MAP_FAILED) {
    throw Error(fmt::format("cannot map {} bytes for the optimizer state: {}", bytes,
                            std::strerror(errno)));
  }
  return torch::from_blob(
      data, sizes, [bytes](void* p) { munmap(p, bytes); }, cpu);
}

void give_back_pages(const torch::Tensor& t) {
  if (t.nbytes() == 0) return;
  if (madvise(t.data_ptr(), mapped_bytes(t), MADV_DONTNEED) != 0) {
    throw Error(
        fmt::format("cannot give back the optimizer state's pages: {}", std::strerror(errno)));
  }
}

int64_t resident_bytes(const torch::Tensor& t) {
  if (t.nbytes() == 0) return 0;
  const size_t page = page_size(), bytes = mapped_bytes(t);
  std::vector<unsigned char> in(bytes / page);
  if (mincore(t.data_ptr(), bytes, in.data()) != 0) return 0;
  int64_t resident = 0;
  for (const unsigned char v : in) resident += (v & 1) ? static_cast<int64_t>(page) : 0;
  return resident;
}

}  // namespace sift
