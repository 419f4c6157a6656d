// Tensors of zeros that take memory only where they are written: a private anonymous
// mapping of their own (reading an untouched page maps the kernel's shared zero page), and
// giving written pages back. run.shard gathers the whole optimizer state into such tensors
// for a save, one tensor at a time (optimizer_stream, checkpoint.h), so that rank 0 holds
// one tensor's state at once, not the whole state (750 MB of Adam at 49M parameters).
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace sift {

// CPU, contiguous, of `options`' dtype; unmapped when its storage goes.
torch::Tensor untouched_zeros(at::IntArrayRef sizes, const torch::TensorOptions& options);
// Gives the pages `t` (an untouched_zeros tensor) holds back: it reads as zeros again.
void give_back_pages(const torch::Tensor& t);
// The bytes of `t`'s pages (an untouched_zeros tensor) that hold memory now (mincore).
int64_t resident_bytes(const torch::Tensor& t);

}  // namespace sift
