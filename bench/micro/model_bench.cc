// Google Benchmark of every model in the registry (models/registry.cc): forward,
// forward + backward, a full optimizer step, and inference (eval mode, no autograd), at
// the sizes and optimizers of the project's configs, plus the RawBatch -> tensor
// hand-off (to_input) for both input kinds. Each reports examples/s (kIsRate).
//
// Arguments of every model benchmark: {variant, batch, precision, checkpointing}.
// `precision` is 0 (fp32) or 1 (bf16 through CPU autocast); `checkpointing` 1 recomputes
// every block's activations in backward (train.gradient_checkpointing: all; not for the fastText
// model, which has no blocks).
//
// Inputs are token ids drawn from a fixed seed: sequence lengths uniform in [20, 70]
// (AG News titles + descriptions average ~45 words), ids uniform over a 30k vocabulary.
// The cost of these models does not depend on which ids they see (the fastText model
// adds hashed bigram ids, one per word pair, over its 2M buckets).
//
//   build/sift-model-bench --benchmark_min_time=0.2         # everything, fp32 and bf16
//   build/sift-model-bench --benchmark_filter='/precision:0'
//       --benchmark_out=bench/results/model.json --benchmark_out_format=json
// Threads: $SIFT_BENCH_THREADS (default 1: LibTorch's OpenMP pool spin-waits on a shared
// 2-core machine, bench/README.md).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/keep_freed_memory.h"
#include "datasets/batch.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/model_bundle.h"
#include "framework/train/optimization.h"
#include "framework/train/precision.h"
#include "models/autocast.h"
#include "models/model.h"
#include "models/recompute.h"

namespace {

using sift::ModelConfig;
using sift::TrainConfig;

constexpr int64_t kVocab = 30000;
constexpr int64_t kClasses = 4;

// One named model variant: its model.* and train.* settings, as in configs/.
struct Variant {
  const char* label;
  ModelConfig model;
  TrainConfig train;
};

TrainConfig optimizer(sift::OptimizerType type, double lr, double weight_decay = 0.0) {
  TrainConfig t;
  t.optimizer.type = type;
  t.optimizer.lr = lr;
  t.optimizer.weight_decay = weight_decay;
  return t;
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    ModelConfig m;
    m.type = "fasttext";  // configs/ag_news.yaml
    m.dim = 10;
    m.ngrams = 2;
    m.buckets = 2000000;
    v.push_back({"fasttext", m, optimizer(sift::OptimizerType::sgd, 0.5)});
    m = ModelConfig();
    m.type = "textcnn";  // configs/trec_textcnn.yaml
    m.dim = 300;
    m.filters = 100;
    v.push_back({"textcnn", m, optimizer(sift::OptimizerType::adam, 1e-3)});
    m = ModelConfig();
    m.type = "rnn";  // configs/sst2_glue_bilstm.yaml
    m.dim = 300;
    m.hidden = 128;
    m.cell = "lstm";
    v.push_back({"bilstm", m, optimizer(sift::OptimizerType::adam, 1e-3)});
    m.cell = "gru";
    v.push_back({"bigru", m, optimizer(sift::OptimizerType::adam, 1e-3)});
    m = ModelConfig();
    m.type = "transformer";  // configs/ag_news_transformer.yaml
    m.dim = 128;
    m.layers = 2;
    m.heads = 4;
    m.ff_dim = 256;
    m.positions = "sinusoidal";
    m.max_positions = 128;
    m.pooling = "mean";
    m.dropout = 0.1;
    v.push_back({"transformer", m, optimizer(sift::OptimizerType::adamw, 5e-4, 0.01)});
    return v;
  }();
  return all;
}

void apply_threads() {
  const char* env = std::getenv("SIFT_BENCH_THREADS");
  const int threads = env != nullptr && *env != '\0' ? std::atoi(env) : 1;
  sift::apply_threads(threads);
}

// A batch of `size` texts of random lengths, as the data pipeline hands it over.
sift::RawBatch random_batch(int64_t size, bool bag, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> length(20, 70), word(2, kVocab - 1),
      bucket(kVocab, kVocab + 2000000 - 1), label(0, kClasses - 1);
  sift::RawBatch b;
  for (int64_t i = 0; i < size; ++i) {
    b.offsets.push_back(static_cast<int64_t>(b.ids.size()));
    const int64_t n = length(rng);
    for (int64_t k = 0; k < n; ++k) b.ids.push_back(word(rng));
    if (bag) {
      for (int64_t k = 1; k < n; ++k) b.ids.push_back(bucket(rng));  // one bigram per pair
    }
    b.labels.push_back(label(rng));
  }
  return b;
}

// bf16 autocast on the CPU for the scope (the trainer's guard); fp32 does nothing.
class PrecisionScope {
 public:
  explicit PrecisionScope(int64_t precision)
      : guard_(precision == 1 ? sift::Precision::bf16 : sift::Precision::fp32, torch::kCPU) {}

 private:
  sift::AutocastGuard guard_;
};

