// ProcessGroupGloo.hpp is empty unless this is defined (PyTorch's build defines it on
// the command line); defined here, after the shared precompiled header, which has no
// c10d in it.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include "framework/train/distributed.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <cstdlib>
#include <unordered_set>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <torch/version.h>

#include "core/error.h"

namespace sift {
namespace {

// LibTorch 2.0 made ProcessGroupGloo and ProcessGroupNCCL c10d::Backend subclasses (a
// ProcessGroup now dispatches to Backends); in 1.13 they are ProcessGroups. Both offer
// the collectives used here with the same signatures.
#if TORCH_VERSION_MAJOR >= 2
using GroupBackend = c10d::Backend;
#else
using GroupBackend = c10d::ProcessGroup;
#endif

using Clock = std::chrono::steady_clock;

int64_t env_int(const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi) {
    throw Error(fmt::format("environment variable {}='{}' is not a whole number in [{}, {}]",
                            name, v, lo, hi));
  }
  return x;
}

// The first line of a c10d/Gloo message: the rest is a C++ stack trace.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string message_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return first_line(c->what_without_backtrace());
  return first_line(e.what());
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// Parameters whose gradients are sparse: the weights of embeddings built sparse.
std::unordered_set<const void*> sparse_weights(torch::nn::Module& module) {
  std::unordered_set<const void*> out;
  for (const auto& m : module.modules()) {
    if (auto* bag = m->as<torch::nn::EmbeddingBag>()) {
      if (bag->options.sparse()) out.insert(bag->weight.unsafeGetTensorImpl());
    } else if (auto* emb = m->as<torch::nn::Embedding>()) {
      if (emb->options.sparse()) out.insert(emb->weight.unsafeGetTensorImpl());
    }
  }
  return out;
}

}  // namespace

std::optional<DistributedEnv> distributed_env_from_environment() {
  const int64_t world = env_int("WORLD_SIZE", 1, 1, 1 << 20);
  if (world == 1) return std::nullopt;
  DistributedEnv env;
  env.world_size = world;
  if (std::getenv("RANK") == nullptr) {
    throw Error(fmt::format("WORLD_SIZE is {} but RANK is not set (launch with `sift launch` "
                            "or torchrun, which set both)",
                            world));
  }
  env.rank = env_int("RANK", 0, 0, world - 1);
  env.local_rank = env_int("LOCAL_RANK", env.rank, 0, world - 1);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') {
    env.master_addr = addr;
  }
  env.master_port = env_int("MASTER_PORT", 29500, 1, 65535);
  return env;
}

struct Distributed::Impl {
  DistributedEnv env;
  DistributedOptions options;
  std::string backend;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<GroupBackend> group;
  std::unordered_set<const void*> sparse;
  bool sparse_known = false;
  double gradient_seconds = 0.0;
  int64_t gradient_calls = 0;

