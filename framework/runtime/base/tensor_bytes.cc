#include <atomic>

#include "framework/runtime/base/tensor_memory.h"

namespace sift {
namespace {

std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};
std::atomic<bool> counting{false};

}  // namespace

bool start_counting_tensor_bytes() { return !counting.exchange(true); }

void tensor_bytes_allocated(int64_t n) {
  const int64_t now = live_bytes += n;
  int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
}

void tensor_bytes_freed(int64_t n) { live_bytes -= n; }

bool tensor_memory_counted() { return counting.load(); }

int64_t live_tensor_bytes() { return live_bytes.load(std::memory_order_relaxed); }

int64_t peak_tensor_bytes() { return peak_bytes.load(std::memory_order_relaxed); }

void reset_peak_tensor_bytes() { peak_bytes.store(live_bytes.load(std::memory_order_relaxed)); }

}  // namespace sift
