// ProcessGroupGloo.hpp is empty unless this is defined (PyTorch's build defines it on
// the command line); defined here, after the shared precompiled header, which has no
// c10d in it.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include "framework/train/distributed.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <unordered_set>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <torch/version.h>

#include "core/error.h"
#include "framework/runtime/device.h"

namespace sift {

// Who a rank is, as it says at the rendezvous (a member of Distributed::Impl).
struct RankNode {
  std::string host;
  std::string address;  // "" when unknown
};

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
    throw Error(fmt::format("environment variable {}='{}' is not a whole number in [{}, {}]", name,
                            v, lo, hi));
  }
  return x;
}

// The first line of a c10d/Gloo message: the rest is a C++ stack trace.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string message_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e))
    return first_line(c->what_without_backtrace());
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

// The IPv4 address of interface `name`, or "".
std::string interface_address(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* a = list; a != nullptr && out.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || name != a->ifa_name)
      continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)) != nullptr) out = text;
  }
  ::freeifaddrs(list);
  return out;
}

// This process's host name, and the address the others reach it at as far as it knows:
// GLOO_SOCKET_IFNAME's, else MASTER_ADDR for rank 0.
RankNode this_node(const DistributedEnv& env) {
  char host[256] = {};
  RankNode n;
  n.host = ::gethostname(host, sizeof(host) - 1) == 0 ? host : "?";
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    n.address = interface_address(ifname);
  }
  if (n.address.empty() && env.rank == 0) n.address = env.master_addr;
  return n;
}

std::string describe_node(int64_t rank, const RankNode& n) {
  return n.address.empty() ? fmt::format("rank {} at {}", rank, n.host)
                           : fmt::format("rank {} at {} ({})", rank, n.host, n.address);
}

// "key=value" lines as a map.
std::map<std::string, std::string> option_lines(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// The first option whose value differs between two ranks: "key is X there and Y here".
std::string first_difference(const std::string& theirs, const std::string& mine) {
  const auto a = option_lines(theirs), b = option_lines(mine);
  for (const auto& [key, value] : b) {
    const auto it = a.find(key);
    const std::string other = it == a.end() ? "(not an option there)" : it->second;
    if (other != value) return fmt::format("{} is {} there and {} here", key, other, value);
  }
  for (const auto& [key, value] : a) {
    if (!b.count(key)) return fmt::format("{} is {} there and not an option here", key, value);
  }
  return "";
}

std::string node_key(int64_t rank) { return fmt::format("sift/node/{}", rank); }

// How many other ranks have read rank 0's hello: rank 0 hosts the store and, before it
// refuses a peer, waits for them, so that each refused rank reads why rather than a
// broken pipe (CI, stop 49: rank 1 lost that race in 2 of 13 multihost tests).
const char* const kRank0Read = "sift/node/0/read";

}  // namespace