  // Runs a collective; a peer that died or timed out becomes one clear sift::Error.
  template <class F>
  void run(const char* what, F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      throw Error(fmt::format("distributed {} failed on rank {} of {}: {} (another rank stopped "
                              "or died, or did not answer within run.dist_timeout_seconds = {} s; "
                              "see its output)",
                              what, env.rank, env.world_size, message_of(e),
                              options.timeout.count() / 1000.0));
    }
  }

  void wait(c10::intrusive_ptr<c10d::Work> work) { work->wait(); }

  // NCCL takes only CUDA tensors: small CPU ones make a round trip.
  torch::Tensor for_backend(const torch::Tensor& t) const {
    return backend == "nccl" && !t.is_cuda() ? t.to(options.device) : t;
  }

  // One in-place collective on t; `start` issues it on the tensor list.
  template <class Start>
  void in_place(torch::Tensor& t, const char* what, Start start) {
    auto on = for_backend(t);
    run(what, [&] {
      std::vector<at::Tensor> v{on};
      wait(start(v));
    });
    if (!on.is_same(t)) t.copy_(on);
  }

  void all_reduce(torch::Tensor& t, const char* what) {
    in_place(t, what, [&](std::vector<at::Tensor>& v) { return group->allreduce(v); });
  }

  void broadcast(torch::Tensor& t, const char* what) {
    in_place(t, what, [&](std::vector<at::Tensor>& v) { return group->broadcast(v); });
  }

  // Every rank's rows (row counts may differ), in rank order. Built from two sums: each
  // rank fills its own slot of the counts, then its own slice of the rows (x + 0 is
  // exact). Gloo's all-gather failed here on tensors of different row counts.
  std::vector<torch::Tensor> all_gather_rows(const torch::Tensor& t, const char* what) {
    return all_gather_rows(t, row_counts(t.size(0), what), what);
  }

  // Every rank's row count, in rank order.
  std::vector<int64_t> row_counts(int64_t rows, const char* what) {
    auto counts = torch::zeros({env.world_size}, torch::kInt64);
    counts[env.rank] = rows;
    all_reduce(counts, what);
    return {counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + env.world_size};
  }

  // The same, when the counts are known (`n`: every rank's, in rank order).
  std::vector<torch::Tensor> all_gather_rows(const torch::Tensor& t, const std::vector<int64_t>& n,
                                             const char* what) {
    int64_t total = 0, offset = 0;
    for (int64_t r = 0; r < env.world_size; ++r) {
      if (r == env.rank) offset = total;
      total += n[static_cast<size_t>(r)];
    }
    auto shape = t.sizes().vec();
    shape[0] = total;
    auto rows = torch::zeros(shape, t.options());
    if (t.size(0) > 0) rows.narrow(0, offset, t.size(0)).copy_(t);
    if (total > 0) all_reduce(rows, what);
    std::vector<torch::Tensor> out;
    int64_t start = 0;
    for (int64_t r = 0; r < env.world_size; ++r) {
      out.push_back(rows.narrow(0, start, n[static_cast<size_t>(r)]));
      start += n[static_cast<size_t>(r)];
    }
    return out;
  }

  void connect();
  void average_dense(std::vector<torch::Tensor>& grads);
  torch::Tensor average_sparse(const torch::Tensor& param, const torch::Tensor& grad);
};

void Distributed::Impl::connect() {
  // A peer that closes its socket must give an error on write, not kill this process.
  std::signal(SIGPIPE, SIG_IGN);
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(env.master_port);
  o.isServer = env.rank == 0;
  o.numWorkers = static_cast<size_t>(env.world_size);
  o.waitWorkers = false;  // waited for below, so that a missing rank is not a bind error
  o.timeout = options.timeout;
  const std::string where = fmt::format("{}:{}", env.master_addr, env.master_port);
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
  } catch (const std::exception& e) {
    const std::string why = message_of(e);
    if (env.rank == 0) {
      throw Error(fmt::format("rank 0 cannot serve the rendezvous at {} (MASTER_ADDR, "
                              "MASTER_PORT): {}; is the port in use? pick another with "
                              "`sift launch --master-port` or MASTER_PORT",
                              where, why));
    }
    throw Error(fmt::format("rank {} cannot reach the master at {} (MASTER_ADDR, MASTER_PORT) "
                            "within run.dist_timeout_seconds = {} s: {}; is rank 0 running "
                            "and the address reachable from here?",
                            env.rank, where, options.timeout.count() / 1000.0, why));
  }
  run("rendezvous", [&] {
    store->waitForWorkers();  // every rank checks in; rank 0 waits for all
  });
  const bool cuda = options.device.is_cuda();
  backend = options.backend == "auto" ? (cuda ? "nccl" : "gloo") : options.backend;
#ifdef USE_C10D_NCCL
  if (backend == "nccl") {
    auto nccl = c10d::ProcessGroupNCCL::Options::create();
    nccl->timeout = options.timeout;
    run("setup", [&] {
      group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, nccl);
    });
    return;
  }
