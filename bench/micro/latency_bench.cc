// Inference speed of one exported model loaded in C++ (`sift export`, any --dtype or
// --quantize): batch-1 latency p50/p99 (and mean) over one call per text, and texts/s at
// batch 64 (or --batch N), inputs already encoded. bench/python/export_latency.py measures
// the same from Python; bench/dtype_bench.sh runs both for every model type and precision.
// `--order length` batches the texts sorted by length (the least padding a batcher can
// reach: bench/serve_bench.sh's bound on what dynamic batching can gain over batch 1).
//
//   sift-latency-bench --model FILE.pt --texts FILE [--threads N] [--engine E]
//                      [--single N] [--batches N] [--batch N] [--order file|length]
//
// Prints one JSON line: {"p50_us", "p99_us", "mean_us", "batch", "batch_texts_per_s",
// "batch64_texts_per_s" (at batch 64), "engine"}.
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
                               size_t batch_size, size_t limit, bool by_length) {
  TextEncoder encoder = make_encoder(b.task);
  std::vector<std::vector<int64_t>> encoded(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) encoder.encode(texts[i], encoded[i]);
  if (by_length) {
    std::stable_sort(encoded.begin(), encoded.end(),
                     [](const auto& x, const auto& y) { return x.size() < y.size(); });
  }
  std::vector<ModelInput> inputs;
  RawBatch batch;
  for (size_t i = 0; i < encoded.size() && inputs.size() < limit; ++i) {
    batch.add(encoded[i], 0);
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
                       size_t batches, size_t batch_size, bool by_length) {
  const auto single = encode(b, texts, 1, singles, false);
  const auto batched = encode(b, texts, batch_size, batches, by_length);
  torch::NoGradGuard no_grad;
  // The TorchScript executor profiles and optimises its first calls, and again for each of
  // the first few new shapes: not timed (a pass over every input).
  for (const auto& input : single) b.model->forward(input);
  for (const auto& input : batched) b.model->forward(input);
  std::vector<double> us;
  for (const auto& input : single) {
    const auto start = Clock::now();
    b.model->forward(input);
    us.push_back(seconds_since(start) * 1e6);
  }
  double total_us = 0;
  for (double u : us) total_us += u;
  std::sort(us.begin(), us.end());
  // Batch 64: the best of three passes over the batches (on a shared, loaded machine the
  // least disturbed pass is the closest to the model's own speed).
  std::vector<double> rates;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = Clock::now();
    for (const auto& input : batched) b.model->forward(input);
    rates.push_back(static_cast<double>(batched.size() * batch_size) / seconds_since(start));
  }
  std::sort(rates.begin(), rates.end());
  nlohmann::json out = {{"p50_us", us[us.size() / 2]},
                        {"p99_us", us[std::min(us.size() - 1, us.size() * 99 / 100)]},
                        {"mean_us", total_us / static_cast<double>(us.size())},
                        {"batch", batch_size},
                        {"batch_texts_per_s", rates.back()},
                        {"engine", quantized_engine()}};
  if (batch_size == 64) out["batch64_texts_per_s"] = rates.back();
  return out;
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  sift::keep_freed_memory();  // as `sift predict` runs: the same allocator settings
  std::string model, texts_path, engine;
  int threads = 1;
  int blas_threads = 0;  // 0: as --threads, as sift sets them (core/blas_threads.h)
  size_t singles = 1000, batches = 40, batch_size = 64;
  std::string order = "file";
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
    else if (flag == "--batch")
      batch_size = std::stoul(argv[i + 1]);
    else if (flag == "--order")
      order = argv[i + 1];
    else {
      std::cerr << "sift-latency-bench: unknown argument " << flag << "\n";
      return 2;
    }
  }
  if (model.empty() || texts_path.empty() || singles == 0 || batches == 0 || batch_size == 0 ||
      (order != "file" && order != "length")) {
    std::cerr << "usage: sift-latency-bench --model FILE.pt --texts FILE [--threads N] "
                 "[--blas-threads N] [--engine E] [--single N>0] [--batches N>0] "
                 "[--batch N>0] [--order file|length]\n";
    return 2;
  }
  try {
    sift::apply_threads(threads);
    if (blas_threads > 0) sift::set_blas_threads(blas_threads);
    if (!engine.empty()) sift::use_quantized_engine(engine);
    std::vector<std::string> texts;
    std::ifstream in(texts_path);
    for (std::string line; std::getline(in, line);) texts.push_back(line);
    if (texts.size() < batch_size * 5) {
      throw sift::Error(texts_path + " needs at least " + std::to_string(batch_size * 5) +
                        " lines");
    }
    sift::ModelBundle b = sift::load_export(model);
    std::cout << sift::measure(b, texts, singles, batches, batch_size, order == "length").dump()
              << "\n";
  } catch (const sift::Error& e) {
    std::cerr << "sift-latency-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
