#include "models/recompute.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <mutex>

#include "models/autocast.h"

namespace sift {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Generator generator_for(const torch::Device& device) {
  if (device.is_cuda()) return at::globalContext().defaultGenerator(device);
  return at::detail::getDefaultCPUGenerator();
}

torch::Tensor get_rng(at::Generator g) {
  std::lock_guard<std::mutex> lock(g.mutex());
  return g.get_state();
}

void set_rng(at::Generator& g, const torch::Tensor& state) {
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_state(state);
}

// What backward needs besides the saved inputs. The autograd context keeps IValues only;
// a capsule carries this object.
struct RecomputeState : torch::CustomClassHolder {
  Block block;
  BlockShards* shards = nullptr;  // run.shard: parameters
  int64_t index = 0;
  std::vector<torch::Tensor> parameters;
  std::vector<bool> input_requires_grad;
  AutocastState autocast;
  // The first run's generator states: CPU always, plus the CUDA device's when inputs
  // live there (dropout on CUDA draws from it).
  torch::Tensor cpu_rng;
  torch::Device device{torch::kCPU};
  torch::Tensor device_rng;
};

// Sets the generators to the first run's states, and back to theirs on exit.
class RngReplay {
 public:
  explicit RngReplay(const RecomputeState& s) : device_(s.device) {
    auto cpu = at::detail::getDefaultCPUGenerator();
    cpu_ = get_rng(cpu);
    set_rng(cpu, s.cpu_rng);
    if (s.device_rng.defined()) {
      auto g = generator_for(device_);
      device_rng_ = get_rng(g);
      set_rng(g, s.device_rng);
    }
  }
  ~RngReplay() {
    auto cpu = at::detail::getDefaultCPUGenerator();
    set_rng(cpu, cpu_);
    if (device_rng_.defined()) {
      auto g = generator_for(device_);
      set_rng(g, device_rng_);
    }
  }
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;

 private:
  torch::Device device_;
  torch::Tensor cpu_, device_rng_;
};

// f() between the gathering and the freeing of the block's parameters (run.shard:
// parameters); f() alone otherwise.
template <class F>
auto gathered(BlockShards* shards, int64_t index, F f) {
  if (!shards) return f();
  shards->gather(index);
  auto result = f();
  shards->release(index);
  return result;
}

class RecomputeFunction : public torch::autograd::Function<RecomputeFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<RecomputeState> state,
                               at::TensorList inputs, at::TensorList parameters) {
    (void)parameters;  // inputs of the node, so that backward can return their gradients
    state->autocast = AutocastState::current();
    state->cpu_rng = get_rng(at::detail::getDefaultCPUGenerator());
    for (const auto& x : inputs) {
      if (x.is_cuda()) {
        state->device = x.device();
        state->device_rng = get_rng(generator_for(x.device()));
        break;
      }
    }
    for (const auto& x : inputs) state->input_requires_grad.push_back(x.requires_grad());
    ctx->save_for_backward(inputs.vec());
    ctx->saved_data["state"] = c10::IValue::make_capsule(state);
    torch::NoGradGuard no_grad;
    return gathered(state->shards, state->index, [&] { return state->block(inputs.vec()); });
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto holder = ctx->saved_data["state"].toCapsule();  // keeps the state alive
    auto* state = static_cast<RecomputeState*>(holder.get());
    const variable_list saved = ctx->get_saved_variables();
    std::vector<torch::Tensor> inputs, wrt;
    for (size_t i = 0; i < saved.size(); ++i) {
      inputs.push_back(saved[i].detach().requires_grad_(state->input_requires_grad[i]));
      if (state->input_requires_grad[i]) wrt.push_back(inputs.back());
    }
    for (const auto& p : state->parameters) wrt.push_back(p);
    variable_list grads = gathered(state->shards, state->index, [&] {
      torch::Tensor output;
      {
        RngReplay replay(*state);
        AutocastGuard autocast(state->autocast);
        torch::AutoGradMode grad_mode(true);
        output = state->block(inputs);
      }
      if (wrt.empty() || !output.requires_grad()) return variable_list(wrt.size());
      return torch::autograd::grad({output}, wrt, {grad_outputs[0]}, /*retain_graph=*/false,
                                   /*create_graph=*/false, /*allow_unused=*/true);
    });
    if (state->shards) {
      // The parameters' gradients go to their slices; the whole ones are never kept.
      const variable_list of_parameters(
          grads.end() - static_cast<int64_t>(state->parameters.size()), grads.end());
      state->shards->reduce_gradients(state->index, of_parameters);
      for (size_t i = grads.size() - state->parameters.size(); i < grads.size(); ++i)
        grads[i] = torch::Tensor();
    }
    // One gradient per forward argument: none for the state, then inputs, then parameters.
    variable_list result = {torch::Tensor()};
    size_t next = 0;
    for (size_t i = 0; i < saved.size(); ++i) {
      result.push_back(state->input_requires_grad[i] ? grads[next++] : torch::Tensor());
    }
    for (size_t i = 0; i < state->parameters.size(); ++i) result.push_back(grads[next++]);
    return result;
  }
};

}  // namespace

torch::Tensor recompute(const Block& block, const std::vector<torch::Tensor>& inputs,
                        const std::vector<torch::Tensor>& parameters, BlockShards* shards,
                        int64_t index) {
  auto state = c10::make_intrusive<RecomputeState>();
  state->block = block;
  state->shards = shards;
  state->index = index;
  for (const auto& p : parameters) {
    if (p.requires_grad()) state->parameters.push_back(p);  // frozen ones get no gradient
  }
  const std::vector<torch::Tensor> trainable = state->parameters;
  return RecomputeFunction::apply(state, at::TensorList(inputs), at::TensorList(trainable));
}

torch::Tensor run_block(const RecomputePolicy& policy, int64_t index, bool training,
                        const std::vector<torch::Tensor>& parameters, const Block& block,
                        const std::vector<torch::Tensor>& inputs) {
  if (!training || !(policy.shards || policy.applies(index)) || !torch::GradMode::is_enabled()) {
    return gathered(policy.shards, index, [&] { return block(inputs); });
  }
  return recompute(block, inputs, parameters, policy.shards, index);
}

}  // namespace sift