#else
  if (backend == "nccl" && options.backend == "auto") backend = "gloo";  // gloo handles CUDA tensors too
  if (backend == "nccl") {
    throw Error("run.dist_backend: nccl needs a LibTorch built with NCCL (a CUDA build); this "
                "one has none: use gloo");
  }
#endif
  auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
  run("setup", [&] {
    // GLOO_SOCKET_IFNAME picks the interface as in PyTorch; on one machine, loopback.
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (is_loopback(env.master_addr)) {
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, gloo);
  });
}

Distributed::Distributed(const DistributedEnv& env, const DistributedOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->env = env;
  impl_->options = options;
  impl_->connect();
}

Distributed::Distributed() = default;
Distributed::~Distributed() = default;

// A group of one (impl_ null) answers every call from its own values.
int64_t Distributed::rank() const { return impl_ ? impl_->env.rank : 0; }
int64_t Distributed::world_size() const { return impl_ ? impl_->env.world_size : 1; }
const std::string& Distributed::backend() const {
  static const std::string none = "none";
  return impl_ ? impl_->backend : none;
}
double Distributed::gradient_seconds() const { return impl_ ? impl_->gradient_seconds : 0.0; }
int64_t Distributed::gradient_calls() const { return impl_ ? impl_->gradient_calls : 0; }

void Distributed::broadcast_parameters(torch::nn::Module& module) {
  if (!impl_) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> tensors;
  for (auto& p : module.parameters()) tensors.push_back(p);
  for (auto& b : module.buffers()) tensors.push_back(b);
  for (auto& t : tensors) impl_->broadcast(t, "broadcast of the parameters");
}

BatchAgreement Distributed::agree_on_batch(bool has_batch, int64_t examples) {
  if (!impl_) return {has_batch, examples};
  auto t = torch::tensor({has_batch ? int64_t{1} : int64_t{0}, examples}, torch::kInt64);
  impl_->all_reduce(t, "agreement on the next batch");
  return {t[0].item<int64_t>() > 0, t[1].item<int64_t>()};
}

void Distributed::Impl::average_dense(std::vector<torch::Tensor>& grads) {
  const double bucket_bytes = std::max(options.bucket_mb, 1e-6) * 1024 * 1024;
  size_t begin = 0;
  while (begin < grads.size()) {
    // A bucket: consecutive gradients of one dtype, up to bucket_bytes (at least one).
    size_t end = begin;
    double bytes = 0;
    while (end < grads.size() && grads[end].scalar_type() == grads[begin].scalar_type() &&
           (end == begin || bytes + grads[end].nbytes() <= bucket_bytes)) {
      bytes += static_cast<double>(grads[end].nbytes());
      ++end;
    }
    std::vector<torch::Tensor> flat;
    for (size_t i = begin; i < end; ++i) flat.push_back(grads[i].reshape(-1));
    auto bucket = torch::cat(flat);
    all_reduce(bucket, "all-reduce of the gradients");
    bucket.div_(static_cast<double>(env.world_size));
    int64_t offset = 0;
    for (size_t i = begin; i < end; ++i) {
      const int64_t n = grads[i].numel();
      grads[i].copy_(bucket.narrow(0, offset, n).view_as(grads[i]));
      offset += n;
    }
    begin = end;
  }
}

torch::Tensor Distributed::Impl::average_sparse(const torch::Tensor& param,
                                                const torch::Tensor& grad) {
  torch::Tensor indices, values;
  // Rows of the table: one sparse dimension. A zeroed sparse gradient comes back from
  // zero_() with every dimension sparse and no entries: it is treated as missing.
  if (grad.defined() && grad._nnz() > 0) {
    const auto g = (grad.sparse_dim() == 1 ? grad : grad.to_dense().to_sparse(1)).coalesce();
    indices = g._indices().t().contiguous();  // rows first, to pad and gather by row
    values = g._values().contiguous();
  } else {
    indices = torch::zeros({0, 1}, torch::TensorOptions().dtype(torch::kInt64).device(param.device()));
    auto shape = param.sizes().vec();
    shape[0] = 0;
    values = torch::zeros(shape, param.options());
  }
  const char* what = "all-gather of sparse gradients";
  const auto counts = row_counts(indices.size(0), what);  // the same for the values
  const auto all_indices = all_gather_rows(indices, counts, what);
  const auto all_values = all_gather_rows(values, counts, what);
  // Concatenated in rank order on every rank, so every rank sums in the same order.
  auto summed = torch::sparse_coo_tensor(torch::cat(all_indices).t(), torch::cat(all_values),
                                         param.sizes(), param.options().layout(torch::kSparse))
                    .coalesce();
  return summed / static_cast<double>(env.world_size);
}

