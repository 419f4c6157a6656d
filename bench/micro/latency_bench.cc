// Inference speed of one exported model loaded in C++ (`sift export`, any --dtype or
// --quantize): batch-1 latency p50/p99 over one call per text, and texts/s at batch 64,
// inputs already encoded. bench/python/export_latency.py measures the same from Python;
// bench/dtype_bench.sh runs both for every model type and precision.
//
//   sift-latency-bench --model FILE.pt --texts FILE [--threads N] [--engine E]
//                      [--single N] [--batches N]
//
// Prints one JSON line: {"p50_us", "p99_us", "batch64_texts_per_s", "engine"}.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/blas_threads.h"
#include "core/error.h"
#include "core/keep_freed_memory.h"
#include "datasets/batch.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/export.h"

namespace sift {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<ModelInput> encode(ModelBundle& b, const std::vector<std::string>& texts,
                               size_t batch_size, size_t limit) {
  TextEncoder encoder = make_encoder(b.task);
  std::vector<ModelInput> inputs;
  RawBatch batch;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < texts.size() && inputs.size() < limit; ++i) {
    encoder.encode(texts[i], ids);
    batch.add(ids, 0);
    if (batch.labels.size() == batch_size) {
      inputs.push_back(to_input(batch, b.task.encoder.kind, torch::kCPU));
      batch.clear();
    }
  }
  return inputs;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

nlohmann::json measure(ModelBundle& b, const std::vector<std::string>& texts, size_t singles,
                       size_t batches) {
  const auto single = encode(b, texts, 1, singles);
  const auto batched = encode(b, texts, 64, batches);
  torch::NoGradGuard no_grad;
  // The TorchScript executor profiles and optimises its first calls: not timed.
  for (size_t i = 0; i < 5; ++i) {
    b.model->forward(single[i % single.size()]);
    b.model->forward(batched[i % batched.size()]);
  }
  std::vector<double> us;
  for (const auto& input : single) {
    const auto start = Clock::now();
    b.model->forward(input);
    us.push_back(seconds_since(start) * 1e6);
  }
  std::sort(us.begin(), us.end());
  // Batch 64: the best of three passes over the batches (on a shared, loaded machine the
  // least disturbed pass is the closest to the model's own speed).
  std::vector<double> rates;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = Clock::now();
    for (const auto& input : batched) b.model->forward(input);
    rates.push_back(static_cast<double>(batched.size() * 64) / seconds_since(start));
  }
  std::sort(rates.begin(), rates.end());
  return {{"p50_us", us[us.size() / 2]},
          {"p99_us", us[std::min(us.size() - 1, us.size() * 99 / 100)]},
          {"batch64_texts_per_s", rates.back()},
          {"engine", quantized_engine()}};
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  sift::keep_freed_memory();  // as `sift predict` runs: the same allocator settings
  std::string model, texts_path, engine;
  int threads = 1;
  int blas_threads = 0;  // 0: as --threads, as sift sets them (core/blas_threads.h)
  size_t singles = 1000, batches = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--model")
      model = argv[i + 1];
    else if (flag == "--texts")
      texts_path = argv[i + 1];
    else if (flag == "--threads")
      threads = std::stoi(argv[i + 1]);
    else if (flag == "--blas-threads")
      blas_threads = std::stoi(argv[i + 1]);
    else if (flag == "--engine")
      engine = argv[i + 1];
    else if (flag == "--single")
      singles = std::stoul(argv[i + 1]);
    else if (flag == "--batches")
      batches = std::stoul(argv[i + 1]);
    else {
      std::cerr << "sift-latency-bench: unknown argument " << flag << "\n";
      return 2;
    }
  }
  if (model.empty() || texts_path.empty() || singles == 0 || batches == 0) {
    std::cerr << "usage: sift-latency-bench --model FILE.pt --texts FILE [--threads N] "
                 "[--blas-threads N] [--engine E] [--single N>0] [--batches N>0]\n";
    return 2;
  }
  try {
    sift::apply_threads(threads);
    if (blas_threads > 0) sift::set_blas_threads(blas_threads);
    if (!engine.empty()) sift::use_quantized_engine(engine);
    std::vector<std::string> texts;
    std::ifstream in(texts_path);
    for (std::string line; std::getline(in, line);) texts.push_back(line);
    if (texts.size() < 64 * 5) throw sift::Error(texts_path + " needs at least 320 lines");
    sift::ModelBundle b = sift::load_export(model);
    std::cout << sift::measure(b, texts, singles, batches).dump() << "\n";
  } catch (const sift::Error& e) {
    std::cerr << "sift-latency-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
