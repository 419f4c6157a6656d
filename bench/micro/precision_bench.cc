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
#include <CLI/CLI.hpp>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "config/enums.h"
#include "framework/train/precision.h"
#include "models/autocast.h"
#include "models/recompute.h"
#include "models/model.h"

namespace {

std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

// LibTorch's default CPU allocation (c10::alloc_cpu: 64-byte aligned) with a 64-byte
// header that holds the size. Some kernels take raw pointers (raw_allocate), which needs
// the data pointer to be the deleter's context: the header keeps the size without a map.
class CountingAllocator final : public c10::Allocator {
 public:
  static constexpr size_t kHeader = 64;

  c10::DataPtr allocate(size_t n) const override {
    auto* base = static_cast<char*>(c10::alloc_cpu(n + kHeader));
    *reinterpret_cast<int64_t*>(base) = static_cast<int64_t>(n);
    const int64_t now = live_bytes += static_cast<int64_t>(n);
    int64_t peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
    void* data = base + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static void release(void* data) {
    if (data == nullptr) return;
    char* base = static_cast<char*>(data) - kHeader;
    live_bytes -= *reinterpret_cast<int64_t*>(base);
    c10::free_cpu(base);
  }
};

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

  static CountingAllocator counting;
  c10::SetCPUAllocator(&counting, /*priority=*/100);
  at::set_num_threads(static_cast<int>(threads));
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

  const int64_t base_tensor = live_bytes.load();
  const int64_t base_rss = status_kb("VmRSS");
  peak_bytes = base_tensor;
  std::vector<double> seconds, cpu;
  int64_t steady_tensor = base_tensor, steady_peak = 0;
  for (int64_t s = 0; s < warmup + steps; ++s) {
    if (s == warmup) {
      // Weights, gradients and optimizer state now exist: what remains is activations.
      steady_tensor = live_bytes.load();
      steady_peak = peak_bytes.exchange(steady_tensor);
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
                   (std::max(steady_peak, peak_bytes.load()) - base_tensor) / 1048576.0,
                   (steady_tensor - base_tensor) / 1048576.0,
                   (peak_bytes.load() - steady_tensor) / 1048576.0, base_rss / 1024.0,
                   (status_kb("VmHWM") - base_rss) / 1024.0)
            << std::endl;
  return 0;
}