void Distributed::average_gradients(torch::nn::Module& module) {
  if (!impl_) return;
  const auto start = Clock::now();
  auto& impl = *impl_;
  if (!impl.sparse_known) {
    impl.sparse = sparse_weights(module);
    impl.sparse_known = true;
  }
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> dense;
  for (auto& p : module.parameters()) {
    if (!p.requires_grad()) continue;
    if (impl.sparse.count(p.unsafeGetTensorImpl())) {
      p.mutable_grad() = impl.average_sparse(p, p.grad());
      continue;
    }
    // A rank that had no batch, or a parameter this batch did not reach: zero.
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    dense.push_back(p.grad());
  }
  impl.average_dense(dense);
  impl.gradient_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  ++impl.gradient_calls;
}

void Distributed::sum(std::vector<double>& values) {
  if (!impl_) return;
  auto t = torch::tensor(values, torch::kFloat64);
  impl_->all_reduce(t, "sum");
  std::memcpy(values.data(), t.data_ptr<double>(), values.size() * sizeof(double));
}

void Distributed::sum(std::vector<int64_t>& values) {
  if (!impl_) return;
  auto t = torch::tensor(values, torch::kInt64);
  impl_->all_reduce(t, "sum");
  std::memcpy(values.data(), t.data_ptr<int64_t>(), values.size() * sizeof(int64_t));
}

bool Distributed::primary_says(bool flag) {
  if (!impl_) return flag;
  auto t = torch::tensor({flag ? int64_t{1} : int64_t{0}}, torch::kInt64);
  impl_->broadcast(t, "broadcast");
  return t.item<int64_t>() != 0;
}

std::vector<std::string> Distributed::all_gather(const std::string& bytes) {
  if (!impl_) return {bytes};
  auto t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  std::vector<std::string> out;
  for (const auto& g : impl_->all_gather_rows(t, "all-gather")) {
    out.emplace_back(static_cast<const char*>(g.data_ptr()), static_cast<size_t>(g.numel()));
  }
  return out;
}

void Distributed::all_gather_into(const torch::Tensor& mine, torch::Tensor& out) {
  if (!impl_) {
    out.copy_(mine);
    return;
  }
  auto& impl = *impl_;
  const int64_t n = mine.numel();
  auto in = impl.for_backend(mine);
  auto on = impl.for_backend(out);
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int64_t r = 0; r < impl.env.world_size; ++r) outputs[0].push_back(on.narrow(0, r * n, n));
  impl.run("all-gather of the shards", [&] {
    std::vector<at::Tensor> inputs{in};
    impl.wait(impl.group->allgather(outputs, inputs));
  });
  if (!on.is_same(out)) out.copy_(on);
}

std::string Distributed::share_from_primary(const std::string& key, const std::string& bytes) {
  if (!impl_) return bytes;
  const std::string full = "sift/" + key;
  std::string out = bytes;
  impl_->run("exchange through the store", [&] {
    if (is_primary()) {
      impl_->store->set(full, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    } else {
      const auto v = impl_->store->get(full);  // waits up to the store's timeout
      out.assign(v.begin(), v.end());
    }
  });
  return out;
}

std::shared_ptr<Distributed> join_from_environment(const DistributedOptions& options) {
  const auto env = distributed_env_from_environment();
  if (!env) return std::make_shared<Distributed>();
  return std::make_shared<Distributed>(*env, options);
}

}  // namespace sift