// The model, its optimizer and one input batch, built from a benchmark's arguments.
struct ModelCase {
  explicit ModelCase(const benchmark::State& state)
      : variant(variants().at(static_cast<size_t>(state.range(0)))),
        batch_size(state.range(1)),
        precision(state.range(2)) {
    apply_threads();
    torch::manual_seed(1);
    const sift::ModelSpec& spec = sift::find_model(variant.model.type);
    kind = spec.input;
    sift::ModelShape shape;
    const bool bag = kind == sift::InputKind::bag;
    shape.num_ids = kVocab + (bag ? variant.model.buckets : 0);
    shape.num_classes = kClasses;
    // As the trainer does.
    shape.sparse_gradients = variant.train.optimizer.type == sift::OptimizerType::sgd;
    model = spec.create(variant.model, shape);
    if (state.range(3) == 1) {
      model->set_recompute(sift::recompute_policy(sift::GradientCheckpointing::all, 1));
    }
    raw = random_batch(batch_size, bag, 42);
    input = sift::to_input(raw, kind, torch::kCPU);
    labels = torch::tensor(raw.labels, torch::kInt64);
    opt = sift::create_optimizer(variant.train.optimizer, model->parameters());
  }

  torch::Tensor loss() {
    return torch::nn::functional::cross_entropy(model->forward(input).to(torch::kFloat32), labels);
  }

  const Variant& variant;
  int64_t batch_size;
  int64_t precision;
  sift::InputKind kind = sift::InputKind::bag;
  sift::Classifier model;
  sift::RawBatch raw;
  sift::ModelInput input;
  torch::Tensor labels;
  std::unique_ptr<torch::optim::Optimizer> opt;
};

void finish(benchmark::State& state, const ModelCase& c) {
  const auto examples = static_cast<double>(state.iterations() * c.batch_size);
  state.counters["examples_per_s"] = benchmark::Counter(examples, benchmark::Counter::kIsRate);
  state.SetItemsProcessed(state.iterations() * c.batch_size);
  state.SetLabel(c.variant.label);
}

// Training-mode forward with autograd recording (what a training step pays before backward).
void BM_Forward(benchmark::State& state) {
  ModelCase c(state);
  c.model->train();
  PrecisionScope precision(c.precision);
  for (auto _ : state) benchmark::DoNotOptimize(c.loss());
  finish(state, c);
}

void BM_ForwardBackward(benchmark::State& state) {
  ModelCase c(state);
  c.model->train();
  PrecisionScope precision(c.precision);
  for (auto _ : state) {
    c.loss().backward();
    c.opt->zero_grad();
  }
  finish(state, c);
}

// Forward, backward, the config's optimizer update and zero_grad: one training step.
void BM_TrainStep(benchmark::State& state) {
  ModelCase c(state);
  c.model->train();
  for (auto _ : state) {
    {
      PrecisionScope precision(c.precision);  // autocast covers forward only, as in PyTorch
      c.loss().backward();
    }
    c.opt->step();
    c.opt->zero_grad();
  }
  finish(state, c);
}

void BM_Inference(benchmark::State& state) {
  ModelCase c(state);
  c.model->eval();
  torch::InferenceMode no_autograd;
  PrecisionScope precision(c.precision);
  for (auto _ : state) benchmark::DoNotOptimize(c.model->forward(c.input));
  finish(state, c);
}

// Batching on the tensor side: a RawBatch into the model's input tensors (padding for
// sequences, flat ids + offsets for bags). Args: {bag, batch}.
void BM_ToInput(benchmark::State& state) {
  const bool bag = state.range(0) == 1;
  const auto raw = random_batch(state.range(1), bag, 7);
  const auto kind = bag ? sift::InputKind::bag : sift::InputKind::sequence;
  for (auto _ : state) benchmark::DoNotOptimize(sift::to_input(raw, kind, torch::kCPU));
  state.counters["examples_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * state.range(1)), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

// {variant, batch, precision, checkpointing} for every variant at batches 32 and 256,
// fp32 and bf16, with and without checkpointing where the model has blocks.
const std::vector<std::string> kAxes = {"model", "batch", "precision", "checkpointing"};

void arguments(benchmark::internal::Benchmark* b) {
  b->ArgNames(kAxes);
  for (int64_t v = 0; v < static_cast<int64_t>(variants().size()); ++v) {
    for (int64_t batch : {32, 256}) {
      for (int64_t precision : {0, 1}) {
        b->Args({v, batch, precision, 0});
        if (variants()[static_cast<size_t>(v)].model.type != "fasttext") {
          b->Args({v, batch, precision, 1});
        }
      }
    }
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_Forward)->Apply(arguments);
BENCHMARK(BM_ForwardBackward)->Apply(arguments);
BENCHMARK(BM_TrainStep)->Apply(arguments);
BENCHMARK(BM_Inference)->Apply(arguments);
BENCHMARK(BM_ToInput)
    ->ArgNames({"bag", "batch"})
    ->ArgsProduct({{0, 1}, {32, 256}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  sift::keep_freed_memory();  // the allocator settings `sift` runs with (main.cc)
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
