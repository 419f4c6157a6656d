// Peak training memory and step time of one model in one precision and checkpointing
// setting. One configuration per process, so that each starts from the same memory
// state; bench/precision.sh runs them interleaved and takes medians.
//
//   sift-precision-bench --model transformer --precision bf16 --checkpointing all
//
// Memory is counted twice:
//  - tensor bytes: every CPU tensor allocation goes through a counting wrapper of
//    LibTorch's CPU allocator; the peak while training minus what was live before the
//    first step (weights, the batch) is what activations, gradients and optimizer state
//    cost; the peak of the timed steps minus what was live after the warm-up (gradients
//    and optimizer state allocated) is the activations' share, the part checkpointing
//    and precision act on. It does not depend on how malloc returns memory to the system.
//  - RSS: the process's VmHWM at the end minus VmRSS before the first step, which also
//    sees oneDNN/OpenBLAS scratch buffers and allocator slack: what the machine must have.
#include <fmt/format.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "config/enums.h"
#include "core/keep_freed_memory.h"
#include "framework/runtime/base/tensor_memory.h"
#include "framework/runtime/compute_threads.h"
#include "framework/train/precision.h"
#include "models/autocast.h"
#include "models/model.h"
#include "models/recompute.h"

namespace {

// A field of /proc/self/status in kB ("VmRSS", "VmHWM").
int64_t status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  sift::keep_freed_memory();  // the allocator settings `sift` runs with (main.cc)
  CLI::App app{"Peak training memory and step time for one precision/checkpointing setting"};
  std::string model_name = "transformer", precision = "fp32", checkpointing = "off";
  int64_t batch = 4, length = 512, steps = 3, warmup = 1, threads = 2, vocab = 10000;
  int64_t layers = 6, dim = 512, heads = 8, ff = 2048, hidden = 512;
  app.add_option("--model", model_name, "transformer or bilstm");
  app.add_option("--precision", precision, "fp32 or bf16");
  app.add_option("--checkpointing", checkpointing, "off, all or every");
  app.add_option("--batch", batch);
  app.add_option("--length", length, "tokens per text");
  app.add_option("--steps", steps, "timed steps");
  app.add_option("--warmup", warmup, "untimed steps first");
  app.add_option("--threads", threads);
  app.add_option("--vocab", vocab);
  app.add_option("--layers", layers);
  app.add_option("--dim", dim);
  app.add_option("--heads", heads);
  app.add_option("--ff", ff);
  app.add_option("--hidden", hidden, "BiLSTM hidden size per direction");
  CLI11_PARSE(app, argc, argv);

  sift::count_tensor_memory();
  sift::apply_threads(threads);
  torch::manual_seed(1);

  sift::ModelConfig c;
  c.dim = dim;
  c.layers = layers;
  c.dropout = 0.1;
  if (model_name == "transformer") {
    c.type = "transformer";
    c.heads = heads;
    c.ff_dim = ff;
    c.max_positions = length;
    c.pooling = "mean";
  } else {
    c.type = "rnn";
    c.cell = "lstm";
    c.bidirectional = true;
    c.hidden = hidden;
    c.pooling = "max";
  }
  sift::ModelShape shape;
  shape.num_ids = vocab;
  shape.num_classes = 4;
  sift::Classifier model = sift::find_model(c.type).create(c, shape);
  model->set_recompute(sift::recompute_policy(
      sift::from_string<sift::GradientCheckpointing>(checkpointing, "--checkpointing"), 2));
  model->train();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-4));

  sift::ModelInput input;
  input.ids = torch::randint(1, vocab, {batch, length}, torch::kInt64);
  input.lengths = torch::full({batch}, length, torch::kInt64);
  const auto labels = torch::randint(0, 4, {batch}, torch::kInt64);

  const int64_t base_tensor = sift::live_tensor_bytes();
  const int64_t base_rss = status_kb("VmRSS");
  sift::reset_peak_tensor_bytes();
  std::vector<double> seconds, cpu;
  int64_t steady_tensor = base_tensor, steady_peak = 0;
  for (int64_t s = 0; s < warmup + steps; ++s) {
    if (s == warmup) {
      // Weights, gradients and optimizer state now exist: what remains is activations.
      steady_tensor = sift::live_tensor_bytes();
      steady_peak = sift::peak_tensor_bytes();
      sift::reset_peak_tensor_bytes();
    }
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_seconds();
    torch::Tensor logits;
    {
      sift::AutocastGuard autocast(sift::from_string<sift::Precision>(precision, "--precision"),
                                   torch::kCPU);
      logits = model->forward(input);
    }
    auto loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat32), labels);
    loss.backward();
    optimizer.step();
    optimizer.zero_grad();
    const std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    if (s >= warmup) {
      seconds.push_back(d.count());
      cpu.push_back(cpu_seconds() - cpu_start);
    }
  }
  int64_t params = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  std::cout << fmt::format(
                   "{{\"model\": \"{}\", \"precision\": \"{}\", \"checkpointing\": \"{}\", "
                   "\"batch\": {}, \"length\": {}, \"threads\": {}, \"parameters\": {}, "
                   "\"step_seconds\": [{}], \"median_step_seconds\": {:.4f}, "
                   "\"median_step_cpu_seconds\": {:.4f}, "
                   "\"base_tensor_mb\": {:.1f}, \"peak_tensor_mb\": {:.1f}, "
                   "\"steady_tensor_mb\": {:.1f}, \"activation_peak_mb\": {:.1f}, "
                   "\"base_rss_mb\": {:.1f}, \"peak_rss_mb\": {:.1f}}}",
                   model_name, precision, checkpointing, batch, length, threads, params,
                   fmt::join(seconds, ", "), median(seconds), median(cpu), base_tensor / 1048576.0,
                   (std::max(steady_peak, sift::peak_tensor_bytes()) - base_tensor) / 1048576.0,
                   (steady_tensor - base_tensor) / 1048576.0,
                   (sift::peak_tensor_bytes() - steady_tensor) / 1048576.0, base_rss / 1024.0,
                   (status_kb("VmHWM") - base_rss) / 1024.0)
            << std::endl;
  return 0;
}
