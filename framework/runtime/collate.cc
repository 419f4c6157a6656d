#include "framework/runtime/collate.h"

#include <algorithm>
#include <vector>

namespace sift {

ModelInput to_input(const RawBatch& batch, InputKind kind, torch::Device device) {
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  ModelInput input;
  if (kind == InputKind::sequence) {
    const int64_t n = batch.size();
    std::vector<int64_t> lengths(n);
    int64_t longest = 1;
    for (int64_t i = 0; i < n; ++i) {
      lengths[i] = std::max<int64_t>(batch.ids_end(i) - batch.offsets[i], 1);
      longest = std::max(longest, lengths[i]);
    }
    auto ids = torch::zeros({n, longest}, opts);
    int64_t* out = ids.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      std::copy(batch.ids.begin() + batch.offsets[i], batch.ids.begin() + batch.ids_end(i),
                out + i * longest);
    }
    input.ids = ids.to(device);
    input.lengths = torch::tensor(lengths, opts);  // kept on the CPU, as packing wants
    return input;
  }
  input.ids = torch::from_blob(const_cast<int64_t*>(batch.ids.data()),
                               {static_cast<int64_t>(batch.ids.size())}, opts)
                  .to(device, /*non_blocking=*/false, /*copy=*/true);
  input.offsets = torch::from_blob(const_cast<int64_t*>(batch.offsets.data()),
                                   {static_cast<int64_t>(batch.offsets.size())}, opts)
                      .to(device, false, true);
  return input;
}

}  // namespace sift
