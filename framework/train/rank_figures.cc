#include "framework/train/rank_figures.h"

#include <fmt/format.h>

#include "framework/train/base/phases.h"
#include "framework/train/optimization.h"

namespace sift {
namespace {

int64_t bytes_of(const std::vector<torch::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors) {
    if (!t.defined()) continue;
    // A sparse gradient (fastText's tables under plain SGD): its rows and their indices.
    bytes += static_cast<int64_t>(t.is_sparse() ? t._indices().nbytes() + t._values().nbytes()
                                                : t.nbytes());
  }
  return bytes;
}

nlohmann::json my_figures(Run& run) {
  const auto params = run.model->parameters();
  const auto steps = trainable(params);
  std::vector<torch::Tensor> grads;
  int64_t elements = 0;
  for (const auto& p : steps) {
    grads.push_back(p.grad());
    elements += p.numel();
  }
  const bool sharded = run.shards != nullptr;
  const LayerShards* layers = run.layers.get();
  // run.shard: parameters: measured from the storages (layer_shards.h); else all of them.
  const int64_t weights = layers ? layers->between_steps_bytes() : bytes_of(params);
  // Reduced as a whole after the backward (no reduce-scatter inside it here); under
  // run.shard: parameters each layer's in its backward: the rest's, the slices', and one
  // layer's whole gradient while it is reduced.
  const int64_t gradient_peak = layers ? bytes_of(steps) - bytes_of(layers->sharded_parameters()) +
                                             run.shards->kept_apart_bytes() +
                                             layers->largest_layer_bytes()
                                       : bytes_of(steps);
  const int64_t state = sharded ? run.shards->state_bytes()
                                : optimizer_state_bytes(run.plan.train.optimizer, *run.optimizer);
  return {{"rank", run.dist->rank()},
          {"weights_bytes", weights},
          {"weights_peak_bytes", layers ? layers->peak_bytes() : weights},
          {"gradient_bytes", bytes_of(grads)},
          {"gradient_peak_bytes", gradient_peak},
          {"optimizer_state_bytes", state},
          // run.shard: its slices and the most of the whole state a save held at once.
          {"optimizer_state_peak_bytes", sharded ? state + run.shards->save_peak_bytes() : state},
          {"slice_elements", sharded ? run.shards->slice_elements() : elements},
          {"peak_rss_bytes", peak_rss_bytes()},
          {"allreduce_seconds", run.dist->gradient_seconds()},
          {"allgather_seconds", sharded ? run.shards->gather_seconds() : 0.0}};
}

std::string mib(const nlohmann::json& j, const char* key) {
  return fmt::format("{:.2f} MiB", static_cast<double>(j[key].get<int64_t>()) / (1 << 20));
}

}  // namespace

nlohmann::json rank_figures(Run& run) {
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& bytes : run.dist->all_gather(my_figures(run).dump())) {
    all.push_back(nlohmann::json::parse(bytes));
  }
  return all;
}

std::string ranks_text(const nlohmann::json& ranks) {
  std::string text;
  for (const auto& r : ranks) {
    text += fmt::format(
        "{}rank {}: weights {} (peak {}), gradients {} (peak {}), optimizer state {} (peak {}), "
        "peak RSS {}; all-reduce {:.2f} s, all-gather {:.2f} s",
        text.empty() ? "" : "\n", r["rank"].get<int64_t>(), mib(r, "weights_bytes"),
        mib(r, "weights_peak_bytes"), mib(r, "gradient_bytes"), mib(r, "gradient_peak_bytes"),
        mib(r, "optimizer_state_bytes"), mib(r, "optimizer_state_peak_bytes"),
        mib(r, "peak_rss_bytes"), r["allreduce_seconds"].get<double>(),
        r["allgather_seconds"].get<double>());
  }
  return text;
}

}  // namespace sift