std::optional<DistributedEnv> distributed_env_from_environment() {
  const int64_t world = env_int("WORLD_SIZE", 1, 1, 1 << 20);
  if (world == 1) return std::nullopt;
  DistributedEnv env;
  env.world_size = world;
  if (std::getenv("RANK") == nullptr) {
    throw Error(
        fmt::format("WORLD_SIZE is {} but RANK is not set (launch with `sift launch` "
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
  torch::Device device{torch::kCPU};  // options.device's
  std::string backend;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<GroupBackend> group;
  std::vector<RankNode> nodes;  // every rank's, from the rendezvous (this one's before it)
  std::unordered_set<const void*> sparse;
  bool sparse_known = false;
  double gradient_seconds = 0.0;
  int64_t gradient_calls = 0;

  std::string who(int64_t rank) const {
    return rank < static_cast<int64_t>(nodes.size()) ? describe_node(rank, nodes[rank])
                                                     : fmt::format("rank {}", rank);
  }

  // The ranks this one waited for: the one whose address the message names, else all
  // the others (at most four named).
  std::string waited_for(const std::string& message) const {
    for (size_t r = 0; r < nodes.size(); ++r) {
      const std::string& a = nodes[r].address;
      if (static_cast<int64_t>(r) != env.rank && !a.empty() &&
          message.find("[" + a + "]") != std::string::npos) {
        return who(static_cast<int64_t>(r));
      }
    }
    std::vector<std::string> others;
    for (int64_t r = 0; r < env.world_size && others.size() < 4; ++r) {
      if (r != env.rank) others.push_back(who(r));
    }
    const bool more = env.world_size - 1 > static_cast<int64_t>(others.size());
    return fmt::format("{}{}", fmt::join(others, ", "), more ? ", ..." : "");
  }

  // Runs a collective; a peer that died or timed out becomes one clear sift::Error that
  // names this rank's node and the ranks it waited for.
  template <class F>
  void run(const char* what, F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      const std::string why = message_of(e);
      throw Error(
          fmt::format("distributed {} failed on {} of {}, waiting for {}: {} (another "
                      "rank stopped or died, its link went down, or it did not answer "
                      "within run.dist_timeout_seconds = {} s; see its output)",
                      what, who(env.rank), env.world_size, waited_for(why), why,
                      options.timeout.count() / 1000.0));
    }
  }

  void wait(c10::intrusive_ptr<c10d::Work> work) { work->wait(); }

  // NCCL takes only CUDA tensors: small CPU ones make a round trip.
  torch::Tensor for_backend(const torch::Tensor& t) const {
    return backend == "nccl" && !t.is_cuda() ? t.to(device) : t;
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

  // Every rank's row count, in rank order.
  std::vector<int64_t> row_counts(int64_t rows, const char* what) {
    auto counts = torch::zeros({env.world_size}, torch::kInt64);
    counts[env.rank] = rows;
    all_reduce(counts, what);
    return {counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + env.world_size};
  }

  // Every rank's rows (`n`: every rank's row count, in rank order; row_counts), in rank
  // order. Built from two sums: each rank fills its own slot of the counts, then its own
  // slice of the rows (x + 0 is exact). Gloo's all-gather failed here on tensors of
  // different row counts.
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
  void introduce();
  void check_peer(int64_t rank, const nlohmann::json& hello) const;
  void let_peers_read_rank0(Clock::time_point deadline);
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
  nodes.assign(static_cast<size_t>(env.world_size), RankNode{});
  nodes[static_cast<size_t>(env.rank)] = this_node(env);
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
  } catch (const std::exception& e) {
    const std::string why = message_of(e);
    if (env.rank == 0) {
      throw Error(
          fmt::format("{} cannot serve the rendezvous at {} (MASTER_ADDR, "
                      "MASTER_PORT): {}; is the port in use? pick another with "
                      "`sift launch --master-port` or MASTER_PORT",
                      who(0), where, why));
    }
    throw Error(
        fmt::format("{} cannot reach the master at {} (MASTER_ADDR, MASTER_PORT) "
                    "within run.dist_timeout_seconds = {} s: {}; is rank 0 running "
                    "and the address reachable from here?",
                    who(env.rank), where, options.timeout.count() / 1000.0, why));
  }
  introduce();
  const bool cuda = device.is_cuda();
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
  if (backend == "nccl" && options.backend == "auto")
    backend = "gloo";  // gloo handles CUDA tensors too
  if (backend == "nccl") {
    throw Error(
        "run.dist_backend: nccl needs a LibTorch built with NCCL (a CUDA build); this "
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

// Every rank publishes who it is, its world size and its options, then reads every other
// rank's in rank order, so that a rank of another world size or config is refused as soon
// as the first rank it differs from arrives, and a rank that never comes is named.
void Distributed::Impl::introduce() {
  const RankNode& me = nodes[static_cast<size_t>(env.rank)];
  const nlohmann::json hello{{"host", me.host},
                             {"address", me.address},
                             {"world_size", env.world_size},
                             {"options", options.agreed_options}};
  const std::string bytes = hello.dump();
  run("rendezvous",
      [&] { store->set(node_key(env.rank), std::vector<uint8_t>(bytes.begin(), bytes.end())); });
  const auto deadline = Clock::now() + options.timeout;
  for (int64_t r = 0; r < env.world_size; ++r) {
    if (r == env.rank) continue;
    bool arrived = false;
    // Polled: a timed-out TCPStore::wait leaves its answer on the socket.
    while (true) {
      run("rendezvous", [&] { arrived = store->check({node_key(r)}); });
      if (arrived || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!arrived) {
      std::vector<int64_t> missing;
      for (int64_t m = r; m < env.world_size; ++m) {
        bool here = m == env.rank;
        if (!here) run("rendezvous", [&] { here = store->check({node_key(m)}); });
        if (!here) missing.push_back(m);
      }
      throw Error(fmt::format(
          "distributed rendezvous at {}:{} failed on {} of {}: rank{} {} did not arrive within "
          "run.dist_timeout_seconds = {} s (started? with WORLD_SIZE={}, MASTER_ADDR and "
          "MASTER_PORT naming rank 0, and able to reach it?)",
          env.master_addr, env.master_port, who(env.rank), env.world_size,
          missing.size() == 1 ? "" : "s", fmt::join(missing, ", "),
          options.timeout.count() / 1000.0, env.world_size));
    }
    std::vector<uint8_t> got;
    run("rendezvous", [&] { got = store->get(node_key(r)); });
    if (r == 0) run("rendezvous", [&] { store->add(kRank0Read, 1); });
    const auto theirs = nlohmann::json::parse(std::string(got.begin(), got.end()));
    nodes[static_cast<size_t>(r)] = {theirs.at("host").get<std::string>(),
                                     theirs.at("address").get<std::string>()};
    try {
      check_peer(r, theirs);
    } catch (const Error&) {
      if (env.rank == 0) let_peers_read_rank0(deadline);
      throw;
    }
  }
}

// Waits (at most until `deadline`) until every rank that has published its hello has read
// rank 0's; a failure of the store here is left to the refusal that follows.
void Distributed::Impl::let_peers_read_rank0(Clock::time_point deadline) {
  try {
    while (Clock::now() < deadline) {
      int64_t arrived = 0;
      for (int64_t r = 1; r < env.world_size; ++r) arrived += store->check({node_key(r)}) ? 1 : 0;
      if (store->add(kRank0Read, 0) >= arrived) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const std::exception&) {
  }
}

// Refuses a rank of another world size or config, naming both ranks' nodes.
void Distributed::Impl::check_peer(int64_t rank, const nlohmann::json& hello) const {
  const int64_t world = hello.at("world_size").get<int64_t>();
  if (world != env.world_size) {
    throw UsageError(
        fmt::format("distributed rendezvous: {} was started with WORLD_SIZE={} and {} "
                    "with WORLD_SIZE={}: start every rank with the same WORLD_SIZE",
                    who(rank), world, who(env.rank), env.world_size));
  }
  const std::string why =
      first_difference(hello.at("options").get<std::string>(), options.agreed_options);
  if (!why.empty()) {
    throw UsageError(
        fmt::format("distributed rendezvous: {} trains another config than {}: {}; every "
                    "rank must train the same config (only run.threads, run.device, "
                    "data.workers and run.dist_timeout_seconds may differ)",
                    who(rank), who(env.rank), why));
  }
}

Distributed::Distributed(const DistributedEnv& env, const DistributedOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->env = env;
  impl_->options = options;
  impl_->device = parse_device(options.device);
  impl_->connect();
}

Distributed::Distributed() = default;
Distributed::~Distributed() = default;

// A group of one (impl_ null) answers every call from its own values.
int64_t Distributed::rank() const { return impl_ ? impl_->env.rank : 0; }
int64_t Distributed::world_size() const { return impl_ ? impl_->env.world_size : 1; }
double Distributed::gradient_seconds() const { return impl_ ? impl_->gradient_seconds : 0.0; }
int64_t Distributed::gradient_calls() const { return impl_ ? impl_->gradient_calls : 0; }
std::string Distributed::who(int64_t rank) const {
  return impl_ ? impl_->who(rank) : fmt::format("rank {}", rank);
}

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
    indices =
        torch::zeros({0, 1}, torch::TensorOptions().dtype(torch::kInt64).device(param.device()));
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

void Distributed::average_gradients(torch::nn::Module& module,
                                    const std::vector<torch::Tensor>& reduced) {
  if (!impl_) return;
  const auto start = Clock::now();
  auto& impl = *impl_;
  if (!impl.sparse_known) {
    impl.sparse = sparse_weights(module);
    impl.sparse_known = true;
  }
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> dense;
  std::unordered_set<const void*> skipped;
  for (const auto& p : reduced) skipped.insert(p.unsafeGetTensorImpl());
  for (auto& p : module.parameters()) {
    if (!p.requires_grad() || skipped.count(p.unsafeGetTensorImpl())) continue;
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

void Distributed::average(torch::Tensor& flat) {
  if (!impl_) return;
  const auto start = Clock::now();
  impl_->all_reduce(flat, "all-reduce of the gradients");
  flat.div_(static_cast<double>(impl_->env.world_size));
  impl_->gradient_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  ++impl_->gradient_calls;
}

void Distributed::sum(torch::Tensor& t) {
  if (impl_) impl_->all_reduce(t, "sum");
}

namespace {

// The values summed over the ranks through a tensor of their type (torch::tensor of
// doubles would be float32 without it).
template <class T>
void sum_values(Distributed& dist, std::vector<T>& values) {
  torch::Tensor t = torch::tensor(values, c10::CppTypeToScalarType<T>::value);
  dist.sum(t);
  std::memcpy(values.data(), t.data_ptr<T>(), values.size() * sizeof(T));
}

}  // namespace

void Distributed::sum(std::vector<double>& values) {
  if (impl_) sum_values(*this, values);
}
void Distributed::sum(std::vector<int64_t>& values) {
  if (impl_) sum_values(*this, values);
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
  for (const auto& g :
       impl_->all_gather_rows(t, impl_->row_counts(t.size(0), "all-gather"), "all-gather")) {
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
