// Adadelta (Zeiler 2012), the optimizer of Kim's TextCNN, which LibTorch's C++ API lacks:
// the same update as torch.optim.Adadelta, with state that checkpoints save and restore.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace sift {

struct AdadeltaOptions : public torch::optim::OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's options
  TORCH_ARG(double, lr) = 1.0;
  TORCH_ARG(double, rho) = 0.9;
  TORCH_ARG(double, eps) = 1e-6;
  TORCH_ARG(double, weight_decay) = 0.0;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

struct AdadeltaParamState : public torch::optim::OptimizerCloneableParamState<AdadeltaParamState> {
  TORCH_ARG(torch::Tensor, square_avg);  // running mean of squared gradients
  TORCH_ARG(torch::Tensor, acc_delta);   // running mean of squared updates
  TORCH_ARG(int64_t, step) = 0;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

class Adadelta : public torch::optim::Optimizer {
 public:
  // Groups without options of their own take `defaults`.
  Adadelta(std::vector<torch::optim::OptimizerParamGroup> groups, AdadeltaOptions defaults);
  Adadelta(std::vector<torch::Tensor> params, AdadeltaOptions defaults)
      : Adadelta(std::vector<torch::optim::OptimizerParamGroup>{torch::optim::OptimizerParamGroup(
                     std::move(params))},
                 std::move(defaults)) {}
  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

}  // namespace sift
