// Data-parallel training across processes on PyTorch's c10d: joining a process group
// from torchrun's environment (a TCPStore served by rank 0, Gloo on CPU, NCCL when this
// LibTorch has it), broadcasting parameters, averaging gradients in buckets, and the
// small collectives the trainer needs. c10d stays out of this header.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/enums.h"
#include "framework/train/base/distributed_options.h"
#include "framework/train/base/group.h"

namespace sift {

// The variables torchrun (and `sift launch`) set.
struct DistributedEnv {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int64_t master_port = 29500;
};

// From RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; nothing when WORLD_SIZE is
// unset or 1. A malformed or inconsistent variable is a sift::Error naming it.
std::optional<DistributedEnv> distributed_env_from_environment();

// What the ranks agreed before a micro-batch: whether any still has data, and how many
// examples they hold together.
struct BatchAgreement {
  bool any = false;
  int64_t examples = 0;
};

class Distributed : public Group {
 public:
  // A group of one: rank 0 of 1, every collective returns this process's own values and
  // nothing is connected. The trainer holds one of these instead of a null pointer, so
  // its loop has no single-process branches.
  Distributed();
  // Joins the group: rank 0 serves the TCPStore, every rank connects to it and builds the
  // process group. A port in use or a master that cannot be reached within the timeout
  // is a sift::Error saying so.
  Distributed(const DistributedEnv& env, const DistributedOptions& options);
  ~Distributed();
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  int64_t rank() const override;
  int64_t world_size() const override;

  // Rank 0's parameters and buffers, copied to every rank.
  void broadcast_parameters(torch::nn::Module& module);
  // Sums this rank's "I have a batch of n examples" over the ranks.
  BatchAgreement agree_on_batch(bool has_batch, int64_t examples);
  // Averages the gradients of the trainable parameters over the ranks. Dense ones go in
  // buckets of about bucket_mb; sparse ones (fastText's embeddings with plain SGD) are
  // coalesced and their rows all-gathered, then summed (never densified: a 2M-row table
  // would be hundreds of MB per step). A missing gradient counts as zero. `reduced`: the
  // parameters run.shard: parameters reduced in backward already, which are skipped.
  void average_gradients(torch::nn::Module& module, const std::vector<torch::Tensor>& reduced = {});
  // `flat`'s element-wise mean over the ranks, in place, as average_gradients computes it
  // (a sum, then a division by the world size); counted in gradient_seconds. Gloo 1.13
  // has no reduce-scatter: run.shard: parameters all-reduces a layer's gradient with this
  // and keeps its slice (N - 1)/N more traffic than a reduce-scatter would send.
  void average(torch::Tensor& flat);
  // Sums `t` over the ranks, in place (a tensor that each rank fills its own part of).
  void sum(torch::Tensor& t);
  // Element-wise sums over the ranks, in place.
  void sum(std::vector<double>& values) override;
  void sum(std::vector<int64_t>& values) override;
  // Rank 0's value of `flag` on every rank.
  bool primary_says(bool flag) override;
  // Every rank's bytes, in rank order, on every rank.
  std::vector<std::string> all_gather(const std::string& bytes) override;
  // Every rank's `mine` (1-D, the same size and dtype on every rank), in rank order, into
  // `out` (world_size x that size, flat). Gloo's all-gather: each rank sends its part
  // once, (N - 1)/N of out's bytes per rank, half an all-reduce's traffic.
  void all_gather_into(const torch::Tensor& mine, torch::Tensor& out);
  // Rank 0 publishes `bytes` under `key` in the store; the others wait for them (up to
  // the timeout; a dead rank 0 ends the wait at once, as the store lives in it).
  std::string share_from_primary(const std::string& key, const std::string& bytes);

  // Whether other processes take part (false for a group of one).
  bool is_group() const override { return impl_ != nullptr; }
  // "rank R at HOST (ADDRESS)": who a message names, as that rank introduced itself at
  // the rendezvous (its host name, and the address of GLOO_SOCKET_IFNAME or MASTER_ADDR).
  std::string who(int64_t rank) const;

  // Time spent in average_gradients so far and how many calls it made.
  double gradient_seconds() const;
  int64_t gradient_calls() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Joins a group when the environment describes one, else a group of one.
std::shared_ptr<Distributed> join_from_environment(const DistributedOptions& options);

}  // namespace sift
