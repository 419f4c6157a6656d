// What every path says of a diverging run (train.on_nonfinite): the LibTorch guard
// (nonfinite.h), Hogwild threads and the torch-free trainer alike.
#pragma once

#include <cstdint>
#include <string>

namespace sift {

// skip_batch gives up after this many skipped batches in a row: by then the weights or
// the learning rate are the trouble, not one bad batch, and every later batch would be
// skipped as well, training nothing while looking busy.
constexpr int64_t kMaxSkippedBatchesInARow = 100;

// The advice the guard's errors end with.
std::string nonfinite_advice();

}  // namespace sift
